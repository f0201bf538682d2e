package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/internal/listen"
)

// withDefaultLimits gives an in-process instance the limits its flags
// default to (the harness builds Options without parsing flags).
func withDefaultLimits(t *testing.T) func(*app.Options) {
	def, err := app.ParseFlags([]string{"-blockchaincfg=x"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return func(o *app.Options) {
		o.Limits, o.WsMaxConnsPerIP = def.Limits, def.WsMaxConnsPerIP
	}
}

// do sends a request with an optional X-Real-Ip (the test is a local
// proxy in front of blockbook, so that header names the client) and
// basic auth ("user:pass").
func do(t *testing.T, method, url, client, auth string, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if client != "" {
		req.Header.Set("X-Real-Ip", client)
	}
	if u, p, ok := strings.Cut(auth, ":"); ok {
		req.SetBasicAuth(u, p)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// burst sends n requests at once and counts the answers by status.
func burst(t *testing.T, n int, url, client string) map[int]int {
	t.Helper()
	var mu sync.Mutex
	codes, bodies := map[int]int{}, map[int]string{}
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, body := do(t, "GET", url, client, "", "")
			mu.Lock()
			codes[code]++
			bodies[code] = body
			mu.Unlock()
		}()
	}
	wg.Wait()
	if b, ok := bodies[http.StatusTooManyRequests]; ok {
		var e struct{ Error string }
		if json.Unmarshal([]byte(b), &e) != nil || !strings.Contains(e.Error, "Too many requests") {
			t.Errorf("429 answer is not a JSON error: %s", b)
		}
	}
	return codes
}

// With the default limits, one public client's 40 concurrent heavy
// requests get 429s while the operator's own tools and other clients are
// served; one client's websocket connections are capped; /admin is on the
// internal port only, fails closed without credentials and checks them.
func TestLimitsDefaults(t *testing.T) {
	t.Setenv("BB_ADMIN_USER", "")
	t.Setenv("BB_ADMIN_PASSWORD", "")
	st := startDemoStackWith(t, nil, withDefaultLimits(t))
	base := st.inst.base
	var blk struct {
		Txs []struct {
			Vout []struct {
				Addresses []string `json:"addresses"`
			} `json:"vout"`
		} `json:"txs"`
	}
	getJSON(t, base+"/api/v2/block/1", 200, &blk)
	heavyPath := "/api/v2/address/" + blk.Txs[0].Vout[0].Addresses[0] + "?details=txs&pageSize=1000"
	heavy := base + heavyPath

	codes := burst(t, 40, heavy, "203.0.113.50")
	if codes[200] == 0 || codes[http.StatusTooManyRequests] < 20 || codes[200]+codes[http.StatusTooManyRequests] != 40 {
		t.Fatalf("40 heavy requests from one client: %v", codes)
	}
	t.Logf("40 concurrent heavy requests: %v", codes)
	// Exempt from the per-client limits (no 429), a local peer still
	// meets the process-wide gate on expensive work: as many as it has
	// places run at once, and one that waits past its short wait for a
	// place may be shed with 503 (how many depends on the machine's speed).
	codes = burst(t, 40, heavy, "")
	if slots := min(40, listen.DefaultGateSlots()); codes[http.StatusTooManyRequests] != 0 || codes[200] < slots || codes[200]+codes[http.StatusServiceUnavailable] != 40 {
		t.Fatalf("a local peer naming no client is exempt from the per-client limits, and %d run at once: %v", slots, codes)
	}
	if c, _ := do(t, "GET", base+"/api/v2/", "203.0.113.51", "", ""); c != 200 {
		t.Fatalf("another client: %d", c)
	}
	if c, _ := do(t, "OPTIONS", heavy, "203.0.113.50", "", ""); c == http.StatusTooManyRequests {
		t.Fatal("a preflight was limited")
	}

	// Websocket connections per client: the default cap, then 429.
	hdr := http.Header{"Origin": {trezorOrigin}, "X-Real-Ip": {"203.0.113.60"}}
	def, _ := app.ParseFlags([]string{"-blockchaincfg=x"}, io.Discard)
	for i := 0; i < def.WsMaxConnsPerIP; i++ {
		if _, _, err := dialWS(t, base, hdr); err != nil {
			t.Fatalf("connection %d: %v", i+1, err)
		}
	}
	if _, resp, err := dialWS(t, base, hdr); err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("connection %d over the cap: %v %v", def.WsMaxConnsPerIP+1, err, resp)
	}
	newWS(t, base) // a local tool still connects

	// One connection may ask for 42 distinct accounts (Blockbook's
	// default); the next gets an error answer and the connection stays.
	addr := blk.Txs[0].Vout[0].Addresses[0]
	ws, _, err := dialWS(t, base, http.Header{"Origin": {trezorOrigin}, "X-Real-Ip": {"203.0.113.61"}})
	if err != nil {
		t.Fatal(err)
	}
	ws.ok("getAccountInfo", map[string]any{"descriptor": addr}, nil)
	for i := 2; i <= 42; i++ {
		ws.call("getAccountInfo", map[string]any{"descriptor": fmt.Sprintf("not-an-address-%d", i)})
	}
	ws.fails("getAccountInfo", map[string]any{"descriptor": "one-more"}, "Too many accounts on this connection (limit 42)")
	ws.ok("getAccountInfo", map[string]any{"descriptor": addr, "details": "txs"}, nil)
	ws.ok("getInfo", nil, nil)

	// /admin: not on the public port; 503 until both credentials are set.
	if c, _ := do(t, "GET", base+"/admin/runtime-settings/", "", "", ""); c == 200 || c == 503 || c == 401 {
		t.Fatalf("/admin on the public port: %d", c)
	}
	if c, _ := do(t, "GET", st.inst.internal+"/admin/ws-limit-exceeding-ips", "", "a:b", ""); c != http.StatusServiceUnavailable {
		t.Fatalf("/admin without credentials configured: %d", c)
	}

	// Restart with credentials on the synced index.
	st.inst.stop(t)
	t.Setenv("BB_ADMIN_USER", "admin")
	t.Setenv("BB_ADMIN_PASSWORD", " s3cret\n")
	st.inst = startInProcess(t, st.cfg, st.dataDir, withDefaultLimits(t))
	base, internal := st.inst.base, st.inst.internal
	h, hash := st.g.Tip()
	waitTip(t, base, h, hash.String(), st.inst.logs)
	heavy = base + heavyPath
	burst(t, 40, heavy, "203.0.113.50")
	for _, auth := range []string{"", "admin:wrong", "nobody:s3cret"} {
		if c, _ := do(t, "GET", internal+"/admin/ws-limit-exceeding-ips", "", auth, ""); c != http.StatusUnauthorized {
			t.Fatalf("/admin with credentials %q: %d", auth, c)
		}
	}
	c, body := do(t, "GET", internal+"/admin/ws-limit-exceeding-ips", "", "admin:s3cret", "")
	if c != 200 || !strings.Contains(body, `"ip":"203.0.113.50"`) {
		t.Fatalf("clients over the limits: %d %s", c, body)
	}
	settings := internal + "/admin/runtime-settings/ALLOWED_RPC_CALL_TO"
	for _, step := range []struct {
		method, body string
		code         int
		want         string
	}{
		{"GET", "", 200, `"source":"unset"`},
		{"POST", `{"value":" , "}`, 400, "lists no addresses"},
		{"POST", `{"value":"0xAbC"}`, 200, `"source":"override"`},
		{"GET", "", 200, `"value":"0xAbC"`},
		{"DELETE", "", 200, `"source":"unset"`},
	} {
		c, body := do(t, step.method, settings, "", "admin:s3cret", step.body)
		if c != step.code || !strings.Contains(body, step.want) {
			t.Fatalf("%s %s: %d %s, want %d %s", step.method, step.body, c, body, step.code, step.want)
		}
	}
	if c, body := do(t, "GET", internal+"/admin/runtime-settings/", "", "admin:s3cret", ""); c != 200 || !strings.Contains(body, "ALLOWED_EVM_CALL_METHODS") {
		t.Fatalf("all settings: %d %s", c, body)
	}
}
