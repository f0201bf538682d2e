package e2e

import (
	"bytes"
	"encoding/hex"
	"slices"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// Subscriptions: notifications reuse the subscribing request's id and
// arrive as the node reports new txs and blocks.

type addrNote struct {
	Address string `json:"address"`
	Tx      api.Tx `json:"tx"`
}

type blockNote struct {
	Height uint32 `json:"height"`
	Hash   string `json:"hash"`
}

func TestWebsocketSubscriptions(t *testing.T) {
	st := startDemoStackWith(t, wsFilterConfig, func(o *app.Options) { o.EnableSubNewTx = true })
	g, base := st.g, st.inst.base
	x := mempoolAddr(t, g, chaingen.P2WPKH, 11)
	y := mempoolAddr(t, g, chaingen.P2TR, 12)
	a, b := newWS(t, base), newWS(t, base)

	var sub struct {
		Subscribed bool
		Message    string
	}
	blocksA := a.ok("subscribeNewBlock", nil, &sub)
	if !sub.Subscribed {
		t.Fatalf("subscribeNewBlock: %+v", sub)
	}
	addrsA := a.ok("subscribeAddresses", map[string]any{"addresses": []string{x, x}, "newBlockTxs": true}, &sub)
	allTxsA := a.ok("subscribeNewTransaction", nil, &sub)
	if !sub.Subscribed {
		t.Fatalf("subscribeNewTransaction with -enablesubnewtx: %+v", sub)
	}
	blocksB := b.ok("subscribeNewBlock", nil, &sub)
	addrsB := b.ok("subscribeAddresses", map[string]any{"addresses": []string{y}}, &sub)
	covered("subscribeNewBlock", "subscribeAddresses", "subscribeNewTransaction")

	// A payment to x reaches A's address subscription (mempool), and every
	// new-tx subscriber.
	t1, err := g.CreatePayment([]chaingen.Output{{Address: x, Value: 120_000}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	id1 := sendTx(t, st, t1)
	var n addrNote
	a.notification(addrsA, &n)
	t.Logf("mempool notification %s after sendrawtransaction returned", time.Since(sent).Round(time.Millisecond))
	if n.Address != x || n.Tx.Txid != id1 || n.Tx.BlockHeight != -1 || n.Tx.Confirmations != 0 || n.Tx.Hex != hexOf(t, t1) {
		t.Fatalf("address notification: %+v", n)
	}
	if len(a.pending(addrsA)) != 0 {
		t.Fatalf("x was subscribed twice but must be notified once: %s", a.pending(addrsA))
	}
	var all api.Tx
	a.notification(allTxsA, &all)
	if all.Txid != id1 {
		t.Fatalf("new-tx notification: %+v", all)
	}

	// Mining it notifies the new block to A and B, and with newBlockTxs the
	// confirmation to A.
	if _, err := g.AddBlock(t1); err != nil {
		t.Fatal(err)
	}
	sent = time.Now()
	submit(t, g, st.node, g.Height())
	h, hash := g.Tip()
	var bn blockNote
	a.notification(blocksA, &bn)
	t.Logf("new block notification %s after submitblock returned", time.Since(sent).Round(time.Millisecond))
	if bn.Height != uint32(h) || bn.Hash != hash.String() {
		t.Fatalf("block notification %+v, want %d %s", bn, h, hash)
	}
	b.notification(blocksB, &bn)
	a.notification(addrsA, &n)
	if n.Address != x || n.Tx.Txid != id1 || n.Tx.BlockHeight != int64(h) || n.Tx.Confirmations != 1 {
		t.Fatalf("confirmation notification: %+v", n)
	}

	// Re-subscribing replaces the set: A now follows y only. B (y, no
	// newBlockTxs) gets the mempool notification but not the confirmation.
	addrsA2 := a.ok("subscribeAddresses", map[string]any{"addresses": []string{y}}, &sub)
	t2, err := g.CreatePayment([]chaingen.Output{{Address: x, Value: 1000}, {Address: y, Value: 2000}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	id2 := sendTx(t, st, t2)
	a.notification(addrsA2, &n)
	if n.Address != y || n.Tx.Txid != id2 {
		t.Fatalf("after re-subscribing: %+v", n)
	}
	b.notification(addrsB, &n)
	if n.Address != y || n.Tx.Txid != id2 {
		t.Fatalf("B's notification: %+v", n)
	}
	a.notification(allTxsA, &all)
	if len(a.pending(addrsA)) != 0 {
		t.Fatalf("x was unsubscribed by re-subscribing, yet notified: %s", a.pending(addrsA))
	}

	// Unsubscribing stops notifications.
	for _, m := range []string{"unsubscribeNewBlock", "unsubscribeAddresses", "unsubscribeNewTransaction"} {
		a.ok(m, nil, &sub)
		if sub.Subscribed {
			t.Fatalf("%s: %+v", m, sub)
		}
	}
	covered("unsubscribeNewBlock", "unsubscribeAddresses", "unsubscribeNewTransaction")
	if _, err := g.AddBlock(t2); err != nil {
		t.Fatal(err)
	}
	submit(t, g, st.node, g.Height())
	b.notification(blocksB, &bn) // B still hears of the block ...
	if got := append(a.pending(blocksA), a.pending(addrsA2)...); len(got) != 0 {
		t.Fatalf("... but A unsubscribed and still got %s", got) // A no longer does
	}
	if len(b.pending(addrsB)) != 0 {
		t.Fatalf("B did not ask for confirmations (newBlockTxs) but got %s", b.pending(addrsB))
	}

	// Fiat rate subscriptions are accepted (no rate source pushes yet).
	a.ok("subscribeFiatRates", map[string]any{"currency": "USD"}, &sub)
	if !sub.Subscribed {
		t.Fatalf("subscribeFiatRates: %+v", sub)
	}
	a.ok("unsubscribeFiatRates", nil, &sub)
	if sub.Subscribed {
		t.Fatalf("unsubscribeFiatRates: %+v", sub)
	}
	covered("subscribeFiatRates", "unsubscribeFiatRates")

	// Bad subscriptions are refused with Blockbook's messages.
	a.fails("subscribeAddresses", map[string]any{"addresses": []string{"bcrt1qnotanaddress"}}, `Invalid address "bcrt1qnotanaddress"`)
	many := make([]string, 101)
	for i := range many {
		many[i] = x
	}
	a.fails("subscribeAddresses", map[string]any{"addresses": many, "newBlockTxs": true}, "addresses max 100")
	a.fails("subscribeAddresses", map[string]any{"addresses": slices.Repeat([]string{x}, 1001)}, "addresses max 1000")
	a.fails("subscribeAddresses", map[string]any{"addresses": "x"}, "addresses must be an array")
}

// Without -enablesubnewtx the subscription is declined the way Blockbook
// declines it; sendTransaction relays or returns the node's reason.
func TestWebsocketSendAndDisabledNewTx(t *testing.T) {
	st := startDemoStack(t, nil)
	ws := newWS(t, st.inst.base)
	var sub struct {
		Subscribed bool
		Message    string
	}
	ws.ok("subscribeNewTransaction", nil, &sub)
	if sub.Subscribed || sub.Message != "subscribeNewTransaction not enabled, use -enablesubnewtx flag to enable." {
		t.Fatalf("subscribeNewTransaction: %+v", sub)
	}
	ws.ok("unsubscribeNewTransaction", nil, &sub)
	if sub.Subscribed || sub.Message != "unsubscribeNewTransaction not enabled, use -enablesubnewtx flag to enable." {
		t.Fatalf("unsubscribeNewTransaction: %+v", sub)
	}
	tx, err := st.g.CreatePayment([]chaingen.Output{{Address: mempoolAddr(t, st.g, chaingen.P2WPKH, 20), Value: 10_000}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	var res api.Result
	ws.ok("sendTransaction", map[string]any{"hex": hexOf(t, tx)}, &res)
	covered("sendTransaction")
	if res.Result != tx.TxHash().String() {
		t.Fatalf("sendTransaction: %+v, want %s", res, tx.TxHash())
	}
	ws.fails("sendTransaction", map[string]any{"hex": hexOf(t, tx)}, "already have transaction")
	ws.fails("sendTransaction", map[string]any{"hex": "zz"}, "Invalid transaction hex")
	ws.fails("sendTransaction", map[string]any{"hex": ""}, "Missing tx blob")
}

func hexOf(t testing.TB, tx *wire.MsgTx) string {
	t.Helper()
	var buf bytes.Buffer
	if err := tx.Serialize(&buf); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(buf.Bytes())
}
