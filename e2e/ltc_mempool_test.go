package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/tools/ltcregtest"
)

// The mempool on litecoind, which pushes nothing (no ZMQ): a BIP125
// replacement made by the node's own wallet (bumpfee) and a confirmed tx
// that a reorg puts back into the node's mempool must both show in our
// answers as the node has them.

// startLtcMempoolStack is startLtcStack with the mempool resynced every
// half second (litecoind announces nothing) and new-tx subscriptions on.
func startLtcMempoolStack(t *testing.T, nodeArgs ...string) *ltcStack {
	t.Helper()
	st := startLtcStack(t, nil, func(o *app.Options) {
		o.ResyncMempoolMs = 500
		o.EnableSubNewTx = true
	}, nodeArgs...)
	waitMempoolInSync(t, st.inst.base)
	return st
}

// TestLtcBumpFee: litecoind's wallet pays x with a replaceable tx, then
// bumpfee replaces it. The old txid leaves our mempool, the replacement
// takes its place at x (unconfirmed balance and txs), and a websocket
// subscriber of x is told about the replacement.
//
// litecoind 0.21.2.1 refuses every replacement unless started with
// -mempoolreplacement=1 (its default is 0, unlike Bitcoin Core's): its
// bumpfee then returns the new txid, but the node's mempool keeps the
// original (txn-mempool-conflict). ltcregtest's TestBumpFeePolicy shows
// that on the node alone; here the node accepts replacements.
func TestLtcBumpFee(t *testing.T) {
	st := startLtcMempoolStack(t, "-mempoolreplacement=1")
	base, w := st.inst.base, st.node.Wallet(ltcregtest.W)
	var x string
	ltcCall(t, w, &x, "getnewaddress", "", "bech32")
	ws := newWS(t, base)
	var sub struct{ Subscribed bool }
	addrs := ws.ok("subscribeAddresses", map[string]any{"addresses": []string{x}}, &sub)

	var old string
	// sendtoaddress address amount comment comment_to subtractfee replaceable
	ltcCall(t, w, &old, "sendtoaddress", x, json.Number("0.7"), "", "", false, true)
	var n addrNote
	ws.notification(addrs, &n)
	if n.Address != x || n.Tx.Txid != old || n.Tx.BlockHeight != -1 {
		t.Fatalf("notification of the replaceable payment: %+v", n)
	}
	a := waitAddress(t, base, x, func(a *api.Address) bool { return a.UnconfirmedTxs == 1 })
	if amount(a.UnconfirmedBalance) != "70000000" || !slices.Equal(a.Txids, []string{old}) {
		t.Fatalf("address with the replaceable payment: %+v", a)
	}

	var bumped struct {
		Txid    string  `json:"txid"`
		OrigFee float64 `json:"origfee"`
		Fee     float64 `json:"fee"`
	}
	ltcCall(t, w, &bumped, "bumpfee", old)
	if bumped.Txid == "" || bumped.Txid == old || bumped.Fee <= bumped.OrigFee {
		t.Fatalf("bumpfee: %+v", bumped)
	}
	var pool []string
	ltcCall(t, st.node.Client, &pool, "getrawmempool")
	if !slices.Contains(pool, bumped.Txid) || slices.Contains(pool, old) {
		t.Fatalf("litecoind's mempool after bumpfee: %v (old %s, new %s)", pool, old, bumped.Txid)
	}
	bumpedAt := time.Now()

	ws.notification(addrs, &n)
	if n.Address != x || n.Tx.Txid != bumped.Txid || n.Tx.BlockHeight != -1 {
		t.Fatalf("notification after bumpfee: %+v, want the replacement %s", n, bumped.Txid)
	}
	t.Logf("replacement notified %v after bumpfee", time.Since(bumpedAt).Round(time.Millisecond))
	a = waitAddress(t, base, x, func(a *api.Address) bool { return slices.Equal(a.Txids, []string{bumped.Txid}) })
	if a.UnconfirmedTxs != 1 || amount(a.UnconfirmedBalance) != "70000000" || amount(a.Balance) != "0" {
		t.Fatalf("address after bumpfee: %+v", a)
	}
	checkUnknownTx(t, base, old)
	var tx api.Tx
	getJSON(t, base+"/api/v2/tx/"+bumped.Txid, 200, &tx)
	if tx.BlockHeight != -1 || tx.Fees == nil || tx.Fees.String() != ltcSats(bumped.Fee) {
		t.Fatalf("replacement: height %d fees %v, bumpfee reported %v", tx.BlockHeight, tx.Fees, bumped.Fee)
	}

	// Mined, the replacement is what x received.
	h, hash := mineLtc(t, st.node, 1)
	waitTip(t, base, h, hash, st.inst.logs)
	a = waitAddress(t, base, x, func(a *api.Address) bool { return a.UnconfirmedTxs == 0 })
	if a.Txs != 1 || amount(a.Balance) != "70000000" || !slices.Equal(a.Txids, []string{bumped.Txid}) {
		t.Fatalf("address after the block: %+v", a)
	}
}

// ltcSats converts an amount litecoind reports in LTC to satoshis.
func ltcSats(v float64) string {
	return strconv.FormatInt(int64(v*1e8+0.5), 10)
}

// TestLtcReorgBackToMempool: a wallet payment to x is mined, then its
// block is invalidated, so litecoind takes the payment back into its
// mempool. First with nothing on top: the node's chain is a prefix of the
// index's and the node is current, so the index rolls back to the node's
// tip (as Blockbook does). Then, mined again, with a block without it
// replacing its block (a reorg of depth 1). Each time the payment is
// pending again: x's confirmed history loses it, its unconfirmed balance
// and txs have it, and the tx answers at height -1.
func TestLtcReorgBackToMempool(t *testing.T) {
	st := startLtcMempoolStack(t)
	base, w := st.inst.base, st.node.Wallet(ltcregtest.W)
	var x string
	ltcCall(t, w, &x, "getnewaddress", "", "bech32")
	id := ltcSend(t, w, x, "0.6")
	waitAddress(t, base, x, func(a *api.Address) bool { return a.UnconfirmedTxs == 1 })

	// The node's chain becomes a prefix of the index's.
	h, hash := mineAndCheckLtcConfirmed(t, st, x, id)
	invalidateLtcBlock(t, st, hash, id)
	prev, prevHash := h-1, ""
	ltcCall(t, st.node.Client, &prevHash, "getblockhash", prev)
	waitTip(t, base, prev, prevHash, st.inst.logs)
	checkLtcPendingAgain(t, base, x, id)

	// A block without the payment replaces the one with it.
	h, hash = mineAndCheckLtcConfirmed(t, st, x, id)
	invalidateLtcBlock(t, st, hash, id)
	// A modified fee far below zero keeps it out of litecoind's template.
	var ok bool
	ltcCall(t, st.node.Client, &ok, "prioritisetransaction", id, 0, -100_000_000)
	h2, hash2 := mineLtc(t, st.node, 1)
	var pool []string
	ltcCall(t, st.node.Client, &pool, "getrawmempool")
	if h2 != h || !slices.Contains(pool, id) {
		t.Fatalf("the new branch is at %d (want %d) and the mempool is %v (want %s in it)", h2, h, pool, id)
	}
	waitTip(t, base, h2, hash2, st.inst.logs)
	checkLtcPendingAgain(t, base, x, id)
	if !strings.Contains(st.inst.logs.String(), fmt.Sprintf("fork=%d depth=1", h-1)) {
		t.Fatalf("no reorg of depth 1 in the log\n%s", tail(st.inst.logs.String(), 20))
	}
}

// mineAndCheckLtcConfirmed mines a block and requires the payment id to x
// to answer confirmed in it.
func mineAndCheckLtcConfirmed(t *testing.T, st *ltcStack, x, id string) (int32, string) {
	t.Helper()
	h, hash := mineLtc(t, st.node, 1)
	waitTip(t, st.inst.base, h, hash, st.inst.logs)
	a := waitAddress(t, st.inst.base, x, func(a *api.Address) bool { return a.UnconfirmedTxs == 0 })
	if a.Txs != 1 || amount(a.Balance) != "60000000" || !slices.Equal(a.Txids, []string{id}) {
		t.Fatalf("address with the mined payment: %+v", a)
	}
	return h, hash
}

// invalidateLtcBlock invalidates a block and requires litecoind to take
// the payment id back into its mempool.
func invalidateLtcBlock(t *testing.T, st *ltcStack, hash, id string) {
	t.Helper()
	if err := st.node.InvalidateBlock(context.Background(), hash); err != nil {
		t.Fatal(err)
	}
	var pool []string
	ltcCall(t, st.node.Client, &pool, "getrawmempool")
	if !slices.Contains(pool, id) {
		t.Fatalf("litecoind did not take %s back into its mempool: %v", id, pool)
	}
}

// checkLtcPendingAgain requires the payment id to x to answer pending:
// no confirmed history, 0.6 unconfirmed.
func checkLtcPendingAgain(t *testing.T, base, x, id string) {
	t.Helper()
	a := waitAddress(t, base, x, func(a *api.Address) bool { return a.UnconfirmedTxs == 1 })
	if a.Txs != 0 || amount(a.Balance) != "0" || amount(a.UnconfirmedBalance) != "60000000" || !slices.Equal(a.Txids, []string{id}) {
		t.Fatalf("address after the payment went back to the mempool: %+v", a)
	}
	var tx api.Tx
	getJSON(t, base+"/api/v2/tx/"+id, 200, &tx)
	if tx.BlockHeight != -1 || tx.Confirmations != 0 {
		t.Fatalf("the payment after the reorg: height %d, confirmations %d", tx.BlockHeight, tx.Confirmations)
	}
}
