package e2e

import (
	"maps"
	"slices"
	"strconv"
	"testing"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/openapicheck"
)

// runesHistory is, per address, the txs that moved its runes, in chain
// order.
type runesHistory map[string][]string

func (h runesHistory) add(tx *wire.MsgTx, addrs ...string) {
	for _, a := range addrs {
		h[a] = append(h[a], tx.TxHash().String())
	}
}

func (h runesHistory) clone() runesHistory {
	out := maps.Clone(h)
	for k, v := range out {
		out[k] = slices.Clone(v)
	}
	return out
}

// runesAnswers checks the runes=true answers (UTXO, xpub, tx, websocket)
// and the rune history against the test's ledger.
type runesAnswers struct {
	t       *testing.T
	base    string
	addrs   []string // every address of the ledger
	xpub    string
	hdAddrs []string // the account's addresses among them
}

// sum adds balances up by rune id, failing on amounts that do not parse.
func (r *runesAnswers) sum(into map[string]uint64, bs []api.RuneBalance, what string) {
	r.t.Helper()
	for _, b := range bs {
		v, err := strconv.ParseUint(b.Amount, 10, 64)
		if err != nil || b.SpacedName == "" {
			r.t.Fatalf("%s: rune balance %+v: %v", what, b, err)
		}
		into[b.ID] += v
	}
}

func (r *runesAnswers) utxoRunes(descriptor string) map[string]uint64 {
	r.t.Helper()
	// confirmed: after the reorg the cenotaph is back in the mempool,
	// spending an output the ledger (of blocks) still counts
	var us []api.Utxo
	getJSON(r.t, r.base+"/api/v2/utxo/"+descriptor+"?runes=true&confirmed=true", 200, &us)
	have := map[string]uint64{}
	for _, u := range us {
		r.sum(have, u.Runes, descriptor+" utxo "+u.Txid)
	}
	var plain []api.Utxo
	getJSON(r.t, r.base+"/api/v2/utxo/"+descriptor, 200, &plain)
	for _, u := range plain {
		if u.Runes != nil {
			r.t.Errorf("%s: utxo %s:%d has runes without runes=true", descriptor, u.Txid, u.Vout)
		}
	}
	return have
}

func (r *runesAnswers) check(ledger runesLedger, hist runesHistory) {
	t := r.t
	t.Helper()
	for _, a := range r.addrs {
		want := ledger[a]
		if want == nil {
			want = map[string]uint64{}
		}
		if have := r.utxoRunes(a); !maps.Equal(have, want) {
			t.Errorf("%s: runes of its UTXOs %v, ledger %v", a, have, want)
		}
		// the history, newest first
		wantTxids := slices.Clone(hist[a])
		slices.Reverse(wantTxids)
		var h api.RuneHistory
		getJSON(t, r.base+"/api/v2/rune-history/"+a, 200, &h)
		// pending ones first: after a reorg btcd takes the disconnected
		// txs back, and the mempool may list them a moment
		if h.UnconfirmedTxs <= len(h.Txids) {
			h.Txids = h.Txids[h.UnconfirmedTxs:]
		}
		if h.Txs != len(wantTxids) || !slices.Equal(h.Txids, wantTxids) {
			t.Errorf("%s: rune history %d %v, ledger %v", a, h.Txs, h.Txids, wantTxids)
		}
		if len(wantTxids) > 1 {
			var p api.RuneHistory
			getJSON(t, r.base+"/api/v2/rune-history/"+a+"?pageSize=1&page=2", 200, &p)
			if p.Page != 2 || p.TotalPages != len(wantTxids) || !slices.Equal(p.Txids, wantTxids[1:2]) {
				t.Errorf("%s: rune history page 2 of 1: %+v, want %v", a, p, wantTxids[1:2])
			}
		}
	}
	// the account: its addresses' runes summed, on the xpub and its UTXOs,
	// over REST and the websocket
	want := map[string]uint64{}
	for _, a := range r.hdAddrs {
		for id, v := range ledger[a] {
			want[id] += v
		}
	}
	var acc api.Address
	getJSON(t, r.base+"/api/v2/xpub/"+r.xpub+"?runes=true&details=basic", 200, &acc)
	if acc.Runes == nil {
		t.Fatal("xpub: no runes with runes=true")
	}
	have := map[string]uint64{}
	r.sum(have, *acc.Runes, "xpub")
	if !maps.Equal(have, want) {
		t.Errorf("xpub runes %v, ledger %v", have, want)
	}
	if have := r.utxoRunes(r.xpub); !maps.Equal(have, want) {
		t.Errorf("xpub UTXOs' runes %v, ledger %v", have, want)
	}
	var plain api.Address
	getJSON(t, r.base+"/api/v2/xpub/"+r.xpub+"?details=basic", 200, &plain)
	if plain.Runes != nil {
		t.Error("xpub: runes without runes=true")
	}
	ws := newWS(t, r.base)
	var wacc api.Address
	ws.ok("getAccountInfo", map[string]any{"descriptor": r.xpub, "details": "basic", "runes": true}, &wacc)
	have = map[string]uint64{}
	if wacc.Runes != nil {
		r.sum(have, *wacc.Runes, "websocket xpub")
	}
	if !maps.Equal(have, want) {
		t.Errorf("websocket getAccountInfo runes %v, ledger %v", have, want)
	}
	var wus []api.Utxo
	ws.ok("getAccountUtxo", map[string]any{"descriptor": r.xpub, "runes": true}, &wus) // the account's outputs are never pending here
	have = map[string]uint64{}
	for _, u := range wus {
		r.sum(have, u.Runes, "websocket utxo")
	}
	if !maps.Equal(have, want) {
		t.Errorf("websocket getAccountUtxo runes %v, ledger %v", have, want)
	}
}

// checkTxs: the etching's premine, the transfer's edicts and remainder,
// and the cenotaph's burn, on the tx answers (REST and websocket).
func (r *runesAnswers) checkTxs(rid string, etch, tr, ceno *wire.MsgTx) {
	t := r.t
	t.Helper()
	one := func(bs []api.RuneBalance) string {
		if len(bs) != 1 || bs[0].ID != rid {
			return "-"
		}
		return bs[0].Amount
	}
	type want struct {
		vin, vout []string // "-": no runes
		burned    string
	}
	cases := []struct {
		tx *wire.MsgTx
		w  want
	}{
		{etch, want{[]string{"-"}, []string{"1000", "-"}, "-"}},
		{tr, want{[]string{"1000"}, []string{"-", "625", "300", "50", "25"}, "-"}},
		{ceno, want{[]string{"10"}, []string{"-", "-"}, "10"}},
	}
	ws := newWS(t, r.base)
	for _, c := range cases {
		txid := c.tx.TxHash().String()
		var rest, wtx, plain api.Tx
		getJSON(t, r.base+"/api/v2/tx/"+txid+"?runes=true", 200, &rest)
		ws.ok("getTransaction", map[string]any{"txid": txid, "runes": true}, &wtx)
		for _, got := range []api.Tx{rest, wtx} {
			var vin, vout []string
			for _, v := range got.Vin {
				vin = append(vin, one(v.Runes))
			}
			for _, v := range got.Vout { // the generator's change last
				vout = append(vout, one(v.Runes))
			}
			if len(vout) > len(c.w.vout) && vout[len(vout)-1] == "-" {
				vout = vout[:len(c.w.vout)]
			}
			if !slices.Equal(vin, c.w.vin) || !slices.Equal(vout, c.w.vout) || one(got.RunesBurned) != c.w.burned {
				t.Errorf("tx %s: runes in %v out %v burned %s, want %+v", txid, vin, vout, one(got.RunesBurned), c.w)
			}
		}
		getJSON(t, r.base+"/api/v2/tx/"+txid, 200, &plain)
		for _, v := range plain.Vout {
			if v.Runes != nil {
				t.Errorf("tx %s: runes without runes=true", txid)
			}
		}
	}
	// details=txs: the history's txs carry their runes
	var h api.RuneHistory
	getJSON(t, r.base+"/api/v2/rune-history/"+r.addrs[3]+"?details=txs", 200, &h)
	if len(h.Transactions) != 1 || h.Transactions[0].Txid != tr.TxHash().String() || one(h.Transactions[0].Vout[2].Runes) != "300" {
		t.Errorf("rune history with details=txs: %+v", h.Transactions)
	}
	// the answers as the OpenAPI document describes them, and bad input
	l := &liveCheck{t: t, c: openAPIChecker(t), base: r.base, asked: map[openapicheck.Op]int{}}
	l.get("/api/v2/tx/"+tr.TxHash().String()+"?runes=true", 200)
	l.get("/api/v2/utxo/"+r.xpub+"?runes=true", 200)
	l.get("/api/v2/xpub/"+r.xpub+"?runes=true", 200)
	l.get("/api/v2/rune-history/"+r.addrs[0]+"?details=txs", 200)
	l.get("/api/v2/rune-history/nope", 400)
	l.get("/api/v2/tx/zz?runes=true", 400)
	l.get("/api/v2/utxo/nope?runes=true", 400)
}
