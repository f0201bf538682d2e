package e2e

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/tools/chaingen"
)

// mempool.space's websocket subscriptions that mempool.js 3.0.0 does not
// offer, over a raw client on TestE2EMempoolSpaceWebsocket's stack:
// track-txs, track-scriptpubkeys, track-mempool, track-mempool-txids and
// track-mempool-block's deltas, through a payment, a second payment, a
// real replacement and the block that mines it.

// mempoolTxids is mempool.space's MempoolDeltaTxids.
type mempoolTxids struct {
	Sequence uint64   `json:"sequence"`
	Added    []string `json:"added"`
	Removed  []string `json:"removed"`
	Mined    []string `json:"mined"`
	Replaced []struct {
		Replaced string `json:"replaced"`
		By       string `json:"by"`
	} `json:"replaced"`
}

// projectedBlockTxs is projected-block-transactions, whole or a delta.
type projectedBlockTxs struct {
	Index             int                 `json:"index"`
	Sequence          uint64              `json:"sequence"`
	BlockTransactions [][]any             `json:"blockTransactions"`
	Delta             *projectedBlockDiff `json:"delta"`
}

type projectedBlockDiff struct {
	Added   [][]any  `json:"added"`
	Removed []string `json:"removed"`
	Changed [][]any  `json:"changed"`
}

type trackedTx struct {
	ReplacedBy string `json:"replacedBy"`
	Confirmed  *bool  `json:"confirmed"`
	Position   *struct {
		Block int     `json:"block"`
		VSize float64 `json:"vsize"`
	} `json:"position"`
	Cpfp *struct {
		Ancestors            []any   `json:"ancestors"`
		EffectiveFeePerVsize float64 `json:"effectiveFeePerVsize"`
		Sigops               int     `json:"sigops"`
		AdjustedVsize        float64 `json:"adjustedVsize"`
	} `json:"cpfp"`
}

// mempool.space's TransactionFlags bits the check reads.
const (
	flagRBF    = 1 << 0
	flagV2     = 1 << 3
	flagP2WPKH = 1 << 12
	flagSigAll = 1 << 40
	flagSigDef = 1 << 43
)

func checkWSSubscriptions(t *testing.T, st *demoStack, esplora string) {
	start := time.Now()
	defer func() { t.Logf("websocket subscriptions checked in %v", time.Since(start).Round(time.Millisecond)) }()
	g := st.g
	// Without fiat rates, prices say so.
	for _, path := range []string{"/api/v1/prices", "/api/v1/historical-price?timestamp=1700000000"} {
		if code, body := esploraGet(t, esplora+path); code != 404 || !strings.Contains(string(body), "no fiat rates") {
			t.Errorf("GET %s without fiat rates: %d %s", path, code, body)
		}
	}
	ws := dialMpWS(t, esplora)

	// Bad input: an error each, the connection keeps serving.
	tooMany := make([]string, 101)
	for i := range tooMany {
		tooMany[i] = fmt.Sprintf("%064x", i)
	}
	for _, bad := range []struct {
		frame any
		key   string
		text  string
	}{
		{map[string]any{"track-txs": "abc"}, "track-txs-error", "incorrect track-txs format"},
		{map[string]any{"track-txs": tooMany}, "track-txs-error", "maximum of 100 transactions"},
		{map[string]any{"track-txs": []any{"xyz", 5}}, "track-txs-error", "2 entries are not txids"},
		{map[string]any{"track-scriptpubkeys": "00"}, "track-scriptpubkeys-error", "array of output scripts"},
		{map[string]any{"track-scriptpubkeys": []string{"zz"}}, "track-scriptpubkeys-error", "not scripts in hex"},
		{map[string]any{"track-mempool": "yes"}, "track-mempool-error", "send true or false"},
		{map[string]any{"track-mempool-txids": 1}, "track-mempool-txids-error", "send true or false"},
	} {
		ws.send(bad.frame)
		m := ws.await(fmt.Sprintf("bad frame %v", bad.frame), []string{bad.key}, nil)
		if !strings.Contains(string(m[bad.key]), bad.text) {
			t.Errorf("bad frame %v: %s, want %q", bad.frame, m[bad.key], bad.text)
		}
	}

	addr := mempoolAddr(t, g, chaingen.P2WPKH, 90)
	script, err := g.PkScript(chaingen.P2WPKH, 9090)
	if err != nil {
		t.Fatal(err)
	}
	spk := hex.EncodeToString(script)
	ws.send(map[string]any{"track-scriptpubkeys": []string{spk}})
	ws.send(map[string]any{"track-mempool-txids": true})
	ws.send(map[string]any{"track-mempool": true})
	// Block 0 on a client of its own, whose messages carry nothing else.
	blk := dialMpWS(t, esplora)
	blk.send(map[string]any{"track-mempool-block": 0})
	first := decode[projectedBlockTxs](t, blk.await("track-mempool-block", []string{"projected-block-transactions"}, nil)["projected-block-transactions"])
	if first.Index != 0 || first.Delta != nil || first.BlockTransactions == nil {
		t.Fatalf("projected-block-transactions on tracking: %+v", first)
	}
	held := map[string]bool{}
	for _, tx := range first.BlockTransactions {
		held[tx[0].(string)] = true
	}
	// apply keeps the client's copy of block 0 current, whole or by delta.
	apply := func(p projectedBlockTxs) {
		if p.Delta == nil {
			held = map[string]bool{}
			for _, tx := range p.BlockTransactions {
				held[tx[0].(string)] = true
			}
			return
		}
		for _, id := range p.Delta.Removed {
			if !held[id] {
				t.Errorf("delta removes %s, which the client does not hold", id)
			}
			delete(held, id)
		}
		for _, tx := range p.Delta.Added {
			id := tx[0].(string)
			if held[id] {
				t.Errorf("delta adds %s, which the client holds", id)
			}
			held[id] = true
		}
	}
	// awaitBlock0 applies block 0's updates until it holds want exactly.
	sawDelta := false
	awaitBlock0 := func(what string, want ...string) {
		t.Helper()
		blk.await(what, []string{"projected-block-transactions"}, func(m map[string]json.RawMessage) bool {
			p := decode[projectedBlockTxs](t, m["projected-block-transactions"])
			apply(p)
			sawDelta = sawDelta || p.Delta != nil
			if len(held) != len(want) {
				return false
			}
			for _, id := range want {
				if !held[id] {
					return false
				}
			}
			return true
		})
	}

	// A payment to the tracked script.
	pay, err := g.CreatePayment([]chaingen.Output{{Address: addr, Value: 120_000}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	id := sendTx(t, st, pay)
	m := ws.await("multi-scriptpubkey-transactions", []string{"multi-scriptpubkey-transactions"}, nil)
	bySpk := decode[map[string]mpAddressTxs](t, m["multi-scriptpubkey-transactions"])
	if e, ok := bySpk[spk]; !ok || len(bySpk) != 1 || len(e.Mempool) != 1 || e.Mempool[0].Txid != id || len(e.Confirmed) != 0 {
		t.Fatalf("multi-scriptpubkey-transactions: %s", m["multi-scriptpubkey-transactions"])
	}
	m = ws.await("mempool-txids", []string{"mempool-txids", "mempool-transactions"}, func(m map[string]json.RawMessage) bool {
		return slices.Contains(decode[mempoolTxids](t, m["mempool-txids"]).Added, id)
	})
	full := decode[struct {
		Added []mpTx `json:"added"`
	}](t, m["mempool-transactions"])
	if len(full.Added) != 1 || full.Added[0].Txid != id {
		t.Fatalf("mempool-transactions: %s", m["mempool-transactions"])
	}
	awaitBlock0("block 0 holds the payment", id)

	// track-txs places it.
	ws.send(map[string]any{"track-txs": []string{id}})
	m = ws.await("tracked-txs", []string{"tracked-txs"}, nil)
	tracked := decode[map[string]trackedTx](t, m["tracked-txs"])
	if e, ok := tracked[id]; !ok || e.Position == nil || e.Position.Block != 0 || e.Confirmed == nil || *e.Confirmed {
		t.Fatalf("tracked-txs: %s", m["tracked-txs"])
	}

	// A second payment: block 0's update is a delta adding it, with its
	// flags (version 2, RBF signalled by the generator's wallet, P2WPKH).
	pay2, err := g.CreatePayment([]chaingen.Output{{Address: mempoolAddr(t, g, chaingen.P2WPKH, 91), Value: 90_000}}, 5)
	if err != nil {
		t.Fatal(err)
	}
	id2 := sendTx(t, st, pay2)
	// The rebuild's tracked-txs tells the tracked tx's CPFP figures (the
	// first time since it is tracked).
	m = ws.await("tracked-txs with cpfp", []string{"tracked-txs"}, func(m map[string]json.RawMessage) bool {
		return decode[map[string]trackedTx](t, m["tracked-txs"])[id].Cpfp != nil
	})
	if c := decode[map[string]trackedTx](t, m["tracked-txs"])[id].Cpfp; c.AdjustedVsize <= 0 || c.EffectiveFeePerVsize <= 0 || c.Ancestors == nil {
		t.Errorf("tracked-txs cpfp: %s", m["tracked-txs"])
	}
	var flags2 float64
	blk.await("delta adding the second payment", []string{"projected-block-transactions"}, func(m map[string]json.RawMessage) bool {
		p := decode[projectedBlockTxs](t, m["projected-block-transactions"])
		apply(p)
		if p.Delta == nil {
			return false
		}
		sawDelta = true
		for _, tx := range p.Delta.Added {
			if tx[0] == id2 {
				flags2 = tx[5].(float64)
				return true
			}
		}
		return false
	})
	// The wallet signs with SIGHASH_ALL (ECDSA) or SIGHASH_DEFAULT (a
	// 64-byte signature of a taproot key-path spend).
	if f := uint64(flags2); f&flagV2 == 0 || f&flagP2WPKH == 0 || f&(flagSigAll|flagSigDef) == 0 {
		t.Errorf("flags of %s: %b, want v2, p2wpkh and a sighash bit set", id2, f)
	}
	t.Logf("projected tx flags of a wallet payment: %#x", uint64(flags2))

	// A real replacement of the first payment.
	repl := replaceAt(t, g, pay, 12)
	ws.send(map[string]any{"track-txs": []string{id}})
	ws.await("tracked-txs again", []string{"tracked-txs"}, nil)
	idR := sendTx(t, st, repl)
	m = ws.await("mempool-txids with the replacement", []string{"mempool-txids"}, func(m map[string]json.RawMessage) bool {
		d := decode[mempoolTxids](t, m["mempool-txids"])
		return slices.Contains(d.Removed, id)
	})
	d := decode[mempoolTxids](t, m["mempool-txids"])
	if len(d.Replaced) != 1 || d.Replaced[0].Replaced != id || d.Replaced[0].By != idR {
		t.Errorf("mempool-txids replaced: %s", m["mempool-txids"])
	}
	if _, ok := m["tracked-txs"]; !ok { // usually the same push
		m = ws.await("tracked-txs replacedBy", []string{"tracked-txs"}, func(m map[string]json.RawMessage) bool {
			return decode[map[string]trackedTx](t, m["tracked-txs"])[id].ReplacedBy != ""
		})
	}
	if got := decode[map[string]trackedTx](t, m["tracked-txs"])[id].ReplacedBy; got != idR {
		t.Fatalf("tracked-txs replacedBy %s, want %s", got, idR)
	}
	awaitBlock0("block 0 after the replacement", id2, idR)
	if !sawDelta {
		t.Errorf("block 0 was never updated by a delta")
	}

	// The block mining the replacement: mined, confirmed, the script's tx.
	ws.send(map[string]any{"track-txs": []string{idR}})
	ws.await("tracked-txs of the replacement", []string{"tracked-txs"}, nil)
	if _, err := g.AddBlock(repl); err != nil {
		t.Fatal(err)
	}
	submit(t, g, st.node, g.Height())
	m = ws.await("mined", []string{"mempool-txids", "tracked-txs", "multi-scriptpubkey-transactions"}, func(m map[string]json.RawMessage) bool {
		return slices.Contains(decode[mempoolTxids](t, m["mempool-txids"]).Mined, idR)
	})
	if e := decode[map[string]trackedTx](t, m["tracked-txs"])[idR]; e.Confirmed == nil || !*e.Confirmed {
		t.Errorf("tracked-txs on the block: %s", m["tracked-txs"])
	}
	bySpk = decode[map[string]mpAddressTxs](t, m["multi-scriptpubkey-transactions"])
	if e := bySpk[spk]; len(e.Confirmed) != 1 || e.Confirmed[0].Txid != idR || !e.Confirmed[0].Status.Confirmed {
		t.Errorf("multi-scriptpubkey-transactions on the block: %s", m["multi-scriptpubkey-transactions"])
	}
	awaitBlock0("block 0 after the block", id2)

	// live-2h-chart: a sample of the mempool (the second payment) every
	// StatsInterval (a second here, a minute by default).
	chart := dialMpWS(t, esplora)
	chart.send(map[string]any{"action": "want", "data": []string{"live-2h-chart"}})
	m = chart.await("live-2h-chart", []string{"live-2h-chart"}, nil)
	stat := decode[struct {
		Added             int64     `json:"added"`
		Count             int       `json:"count"`
		VBytesPerSecond   *int      `json:"vbytes_per_second"`
		TotalFee          uint64    `json:"total_fee"`
		MempoolByteWeight float64   `json:"mempool_byte_weight"`
		MinFee            float64   `json:"min_fee"`
		VSizes            []float64 `json:"vsizes"`
	}](t, m["live-2h-chart"])
	var vsize float64
	for _, v := range stat.VSizes {
		vsize += v
	}
	if stat.Count != 1 || len(stat.VSizes) != 39 || vsize <= 0 || stat.MempoolByteWeight != 4*vsize || stat.TotalFee == 0 ||
		stat.VBytesPerSecond == nil || stat.Added < time.Now().Unix()-60 || stat.VSizes[5] != vsize {
		t.Errorf("live-2h-chart (one tx at 5 sat/vB, in the 5-6 bin): %s", m["live-2h-chart"])
	}
	// The mined tx left the mempool as mined, not as removed.
	for _, k := range ws.kept {
		if raw, ok := k["mempool-txids"]; ok && slices.Contains(decode[mempoolTxids](t, raw).Removed, idR) {
			t.Errorf("mempool-txids lists the mined %s as removed: %s", idR, raw)
		}
	}
	ws.send(map[string]any{"track-mempool": false, "track-mempool-txids": false, "track-txs": []string{}, "track-scriptpubkeys": []string{}})
}

// replaceAt builds a replacement of pay paying feeRate (sat/vB).
func replaceAt(t *testing.T, g *chaingen.Generator, pay *wire.MsgTx, feeRate int64) *wire.MsgTx {
	t.Helper()
	prevs, err := g.Prevouts(pay)
	if err != nil {
		t.Fatal(err)
	}
	repl, err := g.Replace(pay, prevs, nil, feeRate)
	if err != nil {
		t.Fatal(err)
	}
	return repl
}
