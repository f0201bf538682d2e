package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/internal/promreg"
)

// TestNodeFrozen freezes btcd with SIGSTOP under a synced blockbook: the
// liveness probe must turn /health unhealthy, node-bound requests must
// fail fast with 503 (or answer from the tx cache), index-only requests
// must keep answering, and /health must recover once the node is thawed.
// The bounds are generous failure guards (issue 13 asks for well under
// them), not speed measurements.
func TestNodeFrozen(t *testing.T) {
	st := startDemoStack(t, nil)
	base, internal := st.inst.base, st.inst.internal

	// Pick a confirmed tx and an address of it while the node answers.
	var blk struct {
		Txs []struct {
			Txid string `json:"txid"`
			Vout []struct {
				Addresses []string `json:"addresses"`
			} `json:"vout"`
		} `json:"txs"`
	}
	getJSON(t, base+"/api/v2/block/2", 200, &blk)
	if len(blk.Txs) == 0 || len(blk.Txs[0].Vout) == 0 || len(blk.Txs[0].Vout[0].Addresses) == 0 {
		t.Fatalf("block 2 has no tx with an address: %+v", blk)
	}
	txid, addr := blk.Txs[0].Txid, blk.Txs[0].Vout[0].Addresses[0]
	var raw string
	getJSON(t, base+"/api/v2/rawtx/"+txid, 200, &raw)
	getJSON(t, base+"/api/v2/tx/"+txid, 200, nil) // puts the tx in the tx cache
	waitHealth(t, internal, 200, waitFor)

	if err := st.node.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	thawed := false
	thaw := func() {
		if !thawed {
			thawed = true
			if err := st.node.Signal(syscall.SIGCONT); err != nil {
				t.Error(err)
			}
		}
	}
	t.Cleanup(thaw) // runs before the node's own cleanup stops it

	start := time.Now()
	waitHealth(t, internal, 503, 15*time.Second)
	t.Logf("/health unhealthy %v after the freeze", time.Since(start).Round(time.Millisecond))

	if m := metricsText(t, internal); !strings.Contains(m, "\nblockbook_node_responding 0\n") {
		t.Errorf("/metrics with the node frozen lacks blockbook_node_responding 0")
	}

	// Node-bound requests: a clean 503 at once.
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/api/v2/estimatefee/2", ""},
		{"GET", "/api/v2/tx-specific/" + txid, ""},
		{"GET", "/api/v2/sendtx/" + raw, ""},
		{"POST", "/api/v2/sendtx/", raw},
		{"GET", "/api/v2/rawblock/2", ""},
	} {
		code, body, took := timedRequest(t, c.method, base+c.path, c.body)
		if code != http.StatusServiceUnavailable || took > 3*time.Second {
			t.Errorf("%s %s with the node frozen: %d after %v, want 503 within 3s: %s", c.method, c.path, code, took, body)
		}
	}
	// Index-only requests and txs already cached: answered as usual.
	for _, path := range []string{
		"/api/v2", "/api/v2/block-index/1", "/api/v2/address/" + addr,
		"/api/v2/address/" + addr + "?details=txids", "/api/v2/utxo/" + addr, "/api/v2/tx/" + txid,
	} {
		code, body, took := timedRequest(t, "GET", base+path, "")
		if code != 200 || took > 3*time.Second {
			t.Errorf("GET %s with the node frozen: %d after %v, want 200 within 3s: %s", path, code, took, body)
		}
		if path == "/api/v2" && !strings.Contains(body, `"error"`) {
			t.Errorf("status with the node frozen does not report a backend error: %s", body)
		}
	}

	// The websocket: node-bound methods answer an error at once, getInfo
	// (index and cached node info) answers as usual.
	ws := newWS(t, base)
	for _, c := range []struct {
		method string
		params any
	}{
		{"estimateFee", map[string]any{"blocks": []int{2}}},
		{"sendTransaction", map[string]any{"hex": raw}},
		{"getInfo", nil},
	} {
		start := time.Now()
		_, data := ws.call(c.method, c.params)
		took, msg := time.Since(start), wsErrorOf(data)
		wantErr := c.method != "getInfo"
		if took > 3*time.Second || wantErr != strings.Contains(msg, "node is not responding") {
			t.Errorf("websocket %s with the node frozen: %s after %v", c.method, truncateBytes(data, 300), took)
		}
	}

	thaw()
	start = time.Now()
	waitHealth(t, internal, 200, 15*time.Second)
	t.Logf("/health healthy %v after the thaw", time.Since(start).Round(time.Millisecond))
	if m := metricsText(t, internal); !strings.Contains(m, "\nblockbook_node_responding 1\n") {
		t.Errorf("/metrics after the thaw lacks blockbook_node_responding 1")
	}
	code, body, _ := timedRequest(t, "GET", base+"/api/v2/rawblock/2", "")
	if code != 200 {
		t.Errorf("rawblock after the thaw: %d: %s", code, body)
	}
}

// metricsText fetches the internal /metrics page, without the coin label
// every sample of ours has (TestE2EFollowsTipByNotification checks it).
func metricsText(t *testing.T, internal string) string {
	t.Helper()
	resp, err := httpClient.Get(internal + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return promreg.WithoutCoin(string(b))
}

// waitHealth polls the internal /health until it answers want.
func waitHealth(t *testing.T, internal string, want int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	last := ""
	for time.Now().Before(deadline) {
		code, body, _ := timedRequest(t, "GET", internal+"/health", "")
		if code == want {
			return
		}
		last = body
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("/health did not answer %d within %v; last answer: %s", want, within, last)
}

// timedRequest sends one request and returns its status, body and time;
// a transport error (e.g. the client's timeout) is status 0.
func timedRequest(t *testing.T, method, url, body string) (int, string, time.Duration) {
	t.Helper()
	code, b, took, err := requestWithin(method, url, body, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return code, b, took
}

// requestWithin is timedRequest with the client's timeout, for goroutines:
// an error only for a request that cannot be made.
func requestWithin(method, url, body string, timeout time.Duration) (int, string, time.Duration, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return 0, "", 0, err
	}
	c := &http.Client{Timeout: timeout}
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return 0, err.Error(), time.Since(start), nil
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err.Error(), time.Since(start), nil
	}
	if !json.Valid(b) {
		return resp.StatusCode, "not JSON: " + string(b), time.Since(start), nil
	}
	return resp.StatusCode, string(b), time.Since(start), nil
}
