package eth

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/bchain"
)

// The liveness probe's copy of the node talks over its own connections:
// it answers while user calls hold the indexer's, and never takes one of
// theirs even when idle (before, the probe shared the indexer's client);
// it still reports what the indexer's node learned (tracing switched off).
func TestProbeChainOwnConnections(t *testing.T) {
	f := newFakeNode(t)
	var mu sync.Mutex
	from := map[string]map[string]bool{} // method -> client addresses
	inner := f.srv.Config.Handler
	f.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := make([]byte, 200)
		n, _ := r.Body.Read(body)
		method := "?"
		for _, m := range []string{"eth_getBalance", "eth_getBlockByNumber", "eth_chainId"} {
			if strings.Contains(string(body[:n]), m) {
				method = m
			}
		}
		mu.Lock()
		if from[method] == nil {
			from[method] = map[string]bool{}
		}
		from[method][r.RemoteAddr] = true
		mu.Unlock()
		r.Body = io.NopCloser(io.MultiReader(strings.NewReader(string(body[:n])), r.Body))
		inner.ServeHTTP(w, r)
	})
	release := make(chan struct{})
	f.handle("eth_getBalance", func([]json.RawMessage) (any, *rpcErrObj) { <-release; return "0x1", nil })
	f.answer("eth_chainId", "0x539")
	f.answer("eth_getBlockByNumber", map[string]any{"hash": "0x" + strings.Repeat("11", 32), "number": "0x5", "difficulty": "0x0"})
	n := newTestNode(t, "Ethereum Regtest", f.srv.URL, nil)
	why := "tracing off: the node has no debug API"
	n.tracingOff.Store(&why)
	var held sync.WaitGroup
	for range 4 {
		held.Go(func() { _, _ = n.Balance(context.Background(), make([]byte, 20), bchain.EthLatest) })
	}
	for deadline := time.Now().Add(5 * time.Second); f.count("eth_getBalance") < 4; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the user calls did not arrive")
		}
	}
	p := n.ProbeChain()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if h, _, err := p.BestBlock(ctx); err != nil || h != 5 {
		t.Fatalf("the probe's BestBlock while user calls are held: %d %v", h, err)
	}
	ci, err := p.ChainInfo(ctx)
	if err != nil || ci.Warnings != why {
		t.Errorf("the probe's chain info: %+v %v", ci, err)
	}
	close(release)
	held.Wait()
	// The user connections are idle now: a shared client would reuse one.
	if _, _, err := p.BestBlock(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for addr := range from["eth_getBlockByNumber"] {
		if from["eth_getBalance"][addr] {
			t.Errorf("the probe's call came over a user connection %s", addr)
		}
	}
	if len(from["eth_getBlockByNumber"]) == 0 {
		t.Error("no probe call seen")
	}
}
