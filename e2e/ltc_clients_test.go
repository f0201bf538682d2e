package e2e

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/ltcregtest"
)

// TestLtcClients runs what the btcd suite checks for clients on the
// litecoind chain: accounts with Litecoin's key versions, the explorer
// (MWEB blocks included), the mempool and its websocket notifications,
// Electrum and Esplora (with mempool.js) and the Trezor client. The
// subtests share one node, chain and blockbook and run in order; those
// that mine leave the mempool empty for the next.
func TestLtcClients(t *testing.T) {
	st := startLtcClientsStack(t)
	defer func() {
		if t.Failed() {
			t.Logf("blockbook log tail:\n%s\nlitecoind log tail:\n%s", tail(st.inst.logs.String(), 40), st.node.LogTail(20))
		}
	}()
	t.Run("accounts", func(t *testing.T) { checkLtcAccounts(t, st) })
	t.Run("explorer", func(t *testing.T) { checkLtcExplorer(t, st) })
	t.Run("mempool", func(t *testing.T) { checkLtcMempool(t, st) })
	t.Run("electrum", func(t *testing.T) { checkLtcElectrum(t, st) })
	t.Run("esplora", func(t *testing.T) { checkLtcEsplora(t, st) })
	t.Run("trezor", func(t *testing.T) { checkLtcTrezor(t, st) })
	t.Run("mesh", func(t *testing.T) { checkLtcMesh(t, st) })
}

// ltcAccountOracle is what an account must show, from the node's ledger.
type ltcAccountOracle struct {
	Balance, Received, Sent int64
	Txids                   []string          // newest first
	Used                    int               // derived addresses with txs
	Paths                   map[string]string // used address -> path
	Utxos                   []string          // txid:vout:value, sorted
}

// ltcAccountGap bounds the derived addresses the oracle looks at: more
// than Blockbook's gap limit past the highest index the chain pays.
const ltcAccountGap = 30

func ltcAccountOf(t testing.TB, a *chaingen.HDAccount, led *chaingen.Ledger) ltcAccountOracle {
	t.Helper()
	o := ltcAccountOracle{Paths: map[string]string{}}
	seen := map[string]bool{}
	for change := uint32(0); change < 2; change++ {
		for i := uint32(0); i < ltcAccountGap; i++ {
			addr, err := a.Address(change, i)
			if err != nil {
				t.Fatal(err)
			}
			al := led.Addresses[addr]
			if al == nil {
				continue
			}
			o.Used++
			o.Paths[addr] = a.Path(change, i)
			o.Received += al.Received
			o.Sent += al.Sent
			for _, id := range al.Txids {
				if !seen[id] {
					seen[id] = true
					o.Txids = append(o.Txids, id)
				}
			}
			for _, u := range al.Utxos {
				o.Utxos = append(o.Utxos, fmt.Sprintf("%s:%d:%d", u.Txid, u.Vout, u.Value))
			}
		}
	}
	o.Balance = o.Received - o.Sent
	// Newest first; the chain pays each account once per block.
	slices.SortStableFunc(o.Txids, func(x, y string) int {
		return cmp.Or(cmp.Compare(led.Txs[y].Height, led.Txs[x].Height), cmp.Compare(led.Txs[y].Position, led.Txs[x].Position))
	})
	slices.Sort(o.Utxos)
	if o.Used < 4 || len(o.Txids) < 3 {
		t.Fatalf("the chain no longer gives account BIP%d a history: %+v", a.Purpose, o)
	}
	return o
}

// checkLtcAccounts reads every account by its Litecoin key (Ltub, Mtub,
// zpub) and by its descriptor over REST, and by key over the websocket,
// against the node's ledger.
func checkLtcAccounts(t *testing.T, st *ltcClientsStack) {
	led, _ := st.ledger(t)
	base := st.inst.base
	prefixes := map[uint32]string{chaingen.BIP44: "Ltub", chaingen.BIP49: "Mtub", chaingen.BIP84: "zpub"}
	ws := newWS(t, base)
	for _, a := range st.accts {
		want := ltcAccountOf(t, a, led)
		key := ltcXpub(t, a)
		if !strings.HasPrefix(key, prefixes[a.Purpose]) {
			t.Fatalf("BIP%d key %s is not a %s", a.Purpose, key, prefixes[a.Purpose])
		}
		for _, desc := range []string{key, a.Descriptor(true)} {
			var got api.Address
			getJSON(t, base+"/api/v2/xpub/"+url.PathEscape(desc)+"?details=txids&tokens=used&pageSize=100", 200, &got)
			if got.Balance.String() != fmt.Sprint(want.Balance) || got.TotalReceived.String() != fmt.Sprint(want.Received) ||
				got.TotalSent.String() != fmt.Sprint(want.Sent) || got.Txs != len(want.Txids) || got.UsedTokens != want.Used {
				t.Errorf("BIP%d %s: balance %s received %s sent %s txs %d used %d; want %+v", a.Purpose, desc[:12],
					got.Balance, got.TotalReceived, got.TotalSent, got.Txs, got.UsedTokens, want)
			}
			if !slices.Equal(got.Txids, want.Txids) {
				t.Errorf("BIP%d %s: txids %v, want %v", a.Purpose, desc[:12], got.Txids, want.Txids)
			}
			paths := map[string]string{}
			for _, tok := range got.Tokens {
				if tok.Transfers > 0 {
					paths[tok.Name] = tok.Path
				}
			}
			if fmt.Sprint(paths) != fmt.Sprint(want.Paths) {
				t.Errorf("BIP%d %s: used addresses %v, want %v", a.Purpose, desc[:12], paths, want.Paths)
			}
		}
		var utxos []api.Utxo
		getJSON(t, base+"/api/v2/utxo/"+url.PathEscape(key)+"?confirmed=true", 200, &utxos)
		var gotU []string
		for _, u := range utxos {
			gotU = append(gotU, fmt.Sprintf("%s:%d:%s", u.Txid, u.Vout, u.Value))
			if want.Paths[u.Address] != u.Path {
				t.Errorf("BIP%d utxo %s:%d: address %s path %q", a.Purpose, u.Txid, u.Vout, u.Address, u.Path)
			}
		}
		slices.Sort(gotU)
		if !slices.Equal(gotU, want.Utxos) {
			t.Errorf("BIP%d utxos %v, want %v", a.Purpose, gotU, want.Utxos)
		}
		var info api.Address
		ws.ok("getAccountInfo", map[string]any{"descriptor": key, "details": "txids", "pageSize": 100}, &info)
		if info.Balance.String() != fmt.Sprint(want.Balance) || !slices.Equal(info.Txids, want.Txids) {
			t.Errorf("websocket getAccountInfo BIP%d: balance %s txids %v; want %d %v", a.Purpose, info.Balance, info.Txids, want.Balance, want.Txids)
		}
	}
}

// fmtLtc is fmtCoin with the regtest coin's shortcut.
func fmtLtc(sat int64) string { return strings.TrimSuffix(fmtCoin(sat), " rBTC") + " rLTC" }

// ltcBlockOf returns the ledger walk's entry of height h.
func ltcBlockOf(t testing.TB, blocks []ltcregtest.Block, h int32) ltcregtest.Block {
	t.Helper()
	i := slices.IndexFunc(blocks, func(b ltcregtest.Block) bool { return b.Height == h })
	if i < 0 {
		t.Fatalf("no block %d in the ledger walk", h)
	}
	return blocks[i]
}

// checkLtcExplorer renders a plain and an MWEB block, the peg-in, a HogEx
// with a peg-out, an OP_RETURN tx, addresses of every kind and an
// account, with the coin's shortcut, and validates the HTML.
func checkLtcExplorer(t *testing.T, st *ltcClientsStack) {
	led, blocks := st.ledger(t)
	base := st.inst.base
	var pages []*htmlPage
	page := func(path string) *htmlPage {
		t.Helper()
		p := fetchPage(t, base, path)
		if p.status != 200 || p.doc == nil {
			t.Fatalf("%s: status %d", path, p.status)
		}
		if body := string(p.body); strings.Contains(body, "rBTC") || !strings.Contains(body, "rLTC") {
			t.Errorf("%s does not show the coin as rLTC", path)
		}
		pages = append(pages, p)
		return p
	}
	if got := page("/").textOf(t, "best-height"); got != fmtNum(int64(led.TipHeight)) {
		t.Errorf("start page best height %q, want %d", got, led.TipHeight)
	}
	mweb := ltcBlockOf(t, blocks, st.mwebBlock)
	if !mweb.MWEB || mweb.HogEx == "" || mweb.PegIns == 0 {
		t.Fatalf("block %d is not an MWEB block with a peg-in: %+v", st.mwebBlock, mweb)
	}
	for _, b := range []ltcregtest.Block{ltcBlockOf(t, blocks, st.mwebBlock-1), mweb, ltcBlockOf(t, blocks, st.pegOutBlock)} {
		p := page("/block/" + b.Hash)
		if got := p.textOf(t, "block-hash"); got != b.Hash {
			t.Errorf("block %d: hash %q", b.Height, got)
		}
		if got := p.textOf(t, "block-txcount"); got != fmtNum(int64(b.NTx)) {
			t.Errorf("block %d: %s txs, the node's nTx is %d", b.Height, got, b.NTx)
		}
		listed := cardTxids(p.doc)
		for _, id := range b.Txids {
			if !slices.Contains(listed, id) {
				t.Errorf("block %d page does not list tx %s (lists %v)", b.Height, id, listed)
			}
		}
	}
	pegOut := ltcBlockOf(t, blocks, st.pegOutBlock)
	if pegOut.PegOuts == 0 {
		t.Fatalf("block %d has no peg-out: %+v", st.pegOutBlock, pegOut)
	}
	for _, id := range []string{st.pegInTxid, mweb.HogEx, pegOut.HogEx, st.opReturnTxid} {
		info := led.Txs[id]
		p := page("/tx/" + id)
		for _, ch := range [][3]string{
			{"txid", p.textOf(t, "txid"), id},
			{"block", p.textOf(t, "tx-block"), fmtNum(int64(info.Height))},
			{"fee", p.textOf(t, "tx-fee"), fmtLtc(info.Fee)},
		} {
			if ch[1] != ch[2] {
				t.Errorf("tx %s: %s %q, want %q", id, ch[0], ch[1], ch[2])
			}
		}
	}
	if !strings.Contains(string(fetchPage(t, base, "/tx/"+pegOut.HogEx).body), st.pegOutAddr) {
		t.Errorf("the HogEx page of block %d does not show the peg-out to %s", st.pegOutBlock, st.pegOutAddr)
	}
	for _, addr := range ltcSampleAddresses(t, led, st.pegOutAddr) {
		al := led.Addresses[addr]
		p := page("/address/" + addr)
		for _, ch := range [][3]string{
			{"balance", p.textOf(t, "balance"), fmtLtc(al.Balance)},
			{"received", p.textOf(t, "total-received"), fmtLtc(al.Received)},
			{"sent", p.textOf(t, "total-sent"), fmtLtc(al.Sent)},
			{"txs", p.textOf(t, "tx-count"), fmtNum(int64(al.TxCount()))},
		} {
			if ch[1] != ch[2] {
				t.Errorf("%s: %s %q, want %q", addr, ch[0], ch[1], ch[2])
			}
		}
	}
	a := st.accts[0]
	want := ltcAccountOf(t, a, led)
	key := ltcXpub(t, a)
	p := page("/xpub/" + url.PathEscape(key))
	for _, ch := range [][3]string{
		{"key", p.textOf(t, "xpub"), key},
		{"balance", p.textOf(t, "balance"), fmtLtc(want.Balance)},
		{"txs", p.textOf(t, "tx-count"), fmtNum(int64(len(want.Txids)))},
		{"used addresses", p.textOf(t, "used-addresses"), fmtNum(int64(want.Used))},
	} {
		if ch[1] != ch[2] {
			t.Errorf("account page: %s %q, want %q", ch[0], ch[1], ch[2])
		}
	}
	validateHTML(t, pages)
}

// ltcSampleAddresses returns the given addresses, then the busiest ledger
// address of each regtest kind in the order P2PKH (m/n), P2SH (Q), P2WPKH,
// P2WSH.
func ltcSampleAddresses(t testing.TB, led *chaingen.Ledger, extra ...string) []string {
	t.Helper()
	kinds := []struct {
		name string
		is   func(string) bool
	}{
		{"p2pkh", func(a string) bool { return a[0] == 'm' || a[0] == 'n' }},
		{"p2sh", func(a string) bool { return a[0] == 'Q' }},
		{"p2wpkh", func(a string) bool { return strings.HasPrefix(a, "rltc1q") && len(a) < 50 }},
		{"p2wsh", func(a string) bool { return strings.HasPrefix(a, "rltc1q") && len(a) > 50 }},
	}
	var all []string
	for a := range led.Addresses {
		all = append(all, a)
	}
	slices.Sort(all)
	out := slices.Clone(extra)
	for _, k := range kinds {
		// The address of that kind with most txs, for sent and received.
		best := ""
		for _, a := range all {
			if k.is(a) && (best == "" || led.Addresses[a].TxCount() > led.Addresses[best].TxCount()) {
				best = a
			}
		}
		if best == "" {
			t.Fatalf("the chain has no %s address", k.name)
		}
		out = append(out, best)
	}
	return out
}

// checkLtcMempool: a pending payment shows in the address's REST answers
// and is notified over the websocket; MWEB-only txs are not canonical txs
// (no tx, no pending entry); confirmation removes the payment from the
// mempool.
func checkLtcMempool(t *testing.T, st *ltcClientsStack) {
	base := st.inst.base
	x := st.newAddress(t, st.w, "bech32")
	ws := newWS(t, base)
	var sub struct{ Subscribed bool }
	addrs := ws.ok("subscribeAddresses", map[string]any{"addresses": []string{x}, "newBlockTxs": true}, &sub)
	blocksSub := ws.ok("subscribeNewBlock", nil, &sub)

	id := ltcSend(t, st.w, x, "0.7")
	var n addrNote
	ws.notification(addrs, &n)
	if n.Address != x || n.Tx.Txid != id || n.Tx.BlockHeight != -1 || n.Tx.Confirmations != 0 {
		t.Fatalf("address notification: %+v", n)
	}
	a := waitAddress(t, base, x, func(a *api.Address) bool { return a.UnconfirmedTxs == 1 })
	if amount(a.UnconfirmedBalance) != "70000000" || amount(a.Balance) != "0" || !slices.Equal(a.Txids, []string{id}) {
		t.Fatalf("address with a pending payment: %+v", a)
	}
	p := fetchPage(t, base, "/address/"+x)
	for _, ch := range [][3]string{
		{"balance", p.textOf(t, "balance"), "0 rLTC"},
		{"unconfirmed balance", p.textOf(t, "unconfirmed-balance"), "+0.7 rLTC"},
		{"unconfirmed txs", p.textOf(t, "unconfirmed-txs"), "1"},
		{"txs", p.textOf(t, "tx-count"), "0"},
	} {
		if ch[1] != ch[2] {
			t.Errorf("explorer page of an address with a pending payment: %s %q, want %q", ch[0], ch[1], ch[2])
		}
	}
	var wtx struct {
		Fee float64 `json:"fee"`
	}
	ltcCall(t, st.w, &wtx, "gettransaction", id)
	var tx api.Tx
	getJSON(t, base+"/api/v2/tx/"+id, 200, &tx)
	if tx.BlockHeight != -1 || tx.Fees == nil || tx.Fees.String() != fmt.Sprint(int64(-wtx.Fee*1e8+0.5)) {
		t.Fatalf("pending tx: height %d fees %v, the wallet paid %v", tx.BlockHeight, tx.Fees, -wtx.Fee)
	}

	// An MWEB-only tx (MWEB wallet to MWEB address) and a peg-in.
	mwebOnly := ltcSend(t, st.mw, st.newAddress(t, st.mw, "mweb"), "0.5")
	pegIn := ltcSend(t, st.node.Wallet("peg3"), st.newAddress(t, st.mw, "mweb"), "0.4")
	// Two resyncs later the second one surely started after the sends.
	sent := time.Now()
	sys := waitStatus(t, base, func(s *api.SystemInfo) bool { return s.Blockbook.LastMempoolTime.After(sent) })
	first := sys.Blockbook.LastMempoolTime
	sys = waitStatus(t, base, func(s *api.SystemInfo) bool { return s.Blockbook.LastMempoolTime.After(first) })
	if !sys.Blockbook.InSyncMempool || sys.Blockbook.MempoolSize != 2 {
		t.Fatalf("mempool with a payment, a peg-in and an MWEB-only tx: in sync %v, size %d (want the 2 canonical txs)",
			sys.Blockbook.InSyncMempool, sys.Blockbook.MempoolSize)
	}
	getJSON(t, base+"/api/v2/tx/"+pegIn, 200, &tx)
	if tx.BlockHeight != -1 {
		t.Fatalf("pending peg-in: %+v", tx)
	}
	checkNoTx(t, base, mwebOnly)

	// Mining confirms them: notifications, and the mempool empties.
	h, hash := st.syncTip(t, 1)
	var bn blockNote
	ws.notification(blocksSub, &bn)
	if bn.Height != uint32(h) || bn.Hash != hash {
		t.Fatalf("block notification %+v, want %d %s", bn, h, hash)
	}
	ws.notification(addrs, &n)
	if n.Address != x || n.Tx.Txid != id || n.Tx.BlockHeight != int64(h) || n.Tx.Confirmations != 1 {
		t.Fatalf("confirmation notification: %+v", n)
	}
	a = waitAddress(t, base, x, func(a *api.Address) bool { return a.UnconfirmedTxs == 0 })
	if a.Txs != 1 || amount(a.Balance) != "70000000" {
		t.Fatalf("address after the block: %+v", a)
	}
	mined := time.Now()
	sys = waitStatus(t, base, func(s *api.SystemInfo) bool { return s.Blockbook.LastMempoolTime.After(mined) })
	if sys.Blockbook.MempoolSize != 0 {
		t.Fatalf("mempool after the block: size %d", sys.Blockbook.MempoolSize)
	}
	getJSON(t, base+"/api/v2/tx/"+pegIn, 200, &tx)
	if tx.BlockHeight != int64(h) {
		t.Fatalf("mined peg-in at height %d, want %d", tx.BlockHeight, h)
	}
	checkNoTx(t, base, mwebOnly)
}

// checkNoTx requires the API to know no tx id: an MWEB-only tx has no tx
// page. The answer is a client error, never a server error.
func checkNoTx(t testing.TB, base, id string) {
	t.Helper()
	checkUnknownTx(t, base, id)
	if p := fetchPage(t, base, "/tx/"+id); p.status == 200 || p.status >= 500 {
		t.Fatalf("explorer page of the MWEB-only tx %s: status %d", id, p.status)
	}
}

// checkUnknownTx requires the REST API to answer a client error for id.
func checkUnknownTx(t testing.TB, base, id string) {
	t.Helper()
	if code, _ := tryGet(base+"/api/v2/tx/"+id, nil); code != 400 && code != 404 {
		t.Fatalf("tx %s: status %d, want a client error", id, code)
	}
}

// settle mines the mempool's txs, if any, so the next subtest starts
// with an empty mempool.
func (st *ltcClientsStack) settle(t testing.TB) {
	t.Helper()
	var pool []string
	ltcCall(t, st.node.Client, &pool, "getrawmempool")
	if len(pool) > 0 {
		st.syncTip(t, 1)
	}
	mined := time.Now()
	waitStatus(t, st.inst.base, func(s *api.SystemInfo) bool {
		return s.Blockbook.LastMempoolTime.After(mined) && s.Blockbook.MempoolSize == 0
	})
}
