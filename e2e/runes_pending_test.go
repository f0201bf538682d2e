package e2e

import (
	"slices"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/regtest"
)

// checkPending sends pend, which moves 100 of rid from `from`'s output to
// `to` (the rest back to from), to the node's mempool and checks that the
// runes=true answers show it as pending (blockHeight -1) and ord's
// /address does not (ord indexes blocks only). rune-history paging with
// pending txs is Blockbook's address paging: they top the first page.
func (r *runesAnswers) checkPending(node *regtest.Node, pend *wire.MsgTx, rid, from, to, ordBase string, ledger runesLedger) {
	t := r.t
	t.Helper()
	if _, err := node.SendRawTransaction(t.Context(), pend); err != nil {
		t.Fatal(err)
	}
	txid := pend.TxHash().String()
	// the mempool follower has it (before, a tx answer comes from the
	// node, unknown to the mempool, without runes)
	waitAddress(t, r.base, to, func(a *api.Address) bool { return a.UnconfirmedTxs == 1 })
	var tx api.Tx
	getJSON(t, r.base+"/api/v2/tx/"+txid+"?runes=true", 200, &tx)
	if tx.BlockHeight != -1 {
		t.Errorf("pending tx %s at height %d", txid, tx.BlockHeight)
	}
	one := func(bs []api.RuneBalance) string {
		if len(bs) != 1 || bs[0].ID != rid {
			return "-"
		}
		return bs[0].Amount
	}
	if len(tx.Vin) != 1 || one(tx.Vin[0].Runes) != "300" || len(tx.Vout) < 3 ||
		one(tx.Vout[0].Runes) != "200" || one(tx.Vout[1].Runes) != "-" || one(tx.Vout[2].Runes) != "100" {
		t.Errorf("pending tx %s: %+v", txid, tx)
	}
	// the addresses: confirmed runes unchanged, the pending delta signed
	for _, c := range []struct{ addr, delta string }{{from, "-100"}, {to, "100"}} {
		var a api.Address
		getJSON(t, r.base+"/api/v2/address/"+c.addr+"?runes=true&details=basic", 200, &a)
		if a.UnconfirmedRunes == nil || one(*a.UnconfirmedRunes) != c.delta {
			t.Errorf("%s: unconfirmedRunes %+v, want %s", c.addr, a.UnconfirmedRunes, c.delta)
		}
		have := map[string]uint64{}
		if a.Runes != nil {
			r.sum(have, *a.Runes, c.addr)
		}
		if want := ledger[c.addr]; have[rid] != want[rid] {
			t.Errorf("%s: confirmed runes %v moved by a pending tx, ledger %v", c.addr, have, want)
		}
	}
	// the pending outputs in the UTXO answer, with their runes
	var us []api.Utxo
	getJSON(t, r.base+"/api/v2/utxo/"+to+"?runes=true", 200, &us)
	i := slices.IndexFunc(us, func(u api.Utxo) bool { return u.Txid == txid })
	if i < 0 || us[i].Height > 0 || one(us[i].Runes) != "100" {
		t.Errorf("utxo %s: %+v, want the pending output with 100 runes", to, us)
	}
	// the rune history lists it first, pending, on page 1 only
	var h api.RuneHistory
	getJSON(t, r.base+"/api/v2/rune-history/"+to+"?details=txs", 200, &h)
	if h.UnconfirmedTxs != 1 || len(h.Transactions) == 0 || h.Transactions[0].Txid != txid ||
		h.Transactions[0].BlockHeight != -1 || one(h.Transactions[0].Vout[2].Runes) != "100" {
		t.Errorf("rune history of %s: %d pending, %+v", to, h.UnconfirmedTxs, h.Transactions)
	}
	var p1 api.RuneHistory // the pending tx comes on top of the page's confirmed one
	getJSON(t, r.base+"/api/v2/rune-history/"+from+"?pageSize=1", 200, &p1)
	if p1.UnconfirmedTxs != 1 || p1.Txs != 1 || len(p1.Txids) != 2 || p1.Txids[0] != txid {
		t.Errorf("rune history of %s: %+v", from, p1)
	}
	// ord's address answer is the blocks' (ord does not read the mempool)
	r.checkOrdAddresses(ordBase, ledger)
}
