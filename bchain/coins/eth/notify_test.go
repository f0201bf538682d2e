package eth

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/gorilla/websocket"

	"github.com/openexplorer/blockbook/bchain"
)

// fakeWS is a websocket JSON-RPC endpoint that accepts eth_subscribe and
// then does what mode says: "push" sends whatever arrives on push, "silent"
// sends nothing, "close" hangs up right after subscribing.
type fakeWS struct {
	srv      *httptest.Server
	mode     atomic.Value
	push     chan any
	sessions atomic.Int32
}

func newFakeWS(t *testing.T, mode string) *fakeWS {
	f := &fakeWS{push: make(chan any, 16)}
	f.mode.Store(mode)
	up := websocket.Upgrader{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		f.sessions.Add(1)
		var req rpcReq
		if err := c.ReadJSON(&req); err != nil || req.Method != "eth_subscribe" {
			return
		}
		if err := c.WriteJSON(rpcResp{JSONRPC: "2.0", ID: req.ID, Result: "0xabc"}); err != nil {
			return // the client hung up; its Run reconnects or has ended
		}
		// Drain client messages (unsubscribe) so the connection stays healthy.
		go func() {
			for {
				if _, _, err := c.ReadMessage(); err != nil {
					return
				}
			}
		}()
		switch f.mode.Load().(string) {
		case "close":
			return
		case "silent":
			<-r.Context().Done()
			return
		}
		for {
			select {
			case v := <-f.push:
				msg := map[string]any{"jsonrpc": "2.0", "method": "eth_subscription", "params": map[string]any{"subscription": "0xabc", "result": v}}
				if err := c.WriteJSON(msg); err != nil {
					return
				}
			case <-r.Context().Done():
				return
			}
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeWS) url() string { return "ws" + strings.TrimPrefix(f.srv.URL, "http") }

// heightNode is a fake HTTP node whose eth_blockNumber the test moves.
func heightNode(t *testing.T) (*fakeNode, *atomic.Uint64) {
	f := newFakeNode(t)
	var h atomic.Uint64
	h.Store(10)
	f.handle("eth_blockNumber", func([]json.RawMessage) (any, *rpcErrObj) { return hexutil.Uint64(h.Load()), nil })
	return f, &h
}

func runNotifier(t *testing.T, b *BlockNotifier) <-chan struct{} {
	sig := make(chan struct{}, 64)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx, func() { sig <- struct{}{} }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("notifier: %v", err)
		}
	})
	return sig
}

func waitSignal(t *testing.T, sig <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-sig:
	case <-time.After(5 * time.Second):
		t.Fatalf("no signal: %s", what)
	}
}

func drain(sig <-chan struct{}) {
	for {
		select {
		case <-sig:
		case <-time.After(100 * time.Millisecond):
			return
		}
	}
}

func TestNotifierPushedHeads(t *testing.T) {
	f, _ := heightNode(t)
	ws := newFakeWS(t, "push")
	n := newTestNode(t, "Ethereum Regtest", f.srv.URL, nil)
	sig := runNotifier(t, &BlockNotifier{node: n, WSURL: ws.url(), Quiet: time.Minute, Poll: time.Hour, Log: discardLog()})
	time.Sleep(200 * time.Millisecond) // let it subscribe
	ws.push <- map[string]any{"number": "0xb", "hash": common.Hash{1}}
	waitSignal(t, sig, "pushed head")
}

func TestNotifierSilentFeedFallsBackToPolling(t *testing.T) {
	f, h := heightNode(t)
	ws := newFakeWS(t, "silent")
	n := newTestNode(t, "Ethereum Regtest", f.srv.URL, nil)
	sig := runNotifier(t, &BlockNotifier{node: n, WSURL: ws.url(), Quiet: 300 * time.Millisecond, Poll: time.Hour, Log: discardLog()})
	time.Sleep(100 * time.Millisecond)
	h.Add(1)
	waitSignal(t, sig, "watchdog poll after a silent feed")
	// The watchdog re-subscribed.
	deadline := time.Now().Add(3 * time.Second)
	for ws.sessions.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if ws.sessions.Load() < 2 {
		t.Errorf("no resubscription after the watchdog fired")
	}
}

func TestNotifierKilledSubscriptionFallsBackToPolling(t *testing.T) {
	f, h := heightNode(t)
	ws := newFakeWS(t, "close")
	n := newTestNode(t, "Ethereum Regtest", f.srv.URL, nil)
	sig := runNotifier(t, &BlockNotifier{node: n, WSURL: ws.url(), Quiet: time.Hour, Poll: 50 * time.Millisecond, Log: discardLog()})
	time.Sleep(200 * time.Millisecond)
	drain(sig)
	h.Add(1)
	waitSignal(t, sig, "polling while the subscription is down")
	// Once the feed works again, pushes arrive again.
	ws.mode.Store("push")
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case ws.push <- map[string]any{"number": "0xc"}:
		default:
		}
		select {
		case <-sig:
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatal("no push after the subscription came back")
}

func TestMempoolSubscriptionFallback(t *testing.T) {
	f := newFakeNode(t) // no txpool_content
	ws := newFakeWS(t, "push")
	n := newTestNode(t, "Ethereum Regtest", f.srv.URL, nil)
	m := &Mempool{node: n, WSURL: ws.url(), Timeout: time.Hour, Log: discardLog(), seen: map[bchain.Hash]time.Time{}}
	got := make(chan bchain.Hash, 4)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx, func(h bchain.Hash) { got <- h }) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("mempool notifier: %v", err)
		}
	}()
	pending, mined := common.Hash{0xaa}, common.Hash{0xbb}
	time.Sleep(200 * time.Millisecond)
	ws.push <- pending
	ws.push <- mined
	for _, want := range []common.Hash{pending, mined} {
		select {
		case h := <-got:
			if h != bchain.Hash(want) {
				t.Fatalf("got %s want %s", h, want.Hex())
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no pending tx notification")
		}
	}
	f.handle("eth_getTransactionByHash", func(p []json.RawMessage) (any, *rpcErrObj) {
		var h common.Hash
		if err := json.Unmarshal(p[0], &h); err != nil {
			return nil, &rpcErrObj{Code: -32602, Message: "invalid params: " + err.Error()}
		}
		if h == mined {
			return map[string]any{"hash": h, "blockHash": common.Hash{1}}, nil
		}
		return map[string]any{"hash": h, "blockHash": nil}, nil
	})
	ids, err := m.MempoolTxids(context.Background())
	if err != nil || len(ids) != 1 || ids[0] != bchain.Hash(pending) {
		t.Fatalf("MempoolTxids = %v, %v; want only the unmined tx", ids, err)
	}
	// The mined one was forgotten; an expired one is dropped without asking.
	m.Timeout = time.Nanosecond
	if ids, err := m.MempoolTxids(context.Background()); err != nil || len(ids) != 0 {
		t.Fatalf("after expiry: %v %v", ids, err)
	}
}

func TestMempoolTxpool(t *testing.T) {
	f := newFakeNode(t)
	f.answer("txpool_content", map[string]any{
		"pending": map[string]any{from: map[string]any{"0": map[string]any{"hash": common.Hash{1}}, "1": map[string]any{"hash": common.Hash{2}}}},
		"queued":  map[string]any{to: map[string]any{"5": map[string]any{"hash": common.Hash{3}}}},
	})
	n := newTestNode(t, "Ethereum Regtest", f.srv.URL, nil)
	m := NewMempool(n, &bchain.Config{})
	ids, err := m.MempoolTxids(context.Background())
	if err != nil || len(ids) != 3 {
		t.Fatalf("%v %v", ids, err)
	}
}
