package e2e

import (
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/internal/promreg"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
)

// Bad input gets a clear 400 with a JSON error and never a 500 or a panic:
// malformed ids, huge parameters and bodies, random garbage paths.
func TestE2EBadInput(t *testing.T) {
	inst := startDemoStack(t, nil).inst
	check := func(method, path string, body io.Reader, want int, contains string) {
		t.Helper()
		req, err := http.NewRequest(method, inst.base+path, body)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := httpClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, truncateBytes([]byte(path), 80), err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want || !strings.Contains(string(b), contains) {
			t.Errorf("%s %s: %d %s, want %d containing %q", method, truncateBytes([]byte(path), 80), resp.StatusCode, truncateBytes(b, 200), want, contains)
		}
	}
	big := strings.Repeat("a", 9<<20)
	check("POST", "/api/v2/sendtx/", strings.NewReader(big), 400, "Request body too large")
	check("POST", "/api/v2/sendtx/", strings.NewReader("00"), 400, "Invalid transaction")
	check("GET", "/api/v2/address/"+strings.Repeat("1", 5000), nil, 400, "Invalid address")
	check("GET", "/api/v2/tx/"+strings.Repeat("f", 64)+"00", nil, 400, "Invalid txid")
	check("GET", "/api/v2/block/"+strings.Repeat("9", 30), nil, 400, "Invalid block height or hash")
	check("GET", "/api/v2/block-index/4294967296", nil, 200, `{"blockHash":""}`) // beyond any tip, as Blockbook
	check("GET", "/api/v2/block-index/12x", nil, 400, "Invalid block height")
	check("GET", "/api/v2/nosuch/thing", nil, 200, `"blockbook"`) // the status, as Blockbook
	check("POST", "/api/v2/tx/", nil, 400, "Missing txid")
	check("GET", "/api/v2/estimatefee/abc", nil, 400, "Invalid number of blocks")
	check("GET", "/api/v2/utxo/"+url.PathEscape("bcrt1q\x00"), nil, 400, "Invalid address")
	check("GET", "/api/v2/feestats/99999", nil, 400, "Block not found")
	check("GET", "/api/v2/address/mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn?page=-5&pageSize=abc&from=x&to=-1&details=zzz&filter=%00", nil, 200, `"page":1`)

	// Random garbage in every path parameter and query: never a 5xx.
	rng := rand.New(rand.NewSource(1))
	endpoints := []string{"block-index", "block", "rawblock", "tx", "tx-specific", "rawtx", "address", "utxo", "sendtx", "estimatefee", "feestats"}
	for i := 0; i < 600; i++ {
		junk := make([]byte, rng.Intn(90))
		for j := range junk {
			junk[j] = byte(rng.Intn(256))
		}
		path := fmt.Sprintf("/api/v2/%s/%s?page=%d&pageSize=%s", endpoints[i%len(endpoints)], url.PathEscape(string(junk)), rng.Int63()-rng.Int63(), url.QueryEscape(string(junk)))
		resp, err := httpClient.Get(inst.base + path)
		if err != nil {
			t.Fatalf("GET %q: %v", path, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 500 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("GET %q: %d %s", path, resp.StatusCode, b)
		}
	}
	if strings.Contains(inst.logs.String(), "panic") {
		t.Fatalf("a handler panicked:\n%s", inst.logs)
	}
}

// New blocks are picked up through btcd's websocket notifications: with
// polling set to a minute, the index still follows the tip at once.
func TestE2EFollowsTipByNotification(t *testing.T) {
	st := startDemoStack(t, map[string]any{"block_poll_interval_ms": 60_000})
	node, g, inst := st.node, st.g, st.inst
	waitLog(t, inst, "subscribed to node notifications")

	var worst time.Duration
	for i := 0; i < 5; i++ {
		pay, err := g.CreatePayment([]chaingen.Output{{Address: "bcrt1qqnqfauktjmp40g86fe08uy7r8fxzcnuj8s5nnr", Value: 5000}}, 5)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.AddBlock(pay); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		submit(t, g, node, g.Height())
		h, hash := g.Tip()
		waitTipWithin(t, inst.base, h, hash.String(), 20*time.Second, inst.logs)
		worst = max(worst, time.Since(start))
	}
	t.Logf("worst latency from submitblock to indexed, with polling at 60 s: %s", worst)

	// The internal server exposes the metrics and a healthy /health.
	resp, err := httpClient.Get(inst.internal + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	// Every sample of ours carries Blockbook's constant coin label; the Go
	// runtime's do not, as in Blockbook.
	if !strings.Contains(string(raw), "\nblockbook_best_height{coin=\"Regtest\"} 245\n") || strings.Contains(string(raw), "go_goroutines{") {
		t.Errorf("metrics lack the coin label on ours or have it on the runtime's:\n%.3000s", raw)
	}
	metrics := promreg.WithoutCoin(string(raw))
	for _, m := range []string{"blockbook_best_height 245", "blockbook_backend_best_height 245", "blockbook_sync_lag_blocks 0",
		"blockbook_index_txs_total", "blockbook_rpc_latency_seconds_bucket", "blockbook_api_requests_total", "blockbook_db_size_bytes"} {
		if !strings.Contains(metrics, m) {
			t.Errorf("metrics lack %q", m)
		}
	}
	var health struct{ Status string }
	getJSON(t, inst.internal+"/health", 200, &health)
	if health.Status != "ok" {
		t.Fatalf("health: %+v", health)
	}
}

func waitLog(t *testing.T, inst *instance, s string) {
	t.Helper()
	for i := 0; !strings.Contains(inst.logs.String(), s); i++ {
		if i > 1000 {
			t.Fatalf("log never said %q", s)
		}
		waitBriefly()
	}
}

// waitTipWithin is waitTip with a tighter failure guard.
func waitTipWithin(t *testing.T, base string, height int32, hash string, d time.Duration, logs fmt.Stringer) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		var bi struct {
			BlockHash string `json:"blockHash"`
		}
		if code, _ := tryGet(fmt.Sprintf("%s/api/v2/block-index/%d", base, height), &bi); code == 200 && bi.BlockHash == hash {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("block %d not indexed within %s (polling is 60 s, so notifications did not work)\n%s", height, d, tail(logs.String(), 20))
}

// After a bulk initial sync (several rounds in a small memory budget) the
// API answers equal the ledger, the index equals a per-block sync byte for
// byte, and the steady state follows new blocks through notifications.
func TestE2EBulkSyncThenFollow(t *testing.T) {
	// The node listens on regtest's default P2P port on its own loopback
	// IP, as a node run with its defaults next to blockbook would.
	node := startNodeWith(t, regtest.Options{Host: regtest.RandomLoopback(), Listen: true, DefaultP2PPort: true})
	g := demoChain(t)
	if err := g.Extend(300, 40); err != nil {
		t.Fatal(err)
	}
	submit(t, g, node, 1)
	// Blocks come over the node's P2P port, found without p2p_address.
	cfg := writeConfig(t, node, map[string]any{"block_poll_interval_ms": 60_000})
	dir := t.TempDir()
	inst := startInProcess(t, cfg, dir, func(o *app.Options) { o.BulkThreshold = 50; o.SyncMemoryMB = 64 })
	h, hash := g.Tip()
	waitTip(t, inst.base, h, hash.String(), inst.logs)
	if n := strings.Count(inst.logs.String(), "bulk round committed"); n < 2 {
		t.Fatalf("expected several bulk rounds, got %d\n%s", n, tail(inst.logs.String(), 20))
	}
	if !strings.Contains(inst.logs.String(), "auto-detected") || strings.Contains(inst.logs.String(), "falling back to RPC") {
		t.Fatalf("blocks did not come over the auto-detected P2P port\n%s", tail(inst.logs.String(), 20))
	}
	checkLedger(t, inst.base, g.Ledger())
	waitLog(t, inst, "subscribed to node notifications")
	for i := 0; i < 3; i++ {
		pay, err := g.CreatePayment([]chaingen.Output{{Address: "bcrt1qqnqfauktjmp40g86fe08uy7r8fxzcnuj8s5nnr", Value: 7000}}, 5)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := g.AddBlock(pay); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		submit(t, g, node, g.Height())
		h, hash = g.Tip()
		waitTipWithin(t, inst.base, h, hash.String(), 20*time.Second, inst.logs)
		t.Logf("block %d indexed %s after submitblock", h, time.Since(start).Round(time.Millisecond))
	}
	inst.stop(t)
	// The reference is a sync over RPC only.
	rpcOnly := writeConfig(t, node, map[string]any{"block_poll_interval_ms": 60_000, "p2p_address": "none"})
	compareIndexes(t, dir, referenceIndex(t, rpcOnly, h, hash.String()))
}
