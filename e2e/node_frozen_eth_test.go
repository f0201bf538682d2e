package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/tools/ethgen"
	"github.com/openexplorer/blockbook/tools/gethdev"
)

// stallProxy forwards JSON-RPC to the node and, while frozen, holds every
// request without answering until it thaws or the caller gives up: the
// node looks as a SIGSTOPped one does (the in-process geth cannot be
// stopped by signal).
type stallProxy struct {
	mu     sync.Mutex
	thawed chan struct{} // nil while the node answers
	next   http.Handler
}

func (p *stallProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	ch := p.thawed
	p.mu.Unlock()
	if ch != nil {
		select {
		case <-ch:
		case <-r.Context().Done():
			return
		}
	}
	p.next.ServeHTTP(w, r)
}

func (p *stallProxy) freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.thawed == nil {
		p.thawed = make(chan struct{})
	}
}

func (p *stallProxy) thaw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.thawed != nil {
		close(p.thawed)
		p.thawed = nil
	}
}

// TestEthNodeFrozen is TestNodeFrozen for an Ethereum-type node: the same
// probe (the node's latest block) notices a node that stops answering its
// JSON-RPC, node-bound requests answer 503 at once, index-only requests
// answer, and /health recovers once the node answers again.
func TestEthNodeFrozen(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dev, err := gethdev.Start(ctx, gethdev.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(dev.Stop)
	if _, err := ethgen.Scenario(ctx, dev); err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(dev.HTTPURL)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ErrorHandler = func(w http.ResponseWriter, _ *http.Request, _ error) { w.WriteHeader(http.StatusBadGateway) } // callers that gave up
	proxy := &stallProxy{next: rp}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	raw, _ := json.Marshal(map[string]any{
		"coin_name": "Ethereum Regtest", "coin_shortcut": "rETH", "rpc_url": srv.URL, "rpc_url_ws": dev.WSURL,
		"rpc_timeout": 20, "block_addresses_to_keep": 100,
	})
	cfg := filepath.Join(t.TempDir(), "eth.json")
	if err := os.WriteFile(cfg, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	inst := startInProcess(t, cfg, t.TempDir(), nil)
	t.Cleanup(proxy.thaw) // before the instance stops
	h, hash := dev.Head()
	waitTip(t, inst.base, int32(h), hash.Hex(), inst.logs)
	var blk struct {
		Txs []struct {
			Txid string `json:"txid"`
		} `json:"txs"`
	}
	getJSON(t, inst.base+"/api/v2/block/1", 200, &blk)
	if len(blk.Txs) == 0 {
		t.Fatal("block 1 has no tx")
	}
	waitHealth(t, inst.internal, 200, waitFor)

	proxy.freeze()
	start := time.Now()
	waitHealth(t, inst.internal, 503, 15*time.Second)
	t.Logf("/health unhealthy %v after the freeze", time.Since(start).Round(time.Millisecond))
	for _, path := range []string{"/api/v2/estimatefee/1", "/api/v2/tx-specific/" + blk.Txs[0].Txid} {
		code, body, took := timedRequest(t, "GET", inst.base+path, "")
		if code != http.StatusServiceUnavailable || took > 3*time.Second {
			t.Errorf("GET %s with the node frozen: %d after %v, want 503 within 3s: %s", path, code, took, body)
		}
	}
	for _, path := range []string{"/api/v2", "/api/v2/block-index/1"} {
		code, body, took := timedRequest(t, "GET", inst.base+path, "")
		if code != 200 || took > 3*time.Second {
			t.Errorf("GET %s with the node frozen: %d after %v, want 200 within 3s: %s", path, code, took, body)
		}
	}

	proxy.thaw()
	start = time.Now()
	waitHealth(t, inst.internal, 200, 15*time.Second)
	t.Logf("/health healthy %v after the thaw", time.Since(start).Round(time.Millisecond))
}
