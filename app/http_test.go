package app

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/internal/selfsigned"
	"github.com/openexplorer/blockbook/server"
	"github.com/openexplorer/blockbook/tools/apitest"
)

// testCert writes a self-signed <base>.crt/.key for 127.0.0.1 and returns
// a pool trusting it.
func testCert(t *testing.T, base string) *x509.CertPool {
	t.Helper()
	pool, err := selfsigned.WritePair(base)
	if err != nil {
		t.Fatal(err)
	}
	return pool
}

// A missing or unreadable pair is a configuration error naming the flag.
func TestLoadTLSErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "half.crt"), []byte("not a cert"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(dir, "none"), filepath.Join(dir, "half")} {
		if _, err := loadTLS(p); !errors.Is(err, bchain.ErrConfig) || !strings.Contains(err.Error(), "-certfile") {
			t.Errorf("%s: %v", p, err)
		}
	}
}

// Under -public=addr/bb/ over TLS, the explorer's links, assets,
// redirects and the websocket all work below the prefix, and nothing is
// served outside it.
func TestPublicUnderPrefixOverTLS(t *testing.T) {
	f := apitest.New(t, apitest.Options{})
	svc := api.NewUtxoService(f.DB, f.Backend, nil, api.Config{Log: apitest.Quiet(), BlockFilters: f.BlockFilters})
	reg := prometheus.NewRegistry()
	ws := server.NewWebsocket(svc, server.WebsocketConfig{}, apitest.Quiet(), reg)
	_, prefix := binding("127.0.0.1:0/bb", "", 0)
	pub := server.NewPublic(svc, server.PublicConfig{Websocket: ws, Wrap: func(h http.Handler) http.Handler { return withPrefix(prefix, true, h) }}, apitest.Quiet(), reg)
	certBase := filepath.Join(t.TempDir(), "blockbook")
	pool := testCert(t, certBase)
	tlsCfg, err := loadTLS(certBase)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = pub.Serve(tls.NewListener(ln, tlsCfg)) }()
	t.Cleanup(func() { _ = pub.Shutdown(t.Context()) })
	base := "https://" + ln.Addr().String()
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) (*http.Response, string) {
		t.Helper()
		resp, err := client.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
	resp, page := get("/bb/")
	if resp.StatusCode != 200 || !strings.Contains(page, `href="/bb/blocks"`) || strings.Contains(page, `href="/blocks"`) {
		t.Fatalf("index under the prefix: %d\n%.2000s", resp.StatusCode, page)
	}
	// Every root-relative link of the page stays under the prefix and works.
	for _, m := range regexp.MustCompile(`(?:href|src|action)="(/[^"]*)"`).FindAllStringSubmatch(page, -1) {
		if !strings.HasPrefix(m[1], "/bb/") {
			t.Errorf("link outside the prefix: %s", m[1])
			continue
		}
		if m[1] == "/bb/search" {
			continue // a form target, needs a query
		}
		if resp, _ := get(m[1]); resp.StatusCode != 200 {
			t.Errorf("link %s: %d", m[1], resp.StatusCode)
		}
	}
	if resp, _ := get("/bb/search?q=0"); resp.StatusCode/100 != 3 || !strings.HasPrefix(resp.Header.Get("Location"), "/bb/block/") {
		t.Errorf("search redirect: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, _ := get("/bb"); resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != "/bb/" {
		t.Errorf("bare prefix: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, body := get("/bb/api/v2"); resp.StatusCode != 200 || !strings.Contains(body, `"blockbook"`) {
		t.Errorf("API under the prefix: %d %.200s", resp.StatusCode, body)
	}
	for _, p := range []string{"/blocks", "/api/v2", "/bbx/"} {
		if resp, _ := get(p); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s outside the prefix: %d", p, resp.StatusCode)
		}
	}
	d := websocket.Dialer{TLSClientConfig: &tls.Config{RootCAs: pool}}
	conn, _, err := d.Dial("wss://"+ln.Addr().String()+"/bb/websocket", nil)
	if err != nil {
		t.Fatalf("websocket under the prefix: %v", err)
	}
	defer conn.Close()
	if err := conn.WriteJSON(map[string]any{"id": "1", "method": "getInfo", "params": map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	var msg struct {
		ID   string `json:"id"`
		Data struct {
			BestHeight uint32 `json:"bestHeight"`
		} `json:"data"`
	}
	if err := conn.ReadJSON(&msg); err != nil || msg.ID != "1" || msg.Data.BestHeight == 0 {
		t.Fatalf("getInfo under the prefix: %+v %v", msg, err)
	}
}

// -computedbstats lists every column family with its rows; -repair finds
// nothing to repair in a sound index.
func TestComputeDBStatsAndVerify(t *testing.T) {
	f := apitest.New(t, apitest.Options{})
	var out strings.Builder
	if err := computeDBStats(t.Context(), f.DB, &out, apitest.Quiet()); err != nil {
		t.Fatal(err)
	}
	for _, cf := range []string{"height", "addresses", "addressBalance", "txAddresses", "all"} {
		if !regexp.MustCompile(`(?m)^\s*` + cf + `\s+[1-9]\d*\s`).MatchString(out.String()) {
			t.Errorf("no rows for %s:\n%s", cf, out.String())
		}
	}
	var logs strings.Builder
	if err := verifyIndex(t.Context(), f.DB, slog.New(slog.NewTextHandler(&logs, nil))); err != nil || !strings.Contains(logs.String(), "nothing needs repair") {
		t.Fatalf("sound index: %v\n%s", err, logs.String())
	}
}
