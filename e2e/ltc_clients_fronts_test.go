package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/bchain/coins/ltc"
	"github.com/openexplorer/blockbook/electrum"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/ltcregtest"
)

// The Electrum and Esplora checks of the btcd suite on the litecoind
// chain: every ledger address restored over Electrum, a broadcast and its
// confirmation notified; Esplora's answers for a mempool chain and
// addresses of every kind, then the real client, mempool.js, on them.

// ltcRawTx funds and signs (without sending) a wallet tx paying outs.
func (st *ltcClientsStack) ltcRawTx(t testing.TB, outs map[string]json.Number) string {
	t.Helper()
	var raw string
	ltcCall(t, st.w, &raw, "createrawtransaction", []any{}, outs)
	var funded struct {
		Hex string `json:"hex"`
	}
	ltcCall(t, st.w, &funded, "fundrawtransaction", raw)
	var signed struct {
		Hex      string `json:"hex"`
		Complete bool   `json:"complete"`
	}
	ltcCall(t, st.w, &signed, "signrawtransactionwithwallet", funded.Hex)
	if !signed.Complete {
		t.Fatalf("tx not fully signed: %+v", signed)
	}
	return signed.Hex
}

// txidOfHex asks the node for a raw tx's id.
func (st *ltcClientsStack) txidOfHex(t testing.TB, hexTx string) string {
	t.Helper()
	var dec struct {
		Txid string `json:"txid"`
	}
	ltcCall(t, st.node.Client, &dec, "decoderawtransaction", hexTx)
	return dec.Txid
}

func checkLtcElectrum(t *testing.T, st *ltcClientsStack) {
	st.settle(t)
	led, _ := st.ledger(t)
	c := dialElectrum(t, st.electrum)
	if v := c.ok("server.version", "e2e", []string{"1.4", "1.6"}); !strings.HasPrefix(string(v), `["blockbook-go`) {
		t.Fatalf("server.version: %s", v)
	}
	c.waitTip(led.TipHeight, led.TipHash)
	parser := ltc.NewParser(ltc.RegtestParams)
	shOf := func(addr string) string {
		script, err := parser.AddrDescFromAddress(addr)
		if err != nil {
			t.Fatalf("%s: %v", addr, err)
		}
		return electrum.ScriptHash(script)
	}
	checkElectrumLedger(t, c, led, shOf)

	// A payment broadcast through the server is notified, then confirmed.
	y := st.newAddress(t, st.w, "p2sh-segwit")
	shY := shOf(y)
	if s := c.ok("blockchain.scripthash.subscribe", shY); string(s) != "null" {
		t.Fatalf("status of a fresh address: %s", s)
	}
	hexTx := st.ltcRawTx(t, map[string]json.Number{y: "0.15"})
	txid := st.txidOfHex(t, hexTx)
	if id := c.ok("blockchain.transaction.broadcast", hexTx); string(id) != `"`+txid+`"` {
		t.Fatalf("broadcast: %s, want %s", id, txid)
	}
	c.waitStatus(shY, electrumStatus(txid+":0:"))
	h, _ := st.syncTip(t, 1)
	c.waitStatus(shY, electrumStatus(fmt.Sprintf("%s:%d:", txid, h)))
	if b := c.ok("blockchain.scripthash.get_balance", shY); string(b) != `{"confirmed":15000000,"unconfirmed":0}` {
		t.Errorf("balance after the block: %s", b)
	}
	// The peg-out's recipient: its history is the HogEx.
	var hist []struct {
		TxHash string `json:"tx_hash"`
	}
	c.decode(c.ok("blockchain.scripthash.get_history", shOf(st.pegOutAddr)), &hist)
	if len(hist) != 1 || led.Txs[hist[0].TxHash].Height != st.pegOutBlock {
		t.Errorf("history of the peg-out recipient: %+v", hist)
	}
}

// ltcPrevout is an output's address ("" for none) and value.
type ltcPrevout struct {
	addr  string
	value int64
}

type ltcVerboseTx struct {
	Txid string   `json:"txid"`
	Hex  string   `json:"hex"`
	Vin  []ltcVin `json:"vin"`
	Vout []struct {
		Value        json.Number `json:"value"`
		ScriptPubKey struct {
			Addresses []string `json:"addresses"`
			Address   string   `json:"address"`
		} `json:"scriptPubKey"`
	} `json:"vout"`
}

type ltcVin struct {
	Coinbase string `json:"coinbase"`
	Txid     string `json:"txid"`
	Vout     uint32 `json:"vout"`
}

// ltcTxCache reads verbose txs from the node once each.
type ltcTxCache struct {
	st  *ltcClientsStack
	txs map[string]*ltcVerboseTx
}

func (c *ltcTxCache) get(t testing.TB, id string) *ltcVerboseTx {
	t.Helper()
	if tx := c.txs[id]; tx != nil {
		return tx
	}
	var tx ltcVerboseTx
	ltcCall(t, c.st.node.Client, &tx, "getrawtransaction", id, true)
	c.txs[id] = &tx
	return &tx
}

// out is output n of tx.
func (tx *ltcVerboseTx) out(t testing.TB, n int) ltcPrevout {
	t.Helper()
	o := tx.Vout[n]
	v, err := ltcregtest.Satoshis(o.Value)
	if err != nil {
		t.Fatal(err)
	}
	addr := o.ScriptPubKey.Address
	if addr == "" && len(o.ScriptPubKey.Addresses) == 1 {
		addr = o.ScriptPubKey.Addresses[0]
	}
	return ltcPrevout{addr, v}
}

// ltcAddressFacts computes an address's Esplora stats, histories and
// UTXOs from the node, and checks them against the ledger.
func ltcAddressFacts(t *testing.T, c *ltcTxCache, led *chaingen.Ledger, pending []string, addr string) esploraAddressFacts {
	t.Helper()
	f := esploraAddressFacts{Address: addr}
	unspent := map[string]string{}
	apply := func(id string, height int32, s *esploraStatsFacts) {
		tx := c.get(t, id)
		for _, in := range tx.Vin {
			if in.Coinbase != "" {
				continue
			}
			if p := c.get(t, in.Txid).out(t, int(in.Vout)); p.addr == addr {
				s.SpentTxoCount++
				s.SpentTxoSum += p.value
				delete(unspent, fmt.Sprintf("%s:%d", in.Txid, in.Vout))
			}
		}
		for n := range tx.Vout {
			if o := tx.out(t, n); o.addr == addr {
				s.FundedTxoCount++
				s.FundedTxoSum += o.value
				unspent[fmt.Sprintf("%s:%d", id, n)] = fmt.Sprintf("%s:%d:%d:%d", id, n, o.value, height)
			}
		}
		s.TxCount++
	}
	if al := led.Addresses[addr]; al != nil {
		chain := slices.Clone(al.Txids)
		sort.SliceStable(chain, func(i, j int) bool {
			ti, tj := led.Txs[chain[i]], led.Txs[chain[j]]
			return ti.Height > tj.Height || ti.Height == tj.Height && ti.Position > tj.Position
		})
		for i := len(chain) - 1; i >= 0; i-- {
			apply(chain[i], led.Txs[chain[i]].Height, &f.Chain)
		}
		f.ChainTxids = chain
		if f.Chain.FundedTxoSum != al.Received || f.Chain.SpentTxoSum != al.Sent {
			t.Fatalf("the node's txs of %s disagree with the ledger: %+v vs %+v", addr, f.Chain, al)
		}
	}
	for _, id := range pending {
		tx := c.get(t, id)
		touches := false
		for n := range tx.Vout {
			touches = touches || tx.out(t, n).addr == addr
		}
		for _, in := range tx.Vin {
			touches = touches || in.Coinbase == "" && c.get(t, in.Txid).out(t, int(in.Vout)).addr == addr
		}
		if touches {
			apply(id, 0, &f.Mempool)
			f.MempoolTxids = append([]string{id}, f.MempoolTxids...)
		}
	}
	for _, u := range unspent {
		f.Utxos = append(f.Utxos, u)
	}
	sort.Strings(f.Utxos)
	return f
}

// Long: the scenario (a pending chain of two payments, the Go checks of
// addresses, blocks and MWEB txs, then mempool.js on the same facts) reads
// as one sequence.
func checkLtcEsplora(t *testing.T, st *ltcClientsStack) {
	node := esploraPrereqs(t)
	st.settle(t)
	base := st.esplora
	// Two pending payments a second apart (the mempool orders by the second
	// it first saw a tx).
	a1, a2 := st.newAddress(t, st.w, "bech32"), st.newAddress(t, st.w, "legacy")
	t1 := ltcSend(t, st.w, a1, "0.7")
	waitEsplora(t, base+"/api/mempool/txids", func(b []byte) bool { return strings.Contains(string(b), t1) })
	time.Sleep(1100 * time.Millisecond)
	t2 := ltcSend(t, st.w, a2, "0.3")
	waitEsplora(t, base+"/api/mempool/txids", func(b []byte) bool { return strings.Contains(string(b), t2) })
	pending := []string{t1, t2}

	led, blocks := st.ledger(t)
	checkLtcDifficulty(t, base, int(blocks[len(blocks)-1].Height))
	cache := &ltcTxCache{st: st, txs: map[string]*ltcVerboseTx{}}
	f := &esploraFacts{TipHeight: led.TipHeight, TipHash: led.TipHash, Pending: pending}
	for _, h := range []int32{1, st.mwebBlock, st.pegOutBlock, led.TipHeight} {
		b := ltcBlockOf(t, blocks, h)
		var header, raw string
		ltcCall(t, st.node.Client, &header, "getblockheader", b.Hash, false)
		ltcCall(t, st.node.Client, &raw, "getblock", b.Hash, 0)
		bf := esploraBlockFacts{Height: h, Hash: b.Hash, Header: header, Txids: b.Txids, RawLen: len(raw) / 2}
		if h < led.TipHeight {
			bf.Next = ltcBlockOf(t, blocks, h+1).Hash
		}
		f.Blocks = append(f.Blocks, bf)
	}
	addrs := append(ltcSampleAddresses(t, led, st.pegOutAddr), a1, a2)
	for _, a := range addrs {
		fa := ltcAddressFacts(t, cache, led, pending, a)
		checkEsploraAddress(t, base, fa)
		f.Addresses = append(f.Addresses, fa)
	}
	// Txs of plain blocks go to the client (their hex is the node's);
	// the MWEB ones are checked here: peg-in and HogExes.
	for _, id := range []string{ltcBlockOf(t, blocks, 1).Txids[0], st.opReturnTxid} {
		f.Txs = append(f.Txs, ltcEsploraTx(t, st, cache, led, blocks, pending, id))
	}
	for _, id := range []string{st.pegInTxid, ltcBlockOf(t, blocks, st.mwebBlock).HogEx, ltcBlockOf(t, blocks, st.pegOutBlock).HogEx} {
		want := led.Txs[id]
		var tx struct {
			Txid   string `json:"txid"`
			Fee    int64  `json:"fee"`
			Status struct {
				BlockHeight int32 `json:"block_height"`
			} `json:"status"`
			Vout []struct {
				Value int64 `json:"value"`
			} `json:"vout"`
		}
		esploraJSON(t, base+"/api/tx/"+id, &tx)
		if tx.Txid != id || tx.Fee != want.Fee || tx.Status.BlockHeight != want.Height || len(tx.Vout) != len(cache.get(t, id).Vout) {
			t.Errorf("MWEB tx %s: %+v, ledger %+v", id, tx, want)
		}
	}
	if code, body := esploraGet(t, base+"/api/tx/"+strings.Repeat("0", 64)); code != http.StatusNotFound {
		t.Errorf("unknown tx: %d %s", code, body)
	}
	post := st.ltcRawTx(t, map[string]json.Number{st.newAddress(t, st.w, "bech32"): "0.05"})
	f.PostTx, f.PostTxid = post, st.txidOfHex(t, post)
	runEsploraScript(t, node, base, f)
	waitEsplora(t, base+"/api/mempool/txids", func(b []byte) bool { return strings.Contains(string(b), f.PostTxid) })
	st.settle(t)
}

// ltcEsploraTx is the client's facts of a mined tx.
func ltcEsploraTx(t *testing.T, st *ltcClientsStack, c *ltcTxCache, led *chaingen.Ledger, blocks []ltcregtest.Block, pending []string, id string) esploraTxFacts {
	t.Helper()
	info := led.Txs[id]
	b := ltcBlockOf(t, blocks, info.Height)
	var hdr struct {
		Time int64 `json:"time"`
	}
	ltcCall(t, st.node.Client, &hdr, "getblockheader", b.Hash, true)
	tx := c.get(t, id)
	f := esploraTxFacts{Txid: id, Hex: tx.Hex, Fee: info.Fee, Height: info.Height, BlockHash: b.Hash, BlockTime: hdr.Time,
		Pos: info.Position, Vin: len(tx.Vin), Vout: len(tx.Vout)}
	for n := range tx.Vout {
		f.Outspends = append(f.Outspends, ltcSpender(t, st, c, blocks[info.Height-1:], pending, id, n))
	}
	return f
}

// ltcSpender finds the tx spending an output (the node's UTXO set, the
// mempool's included, says whether it is spent; the blocks from the tx's
// on and the pending txs say by which tx).
func ltcSpender(t *testing.T, st *ltcClientsStack, c *ltcTxCache, blocks []ltcregtest.Block, pending []string, id string, n int) string {
	t.Helper()
	var utxo json.RawMessage
	ltcCall(t, st.node.Client, &utxo, "gettxout", id, n, true)
	if string(utxo) != "null" {
		return ""
	}
	spends := func(tx *ltcVerboseTx) bool {
		return slices.ContainsFunc(tx.Vin, func(in ltcVin) bool { return in.Txid == id && int(in.Vout) == n })
	}
	for _, p := range pending {
		if spends(c.get(t, p)) {
			return p
		}
	}
	for _, b := range blocks {
		var blk struct {
			Tx []ltcVerboseTx `json:"tx"`
		}
		ltcCall(t, st.node.Client, &blk, "getblock", b.Hash, 2)
		for i := range blk.Tx {
			if spends(&blk.Tx[i]) {
				return blk.Tx[i].Txid
			}
		}
	}
	return "" // an OP_RETURN output is in no UTXO set and never spent
}

// checkLtcDifficulty: Litecoin retargets every 2016 blocks of 150 s
// (Litecoin Core's chainparams), so difficulty-adjustment is served.
func checkLtcDifficulty(t *testing.T, base string, tip int) {
	t.Helper()
	var da struct {
		RemainingBlocks    int `json:"remainingBlocks"`
		NextRetargetHeight int `json:"nextRetargetHeight"`
	}
	esploraJSON(t, base+"/api/v1/difficulty-adjustment", &da)
	if da.RemainingBlocks != 2016-tip%2016 || da.NextRetargetHeight != tip-tip%2016+2016 {
		t.Errorf("difficulty-adjustment at tip %d: %+v", tip, da)
	}
}
