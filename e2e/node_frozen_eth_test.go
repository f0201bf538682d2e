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
	"sync/atomic"
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
	mu        sync.Mutex
	thawed    chan struct{} // nil while the node answers
	next      http.Handler
	forwarded atomic.Int64 // requests that reached the node
	held      atomic.Int64 // requests that came while frozen
}

func (p *stallProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	ch := p.thawed
	p.mu.Unlock()
	if ch != nil {
		p.held.Add(1)
		select {
		case <-ch:
		case <-r.Context().Done():
			return
		}
	}
	p.forwarded.Add(1)
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

// TestEthNodeFrozen is TestNodeFrozen for an Ethereum-type node: heavy
// client load of node-bound requests on a healthy geth never fails /health
// or answers 503 (the probe has its own connections); the same probe (the
// node's latest block) notices a node that stops answering its JSON-RPC
// within rpc_timeout (about 5 s on an idle machine); requests already sent
// to it end then with 503, not after the freeze; node-bound requests
// answer 503 at once, index-only requests answer, no answer names the
// node's URL, and /health recovers once the node answers again.
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
		"rpc_timeout": 20, // rpcTimeout "block_addresses_to_keep": 100,
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
			Vin  []struct {
				Addresses []string `json:"addresses"`
			} `json:"vin"`
		} `json:"txs"`
	}
	getJSON(t, inst.base+"/api/v2/block/1", 200, &blk)
	if len(blk.Txs) == 0 || len(blk.Txs[0].Vin) == 0 || len(blk.Txs[0].Vin[0].Addresses) == 0 {
		t.Fatalf("block 1 has no tx with a sender: %+v", blk)
	}
	waitHealth(t, inst.internal, 200, waitFor)
	// Node-bound: the node's tx JSON, and an address's balance and nonce.
	nodeBound := []string{"/api/v2/tx-specific/" + blk.Txs[0].Txid, "/api/v2/address/" + blk.Txs[0].Vin[0].Addresses[0] + "?details=basic"}
	checkEthLoadKeepsHealth(t, inst.base, inst.internal, proxy, nodeBound)
	waitHealth(t, inst.internal, 200, waitFor)

	const rpcTimeout = 20 * time.Second
	proxy.freeze()
	start := time.Now()
	inFlight := sendInFlight(inst.base, append(nodeBound, nodeBound...))
	waitHealth(t, inst.internal, 503, rpcTimeout)
	down := time.Since(start)
	t.Logf("/health unhealthy %v after the freeze", down.Round(time.Millisecond))
	for range 2 * len(nodeBound) {
		a := <-inFlight // each made one node call or more, held (below)
		// Ended by the probe's verdict (3 s of slack for a loaded
		// machine), at the latest by rpc_timeout.
		if a.code != http.StatusServiceUnavailable || a.took > min(down+3*time.Second, rpcTimeout+2*time.Second) {
			t.Errorf("GET %s in flight when the node froze: %d after %v (node down after %v), want 503 then: %s", a.path, a.code, a.took, down, a.body)
		}
		if h := nodeURLIn(a.body, srv.URL, dev.HTTPURL, dev.WSURL); h != "" {
			t.Errorf("GET %s names the node (%s): %s", a.path, h, a.body)
		}
	}
	// The probe's calls and the in-flight ones were held by the frozen node.
	if held := proxy.held.Load(); held < int64(2*len(nodeBound))+1 {
		t.Errorf("%d calls reached the frozen node, want the %d in flight and the probe's", held, 2*len(nodeBound))
	}
	heldBefore := proxy.held.Load()
	for _, path := range append([]string{"/api/v2/estimatefee/1"}, nodeBound...) {
		code, body, took := timedRequest(t, "GET", inst.base+path, "")
		if code != http.StatusServiceUnavailable || took > 3*time.Second {
			t.Errorf("GET %s with the node frozen: %d after %v, want 503 within 3s: %s", path, code, took, body)
		}
		if h := nodeURLIn(body, srv.URL, dev.HTTPURL, dev.WSURL); h != "" {
			t.Errorf("GET %s names the node (%s): %s", path, h, body)
		}
	}
	for _, path := range []string{"/api/v2", "/api/v2/block-index/1"} {
		code, body, took := timedRequest(t, "GET", inst.base+path, "")
		if code != 200 || took > 3*time.Second {
			t.Errorf("GET %s with the node frozen: %d after %v, want 200 within 3s: %s", path, code, took, body)
		}
	}

	t.Logf("%d calls reached the frozen node while it was known down (the probe's only)", proxy.held.Load()-heldBefore)
	proxy.thaw()
	start = time.Now()
	waitHealth(t, inst.internal, 200, 15*time.Second)
	t.Logf("/health healthy %v after the thaw", time.Since(start).Round(time.Millisecond))
}
