package electrum

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/btcsuite/btcd/btcec/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/internal/bip352"
	"github.com/openexplorer/blockbook/tools/apitest"
)

// spChain is a tweak index in memory: blocks of eligible txs that the
// test reorgs at will.
type spChain struct {
	api.ScriptQueries
	mu     sync.Mutex
	blocks []api.BlockTweaks
}

func (c *spChain) TweakTip(context.Context) (*api.TweakTip, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.blocks[len(c.blocks)-1]
	return &api.TweakTip{Height: b.Height, Hash: b.Hash, Network: "regtest"}, nil
}

func (c *spChain) BlockTweaks(_ context.Context, height string, _ bool) (*api.BlockTweaks, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	h, err := strconv.Atoi(height)
	if err != nil || h >= len(c.blocks) {
		return nil, fmt.Errorf("no block %s", height)
	}
	b := c.blocks[h]
	return &b, nil
}

// set replaces the blocks from height on (a reorg, or new blocks).
func (c *spChain) set(height int, blocks ...api.BlockTweaks) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.blocks = c.blocks[:height]
	for i, b := range blocks {
		b.Height = uint32(height + i)
		c.blocks = append(c.blocks, b)
	}
}

// spWallet makes txs that pay a receiver (or not).
type spWallet struct {
	t     *testing.T
	scan  []byte
	spend []byte
	n     int
}

// tx is an eligible tx of one taproot output; it pays the receiver if pay.
func (w *spWallet) tx(pay bool) api.TweakTx {
	w.t.Helper()
	w.n++
	key, _ := btcec.PrivKeyFromBytes([]byte(fmt.Sprintf("%032d", w.n)))
	in := []bip352.SendInput{{PrevTxid: [32]byte{byte(w.n), byte(w.n >> 8)}, Key: key}}
	tweak, err := bip352.SendTweak(in)
	if err != nil {
		w.t.Fatal(err)
	}
	var out [32]byte
	if pay {
		sc, _ := btcec.PrivKeyFromBytes(w.scan)
		outs, err := bip352.SendOutputs(in, []bip352.Recipient{{Scan: sc.PubKey().SerializeCompressed(), Spend: w.spend}})
		if err != nil {
			w.t.Fatal(err)
		}
		out = outs[0]
	} else {
		copy(out[:], key.PubKey().SerializeCompressed()[1:])
	}
	return api.TweakTx{Txid: fmt.Sprintf("%064x", w.n), Tweak: hex.EncodeToString(tweak[:]),
		Outputs: []api.TweakOutput{{Value: 1000, Script: "5120" + hex.EncodeToString(out[:])}}, Highest: 1000, Unspent: 1000, Live: true}
}

func block(hash string, txs ...api.TweakTx) api.BlockTweaks {
	return api.BlockTweaks{Hash: hash, Txs: txs}
}

type spNoteParams struct {
	Subscription struct {
		Address     string `json:"address"`
		StartHeight int    `json:"start_height"`
	} `json:"subscription"`
	Progress float64 `json:"progress"`
	History  []spTx  `json:"history"`
}

// spNotes reads silentpayments notifications up to one with progress 1.
func spNotes(t *testing.T, c *client) []spNoteParams {
	t.Helper()
	var out []spNoteParams
	for {
		var raw struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		line := c.readLine()
		if err := json.Unmarshal([]byte(line), &raw); err != nil || raw.Method != methodSP {
			t.Fatalf("want a silentpayments notification, got %q", line)
		}
		var p spNoteParams
		if err := json.Unmarshal(raw.Params, &p); err != nil {
			t.Fatalf("params %s: %v", raw.Params, err)
		}
		out = append(out, p)
		if p.Progress == 1 {
			return out
		}
	}
}

// Frigate's subscription over a tweak index the test reorgs: history in
// pages of at most 100 with progress below 1 until the last; a reorg
// rescans from the fork point; a shorter chain, then a longer one; caps.
func TestSilentPaymentsSubscription(t *testing.T) {
	scan := make([]byte, 32)
	scan[31] = 7
	spendKey, _ := btcec.PrivKeyFromBytes(append(make([]byte, 31), 9))
	w := &spWallet{t: t, scan: scan, spend: spendKey.PubKey().SerializeCompressed()}
	chain := &spChain{}
	var pays []api.TweakTx
	for range 150 {
		pays = append(pays, w.tx(true))
	}
	chain.set(0, block("h0"), block("h1", w.tx(false)), block("h2", append(pays, w.tx(false))...), block("h3"), block("h4", w.tx(false)))
	s := serveWrapped(t, apitest.Shared(t, apitest.Options{Mempool: true}), Config{SPMaxSubsTotal: 2, SPWorkers: 1},
		func(q api.ScriptQueries) api.ScriptQueries { chain.ScriptQueries = q; return chain })
	c := dial(t, s.addr)
	params := []any{hex.EncodeToString(scan), hex.EncodeToString(w.spend), 0}
	addr := ok[string](t, c, methodSP, params...)
	if want, _ := bip352.Address("sprt", scan, w.spend); addr != want {
		t.Fatalf("address %s, want %s", addr, want)
	}
	notes := spNotes(t, c)
	var got []spTx
	for i, n := range notes {
		if n.Subscription.Address != addr || n.Subscription.StartHeight != 0 || len(n.History) > spPage || (i < len(notes)-1) == (n.Progress == 1) {
			t.Errorf("note %d: %+v", i, n)
		}
		got = append(got, n.History...)
	}
	if len(got) != len(pays) || len(notes) < 2 {
		t.Fatalf("%d notes, history of %d txs, want %d", len(notes), len(got), len(pays))
	}
	for i, p := range pays {
		if got[i] != (spTx{Height: 2, TxHash: p.Txid}) {
			t.Fatalf("history %d: %+v, want %s at 2", i, got[i], p.Txid)
		}
	}
	if n := s.srv.sp.scanned.Load(); n != 153 {
		t.Errorf("scanned %d txs, want 153", n)
	}

	// A reorg replaces block 4 with one paying the receiver.
	pay4 := w.tx(true)
	chain.set(4, block("h4'", pay4))
	s.srv.OnBlock()
	if n := spNotes(t, c); len(n) != 1 || len(n[0].History) != 1 || n[0].History[0] != (spTx{Height: 4, TxHash: pay4.Txid}) {
		t.Fatalf("after the reorg: %+v", n)
	}
	// The chain shrinks to 3, then grows again with a payment at 5.
	chain.set(4)
	s.srv.OnBlock()
	pay5 := w.tx(true)
	chain.set(4, block("h4''"), block("h5", pay5))
	s.srv.OnBlock()
	if n := spNotes(t, c); len(n) != 1 || len(n[0].History) != 1 || n[0].History[0] != (spTx{Height: 5, TxHash: pay5.Txid}) {
		t.Fatalf("after the longer chain: %+v", n)
	}
	// From start 5 only the last payment; the server's cap is 2.
	c2 := dial(t, s.addr)
	ok[string](t, c2, methodSP, params[0], params[1], 5)
	if n := spNotes(t, c2); len(n) != 1 || len(n[0].History) != 1 || n[0].History[0].Height != 5 {
		t.Fatalf("from 5: %+v", n)
	}
	fails(t, c2, codeExcessive, "too many Silent Payments subscriptions on this server (limit 2)", methodSP, fmt.Sprintf("%064x", 3), params[1])
	if a := ok[string](t, c2, "blockchain.silentpayments.unsubscribe", params[0], params[1]); a != addr {
		t.Errorf("unsubscribe answered %s", a)
	}
	ok[string](t, c2, methodSP, fmt.Sprintf("%064x", 3), params[1], 5)
	spNotes(t, c2)
	var f features
	if f = ok[features](t, c2, "server.features"); f.SilentPayments == nil || f.SilentPayments.MaxSubsTotal != 2 || f.SilentPayments.MaxTweakBlocks != maxTweakBlocks {
		t.Errorf("server.features silent_payments %+v", f.SilentPayments)
	}
}

// Cake Wallet's tweaks.subscribe: one notification per block, at most
// 1,000 blocks a call, then "done" (also the result); a spent tx only in
// historical mode; errors; and the index off.
func TestTweaksSubscribe(t *testing.T) {
	w := &spWallet{t: t, scan: append(make([]byte, 31), 7), spend: make([]byte, 33)}
	chain := &spChain{}
	blocks := make([]api.BlockTweaks, 1200)
	for i := range blocks {
		blocks[i] = block(fmt.Sprintf("h%d", i))
	}
	live, spent := w.tx(false), w.tx(false)
	spent.Outputs[0].Spent, spent.Live, spent.Unspent = true, false, 0
	blocks[2] = block("h2", live, spent)
	chain.set(0, blocks...)
	s := serveWrapped(t, apitest.Shared(t, apitest.Options{Mempool: true}), Config{},
		func(q api.ScriptQueries) api.ScriptQueries { chain.ScriptQueries = q; return chain })
	c := dial(t, s.addr)
	a := c.call(methodTweaks, 1, 5000, false)
	if a.Error != nil || string(a.Result) != `{"jsonrpc":"2.0","method":"blockchain.tweaks.subscribe","params":[{"message":"done"}]}` {
		t.Fatalf("result %s %v", a.Result, a.Error)
	}
	if len(c.notes) != maxTweakBlocks+1 || string(param0(t, c.notes[maxTweakBlocks])) != `{"message":"done"}` {
		t.Fatalf("%d notes", len(c.notes))
	}
	for i, n := range c.notes[:maxTweakBlocks] {
		var m map[string]map[string]tweakTxNote
		if err := json.Unmarshal(param0(t, n), &m); err != nil || len(m) != 1 || m[strconv.Itoa(i+1)] == nil {
			t.Fatalf("note %d: %s", i, param0(t, n))
		}
		if want := map[bool]int{true: 1, false: 0}[i+1 == 2]; len(m[strconv.Itoa(i+1)]) != want {
			t.Fatalf("block %d: %s", i+1, param0(t, n))
		}
	}
	c.notes = nil
	ok[map[string]any](t, c, methodTweaks, 2, 1, true)
	if len(c.notes) != 2 || !strings.Contains(string(param0(t, c.notes[0])), spent.Txid) || !strings.Contains(string(param0(t, c.notes[0])), live.Txid) {
		t.Fatalf("historical: %v", c.notes)
	}
	fails(t, c, codeBadRequest, "height 1200 is above the tip 1199", methodTweaks, 1200, 1)
	fails(t, c, codeInvalidParams, "count must be at least 1", methodTweaks, 1, 0)
	fails(t, c, codeInvalidParams, "historical must be a boolean", methodTweaks, 1, 1, "yes")

	// The fixture has no tweak index: a clear error, and no
	// silent_payments in server.features.
	off := dial(t, newServed(t, Config{}).addr)
	fails(t, off, codeBadRequest, "Silent Payments index is not enabled", methodTweaks, 1, 1)
	fails(t, off, codeBadRequest, "Silent Payments index is not enabled", methodSP, fmt.Sprintf("%064x", 3), hex.EncodeToString(w.spend))
	if f := ok[map[string]any](t, off, "server.features"); f["silent_payments"] != nil {
		t.Errorf("features without the index: %v", f)
	}
}

// param0 is a notification's first param, encoded.
func param0(t *testing.T, n notification) []byte {
	t.Helper()
	if len(n.Params) == 0 {
		t.Fatalf("notification %s without params", n.Method)
	}
	b, err := json.Marshal(n.Params[0])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A reorg during a scan can leave a kept new block above a kept old one
// (each block is read in its own snapshot): rewind goes back to the lowest
// block that changed, not to the first kept block that still matches.
func TestSilentPaymentsRewindMixedSnapshots(t *testing.T) {
	c := &spChain{}
	c.set(0, block("g"), block("a1"), block("a2"), block("b3"))
	// Scanned: 0 and 1 as they were, 2 as the old chain had it, 3 from the
	// new chain, which also replaced 2.
	sub := &spSub{start: 0, next: 4, hashes: map[uint32]string{0: "g", 1: "a1", 2: "old2", 3: "b3"}}
	if err := sub.rewind(c, 3); err != nil {
		t.Fatal(err)
	}
	if sub.next != 2 {
		t.Fatalf("next %d after the reorg, want 2 (the old block 2 was replaced)", sub.next)
	}
	if _, kept := sub.hashes[3]; kept {
		t.Fatal("the hash of block 3, above the rewind, is still kept")
	}
	// A shorter chain: the kept blocks above the tip go.
	c.set(2)
	sub = &spSub{start: 0, next: 4, hashes: map[uint32]string{0: "g", 1: "a1", 2: "a2", 3: "b3"}}
	if err := sub.rewind(c, 1); err != nil || sub.next != 2 || len(sub.hashes) != 2 {
		t.Fatalf("shorter chain: next %d, %d hashes kept (%v), want 2 and 2", sub.next, len(sub.hashes), err)
	}
}

// One client address cannot hold the server's scan slots: the per-address
// cap counts over its connections, and a freed slot is given back.
func TestSilentPaymentsPerAddressCap(t *testing.T) {
	scan := make([]byte, 32)
	scan[31] = 7
	spendKey, _ := btcec.PrivKeyFromBytes(append(make([]byte, 31), 9))
	w := &spWallet{t: t, scan: scan, spend: spendKey.PubKey().SerializeCompressed()}
	chain := &spChain{}
	chain.set(0, block("h0"), block("h1", w.tx(true)))
	s := serveWrapped(t, apitest.Shared(t, apitest.Options{Mempool: true}), Config{SPMaxSubsPerIP: 1, SPWorkers: 1},
		func(q api.ScriptQueries) api.ScriptQueries { chain.ScriptQueries = q; return chain })
	s.srv.hooks.limitLocal.Store(true) // the test's clients are loopback peers
	spend := hex.EncodeToString(w.spend)
	c1, c2 := dial(t, s.addr), dial(t, s.addr)
	ok[string](t, c1, methodSP, hex.EncodeToString(scan), spend, 0)
	spNotes(t, c1)
	fails(t, c2, codeExcessive, "too many Silent Payments subscriptions from this address (limit 1)", methodSP, fmt.Sprintf("%064x", 3), spend)
	ok[string](t, c1, "blockchain.silentpayments.unsubscribe", hex.EncodeToString(scan), spend)
	ok[string](t, c2, methodSP, fmt.Sprintf("%064x", 3), spend, 0)
	spNotes(t, c2)
}
