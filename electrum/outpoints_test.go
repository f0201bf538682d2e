package electrum

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/tools/apitest"
)

// opWant is the tx that spends an output, and its height.
type opWant struct {
	spender       string
	spenderHeight int64
}

// outpointOracle replays the fixture's blocks and pending txs: where each
// output was made and what spends it.
type outpointOracle struct {
	funded map[string]int64 // txid: height (0 or -1 pending)
	nOut   map[string]int
	spends map[wire.OutPoint]opWant
}

func newOutpointOracle(f *apitest.Fixture) *outpointOracle {
	o := &outpointOracle{funded: map[string]int64{}, nOut: map[string]int{}, spends: map[wire.OutPoint]opWant{}}
	for h, b := range f.Gen.Blocks() {
		if h == 0 {
			continue
		}
		for _, tx := range b.Transactions {
			o.add(tx, int64(h))
		}
	}
	pending := map[string]bool{}
	for _, tx := range f.Pending {
		pending[tx.TxHash().String()] = true
	}
	for _, tx := range f.Pending {
		h := int64(0)
		for _, in := range tx.TxIn {
			if pending[in.PreviousOutPoint.Hash.String()] {
				h = -1
			}
		}
		o.add(tx, h)
	}
	return o
}

func (o *outpointOracle) add(tx *wire.MsgTx, h int64) {
	id := tx.TxHash().String()
	o.funded[id], o.nOut[id] = h, len(tx.TxOut)
	for _, in := range tx.TxIn {
		if in.PreviousOutPoint.Index != wire.MaxPrevOutIndex {
			o.spends[in.PreviousOutPoint] = opWant{spender: id, spenderHeight: h}
		}
	}
}

func (o *outpointOracle) want(op wire.OutPoint) map[string]any {
	id := op.Hash.String()
	h, ok := o.funded[id]
	if !ok || int(op.Index) >= o.nOut[id] {
		return map[string]any{}
	}
	out := map[string]any{"height": float64(h)}
	if sp, ok := o.spends[op]; ok {
		out["spender_txhash"], out["spender_height"] = sp.spender, float64(sp.spenderHeight)
	}
	return out
}

func sameMap(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// Every output of the chain and of the pending txs answers get_status and
// subscribe as the oracle says: confirmed unspent, spent in a block,
// spent by a pending tx (height 0, and -1 for a child of a pending tx),
// pending funding; unknown txs and output indexes past a tx's outputs
// answer {}.
func TestOutpointStatus(t *testing.T) {
	s := newServed(t, Config{})
	o := newOutpointOracle(s.f)
	c := s.negotiated(t, "1.6")
	kinds := map[string]int{}
	var txs []*wire.MsgTx
	for h, b := range s.f.Gen.Blocks() {
		if h > 0 {
			txs = append(txs, b.Transactions...)
		}
	}
	txs = append(txs, s.f.Pending...)
	for _, tx := range txs {
		id := tx.TxHash()
		for vout := range len(tx.TxOut) + 1 { // one past the last: {}
			op := wire.OutPoint{Hash: id, Index: uint32(vout)}
			want := o.want(op)
			got := ok[map[string]any](t, c, "blockchain.outpoint.get_status", id.String(), vout)
			if !sameMap(got, want) {
				t.Fatalf("%v: %v, want %v", op, got, want)
			}
			kinds[statusKind(want)]++
		}
	}
	for _, k := range []string{"none", "confirmed", "pending 0", "pending -1", "spent h/h", "spent h/0", "spent 0/-1"} {
		if kinds[k] == 0 {
			t.Errorf("the fixture has no outpoint %q (%v)", k, kinds)
		}
	}
	t.Logf("%d outpoints: %v", len(txs), kinds)
	// The PR's example shapes, by subscribe too, and by name.
	pay, child := s.f.PendingPayment, s.f.PendingChild
	prev := pay.TxIn[0].PreviousOutPoint
	got := ok[map[string]any](t, c, "blockchain.outpoint.subscribe", prev.Hash.String(), prev.Index, "0014"+strings.Repeat("00", 20))
	if !sameMap(got, o.want(prev)) || got["spender_txhash"] != pay.TxHash().String() || got["spender_height"] != 0.0 {
		t.Errorf("subscribe to a confirmed output a pending tx spends: %v", got)
	}
	a := c.callNamed("blockchain.outpoint.get_status", map[string]any{"tx_hash": child.TxHash().String(), "txout_idx": 0})
	if a.Error != nil || string(a.Result) != `{"height":-1}` {
		t.Errorf("by name: %s %v", a.Result, a.Error)
	}
	unknown := strings.Repeat("ab", 32)
	if a := c.call("blockchain.outpoint.subscribe", unknown, 0); a.Error != nil || string(a.Result) != `{}` {
		t.Errorf("unknown outpoint: %s %v", a.Result, a.Error)
	}
	if !ok[bool](t, c, "blockchain.outpoint.unsubscribe", unknown, 0) || ok[bool](t, c, "blockchain.outpoint.unsubscribe", unknown, 0) {
		t.Error("unsubscribe: want true, then false")
	}
}

func statusKind(m map[string]any) string {
	h, funded := m["height"].(float64)
	sh, spent := m["spender_height"].(float64)
	switch {
	case !funded:
		return "none"
	case !spent && h > 0:
		return "confirmed"
	case !spent:
		return "pending " + fmtHeight(h)
	}
	return "spent " + fmtHeight(h) + "/" + fmtHeight(sh)
}

func fmtHeight(h float64) string {
	if h > 0 {
		return "h"
	}
	return map[float64]string{0: "0", -1: "-1"}[h]
}

// Malformed params answer JSON-RPC errors, and the connection goes on.
func TestOutpointBadParams(t *testing.T) {
	s := newServed(t, Config{})
	c := s.negotiated(t, "1.6")
	id := s.f.PendingPayment.TxHash().String()
	for _, m := range []string{"blockchain.outpoint.subscribe", "blockchain.outpoint.get_status", "blockchain.outpoint.unsubscribe"} {
		fails(t, c, codeBadRequest, "not a valid transaction hash", m, "xyz", 0)
		fails(t, c, codeBadRequest, "not a valid transaction hash", m, strings.Repeat("g", 64), 0)
		fails(t, c, codeInvalidParams, "tx_hash must be a string", m, 12, 0)
		fails(t, c, codeInvalidParams, "tx_hash is required", m)
		fails(t, c, codeInvalidParams, "txout_idx is required", m, id)
		fails(t, c, codeInvalidParams, "txout_idx must be a non-negative integer", m, id, -1)
		fails(t, c, codeInvalidParams, "txout_idx must be a non-negative integer", m, id, 1<<40)
		fails(t, c, codeInvalidParams, "txout_idx must be a non-negative integer", m, id, "0")
		fails(t, c, codeInvalidParams, "txout_idx must be a non-negative integer", m, id, 1.5)
		fails(t, c, codeInvalidParams, "too many params", m, id, 0, "00", 1)
	}
	fails(t, c, codeInvalidParams, "too many params", "blockchain.outpoint.unsubscribe", id, 0, "00")
	fails(t, c, codeInvalidParams, "spk_hint must be a string", "blockchain.outpoint.get_status", id, 0, 5)
	fails(t, c, codeBadRequest, "spk_hint", "blockchain.outpoint.subscribe", id, 0, "zz")
	if a := c.callNamed("blockchain.outpoint.get_status", map[string]any{"tx_hash": id, "vout": 0}); a.Error == nil || a.Error.Code != codeInvalidParams || !strings.Contains(a.Error.Message, "unknown param") {
		t.Errorf("a wrong name: %s %v", a.Result, a.Error)
	}
	if n := s.srv.Subscriptions(); n != 0 {
		t.Errorf("%d subscriptions after refused calls", n)
	}
	if a := c.call("blockchain.outpoint.get_status", id, 0); a.Error != nil || !strings.HasPrefix(string(a.Result), `{"height":0`) {
		t.Errorf("after the errors: %s %v", a.Result, a.Error)
	}
}

// 1.4 clients have no outpoint methods and keep their server.features;
// 1.6 ones see the methods advertised.
func TestOutpointVersions(t *testing.T) {
	s := newServed(t, Config{})
	old, cur := s.negotiated(t, "1.4"), s.negotiated(t, "1.6")
	id := s.f.PendingPayment.TxHash().String()
	for _, m := range []string{"blockchain.outpoint.subscribe", "blockchain.outpoint.get_status", "blockchain.outpoint.unsubscribe"} {
		fails(t, old, codeMethodNotFound, "unknown method", m, id, 0)
	}
	f14, f16 := old.call("server.features"), cur.call("server.features")
	if strings.Contains(string(f14.Result), "method_flavours") || strings.Contains(string(f14.Result), "outpoint") {
		t.Errorf("1.4 features: %s", f14.Result)
	}
	want := strings.TrimSuffix(string(f14.Result), "}") + `,"method_flavours":{"blockchain.outpoint.subscribe":{"requires_spk_hint":false}}}`
	if string(f16.Result) != want {
		t.Errorf("1.6 features:\n%s\nwant\n%s", f16.Result, want)
	}
}

// Outpoint subscriptions count against the caps with script hashes; a
// closed connection gives its places back.
func TestOutpointSubscriptionCaps(t *testing.T) {
	s := newServed(t, Config{MaxSubs: 2, MaxSubsTotal: 3})
	a, b := s.negotiated(t, "1.6"), s.negotiated(t, "1.6")
	id := s.f.PendingPayment.TxHash().String()
	ok[*string](t, a, "blockchain.scripthash.subscribe", scripthashOf(t, s.f, s.f.DemoAddress))
	ok[map[string]any](t, a, "blockchain.outpoint.subscribe", id, 0)
	ok[map[string]any](t, a, "blockchain.outpoint.subscribe", id, 0) // again: no new place
	fails(t, a, codeExcessive, "too many subscriptions on this connection (limit 2)", "blockchain.outpoint.subscribe", id, 1)
	fails(t, a, codeExcessive, "too many subscriptions on this connection (limit 2)", "blockchain.scripthash.subscribe", scripthashOf(t, s.f, s.f.UnusedAddress))
	ok[map[string]any](t, b, "blockchain.outpoint.subscribe", id, 1)
	fails(t, b, codeExcessive, "too many subscriptions on this server (limit 3)", "blockchain.outpoint.subscribe", id, 2)
	if n := s.srv.Subscriptions(); n != 3 {
		t.Errorf("%d subscriptions, want 3", n)
	}
	ok[bool](t, a, "blockchain.outpoint.unsubscribe", id, 0)
	ok[map[string]any](t, b, "blockchain.outpoint.subscribe", id, 2)
	_ = b.c.Close()
	deadline := time.Now().Add(ioGuard)
	for s.srv.Subscriptions() != 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := s.srv.Subscriptions(); n != 1 {
		t.Errorf("%d subscriptions after a connection closed, want 1", n)
	}
}

// callNamed sends a call with params by name.
func (c *client) callNamed(method string, params map[string]any) answer {
	c.t.Helper()
	c.id++
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	if err != nil {
		c.t.Fatal(err)
	}
	c.sendLine(string(b))
	return c.answerTo(fmt.Sprint(c.id))
}

// A reorg that undoes the tip block notifies the subscribers of an output
// it made (gone: {}) and of one it spent (unspent again), and again when
// the block comes back; a recheck that changes nothing sends nothing.
func TestOutpointReorgNotifies(t *testing.T) {
	s := newServedOwn(t, Config{})
	o := newOutpointOracle(s.f)
	tip := s.f.TipHeight()
	var made, spent wire.OutPoint
	for _, tx := range s.f.Gen.Blocks()[tip].Transactions[1:] {
		made = wire.OutPoint{Hash: tx.TxHash(), Index: 0}
		if _, ok := o.spends[made]; ok {
			continue // spent by a pending tx: not gone with the block
		}
		spent = tx.TxIn[0].PreviousOutPoint
		break
	}
	if spent == (wire.OutPoint{}) || o.funded[spent.Hash.String()] >= int64(tip) || o.funded[spent.Hash.String()] <= 0 {
		t.Fatalf("no tx in the tip block spends an older output: %v %v", made, spent)
	}
	c := s.negotiated(t, "1.6")
	checks := rechecks(s)
	before := map[wire.OutPoint]string{}
	for _, op := range []wire.OutPoint{made, spent} {
		before[op] = string(c.call("blockchain.outpoint.subscribe", op.Hash.String(), op.Index).Result)
	}
	s.srv.OnMempoolSpends(toHash(t, made.Hash), []bchain.Hash{toHash(t, spent.Hash)})
	waitRecheck(t, checks)
	if c.call("server.ping"); len(c.notes) != 0 {
		t.Fatalf("notified without a change: %+v", c.notes)
	}
	wantAfter := map[wire.OutPoint]string{made: `{}`, spent: fmt.Sprintf(`{"height":%d}`, o.funded[spent.Hash.String()])}
	s.disconnectTip(t)
	for range 2 {
		n := c.note("blockchain.outpoint.subscribe")
		op, st := noteOutpoint(t, n)
		if want, ok := wantAfter[op]; !ok || !sameJSON(t, st, want) {
			t.Errorf("after the reorg: %v %s, want %s", op, st, want)
		}
		delete(wantAfter, op)
	}
	s.reconnectTip(t)
	for range 2 {
		n := c.note("blockchain.outpoint.subscribe")
		op, st := noteOutpoint(t, n)
		if !sameJSON(t, st, before[op]) {
			t.Errorf("block back: %v %s, want %s", op, st, before[op])
		}
		delete(before, op)
	}
}

// noteOutpoint reads a blockchain.outpoint.subscribe notification.
func noteOutpoint(t *testing.T, n notification) (wire.OutPoint, string) {
	t.Helper()
	b := mustJSON(t, n.Params)
	var p []json.RawMessage
	var key []any
	if json.Unmarshal(b, &p) != nil || len(p) != 2 || json.Unmarshal(p[0], &key) != nil || len(key) != 2 {
		t.Fatalf("notification %s", b)
	}
	h, err := chainhash.NewHashFromStr(key[0].(string))
	if err != nil {
		t.Fatal(err)
	}
	return wire.OutPoint{Hash: *h, Index: uint32(key[1].(float64))}, string(p[1])
}

func toHash(t *testing.T, h chainhash.Hash) bchain.Hash {
	t.Helper()
	b, err := bchain.ParseHash(h.String())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sameJSON compares two status objects whatever their key order.
func sameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y map[string]any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		t.Fatalf("statuses %s, %s", a, b)
	}
	return sameMap(x, y)
}
