package e2e

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// The documented bounds (docs/api.md, Conventions), spelled out here so
// that the test states the contract rather than reading it from the code.
const (
	maxTimestamps = 10_000
	maxCurrencies = 200
)

// Issue 13, findings 4 and 5, against the demo stack: list parameters are
// bounded (getFiatRatesForTimestamps answered 100,000 timestamps before),
// JSON answers are nosniff, a CORS preflight is answered 204 with its
// headers, and getBlockHash tells a height no block can have from one
// beyond the tip.
func TestE2EListBoundsAndHeaders(t *testing.T) {
	st := startDemoStack(t, nil)
	base := st.inst.base
	ws := newWS(t, base)

	// 100,000 timestamps (a 1 MB frame, well under the 4 MiB frame limit)
	// are refused with the bound; the bound itself is answered in full.
	ts := make([]int64, 100_000)
	for i := range ts {
		ts[i] = 1_700_000_000 + int64(i)*60
	}
	wsRefused(t, ws, "getFiatRatesForTimestamps", map[string]any{"timestamps": ts, "currencies": []string{"usd"}},
		"Too many timestamps: 100000, at most 10000 per request")
	var res api.FiatTickers
	ws.ok("getFiatRatesForTimestamps", map[string]any{"timestamps": ts[:maxTimestamps]}, &res)
	if len(res.Tickers) != maxTimestamps {
		t.Errorf("at the bound: %d tickers, want %d", len(res.Tickers), maxTimestamps)
	}
	many := make([]string, maxCurrencies+1)
	for i := range many {
		many[i] = "usd"
	}
	wsRefused(t, ws, "getCurrentFiatRates", map[string]any{"currencies": many}, "Too many currencies: 201")
	wsRefused(t, ws, "getBalanceHistory", map[string]any{"descriptor": demoAddress(t, st), "currencies": many}, "Too many currencies: 201")

	// REST: the same bounds, as a 400 with nosniff.
	list := strings.TrimSuffix(strings.Repeat("1700000000,", maxTimestamps+1), ",")
	resp := restGet(t, base+"/api/v2/multi-tickers/?timestamp="+list)
	if resp.code != http.StatusBadRequest || !strings.Contains(resp.body, "Too many timestamps: 10001") {
		t.Errorf("multi-tickers with 10,001 timestamps: %d %.200s", resp.code, resp.body)
	}
	resp = restGet(t, base+"/api/v2/balancehistory/"+demoAddress(t, st)+"?fiatcurrency="+strings.Join(many, ","))
	if resp.code != http.StatusBadRequest || !strings.Contains(resp.body, "Too many currencies: 201") {
		t.Errorf("balancehistory with 201 currencies: %d %.200s", resp.code, resp.body)
	}
	for _, path := range []string{"/api/v2", "/api/v2/tx/<script>nothex", "/api/v2/multi-tickers/?timestamp=" + list} {
		if r := restGet(t, base+path); r.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%.60s: %d without nosniff", path, r.code)
		}
	}

	// A CORS preflight: 204 with the CORS headers, no handler run.
	req, err := http.NewRequest(http.MethodOptions, base+"/api/v2/sendtx/", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Origin", "https://wallet.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "content-type")
	pre, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	pre.Body.Close()
	if pre.StatusCode != http.StatusNoContent || pre.Header.Get("Access-Control-Allow-Origin") != "*" ||
		!strings.Contains(pre.Header.Get("Access-Control-Allow-Methods"), "POST") ||
		!strings.Contains(strings.ToLower(pre.Header.Get("Access-Control-Allow-Headers")), "content-type") {
		t.Errorf("preflight: %d %v", pre.StatusCode, pre.Header)
	}

	// getBlockHash: out of range versus beyond the tip.
	tip, _ := st.g.Tip()
	for _, h := range []int64{-1, 1 << 32} {
		ws.fails("getBlockHash", map[string]any{"height": h}, "Block height "+strconv.FormatInt(h, 10)+" is out of range")
	}
	var bh struct {
		Hash *string `json:"hash"`
	}
	ws.ok("getBlockHash", map[string]any{"height": int64(tip) + 1}, &bh)
	if bh.Hash == nil || *bh.Hash != "" {
		t.Errorf("getBlockHash beyond the tip: %v, want \"\"", bh.Hash)
	}
}

// wsRefused requires an error answer starting with want; unlike fails it
// does not print the (huge) parameters.
func wsRefused(t *testing.T, ws *wsClient, method string, params any, want string) {
	t.Helper()
	_, data := ws.call(method, params)
	if msg := wsErrorOf(data); !strings.HasPrefix(msg, want) {
		t.Errorf("%s: answer %s, want an error starting %q", method, truncateBytes(data, 300), want)
	}
}

type restAnswer struct {
	code   int
	header http.Header
	body   string
}

func restGet(t *testing.T, url string) restAnswer {
	t.Helper()
	c := &http.Client{Timeout: 30 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %.80s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return restAnswer{resp.StatusCode, resp.Header, string(b)}
}

// demoAddress is an address of the demo chain.
func demoAddress(t *testing.T, st *demoStack) string {
	t.Helper()
	a, err := st.g.Address(chaingen.P2WPKH, chaingen.DemoIndex)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
