package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/static"
)

// The explorer's error pages and formatting against a stand-in service
// (every page is rendered against a real index in the root package's
// e2e_explorer tests).

type explorerFake struct {
	api.Service
	txErr error
}

func (f *explorerFake) Info(context.Context) (*api.WsInfo, error) {
	return &api.WsInfo{Name: "Testcoin", Shortcut: "TST", Decimals: 8}, nil
}

func (f *explorerFake) Capabilities() api.Capabilities { return api.Capabilities{} }

// CurrentFiatRates: no rates, as a service without fiat_rates answers.
func (f *explorerFake) CurrentFiatRates(context.Context, []string, string) (*api.FiatTicker, error) {
	return nil, &api.Error{Msg: "No tickers found!"}
}

func (f *explorerFake) Tx(context.Context, string) (*api.Tx, error) {
	if f.txErr == nil {
		panic("boom: secret-detail")
	}
	return nil, f.txErr
}

// Errors become pages in one place: unknown objects 404, mistakes 400 with
// their message, an unreachable node 503, anything else (panics included)
// 500, logged, without details on the page.
func TestExplorerErrorPages(t *testing.T) {
	for _, c := range []struct {
		name   string
		err    error
		status int
		shows  string
		logged string
	}{
		{"unknown tx", &api.Error{Msg: "Transaction 'ab' not found", Err: bchain.ErrTxNotFound}, 404, "Transaction 'ab' not found", ""},
		{"search miss", &api.Error{Msg: "No match", Err: api.ErrNotFound}, 404, "No match", ""},
		{"bad id", &api.Error{Msg: "Invalid txid 'x'"}, 400, "Invalid txid 'x'", ""},
		{"node down", fmt.Errorf("rpc getrawtransaction: %w: dial tcp secret-detail", bchain.ErrNodeUnavailable), 503, "not responding", "node unavailable"},
		{"timeout", fmt.Errorf("secret-detail: %w", context.DeadlineExceeded), 503, "took too long", "timed out"},
		{"node timeout", fmt.Errorf("rpc: %w: %w", bchain.ErrNodeUnavailable, context.DeadlineExceeded), 503, "not responding", "node unavailable"},
		{"our fault", errors.New("corrupt row secret-detail"), 500, "Something went wrong", "page failed"},
		{"panic", nil, 500, "Something went wrong", "panic in page"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logs bytes.Buffer
			p := NewPublic(&explorerFake{txErr: c.err}, PublicConfig{}, slog.New(slog.NewTextHandler(&logs, nil)), prometheus.NewRegistry())
			rec := httptest.NewRecorder()
			p.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/tx/"+strings.Repeat("ab", 32), nil))
			body := html.UnescapeString(rec.Body.String())
			if rec.Code != c.status || !strings.Contains(body, c.shows) {
				t.Fatalf("status %d, want %d showing %q:\n%s", rec.Code, c.status, c.shows, body)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
				t.Errorf("content type %q", ct)
			}
			if strings.Contains(body, "secret-detail") || strings.Contains(body, "goroutine") {
				t.Errorf("the page leaks internals:\n%s", body)
			}
			if !strings.Contains(body, `<form class="search"`) {
				t.Error("the error page lacks the explorer's layout")
			}
			if c.logged != "" && !strings.Contains(logs.String(), c.logged) {
				t.Errorf("not logged (%q): %s", c.logged, logs.String())
			}
		})
	}
}

// Assets carry a content hash in their links and are cached for good only
// under that hash; unknown paths outside /api get the explorer's 404 page.
func TestExplorerAssets(t *testing.T) {
	p := NewPublic(&explorerFake{}, PublicConfig{}, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	a := loadAssets(static.Assets)
	for _, name := range []string{"explorer.css", "explorer.js", "favicon.svg"} {
		rec := httptest.NewRecorder()
		p.Handler().ServeHTTP(rec, httptest.NewRequest("GET", a.url(name), nil))
		if rec.Code != 200 || rec.Body.Len() == 0 || !strings.Contains(rec.Header().Get("Cache-Control"), "immutable") {
			t.Errorf("%s: %d, %d bytes, cache %q", name, rec.Code, rec.Body.Len(), rec.Header().Get("Cache-Control"))
		}
		rec = httptest.NewRecorder()
		p.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/static/"+name+"?v=old", nil))
		if rec.Code != 200 || rec.Header().Get("Cache-Control") != "no-cache" {
			t.Errorf("%s with a stale version: %d, cache %q", name, rec.Code, rec.Header().Get("Cache-Control"))
		}
	}
	for _, path := range []string{"/static/nope.css", "/nothing/here"} {
		rec := httptest.NewRecorder()
		p.Handler().ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != 404 {
			t.Errorf("%s: %d", path, rec.Code)
		}
	}
	// An unknown API path answers as the status does (Blockbook's).
	rec := httptest.NewRecorder()
	p.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/api/v2/nothing", nil))
	st := httptest.NewRecorder()
	p.Handler().ServeHTTP(st, httptest.NewRequest("GET", "/api/v2", nil))
	if rec.Code != st.Code || rec.Body.String() != st.Body.String() || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		t.Errorf("unknown API path: %d %s %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
}

func TestExplorerFormatting(t *testing.T) {
	amounts := []struct {
		v        string
		decimals int
		want     string
	}{
		{"0", 8, "0"}, {"1", 8, "0.00000001"}, {"150000000", 8, "1.5"}, {"100000000", 8, "1"},
		{"-5", 8, "-0.00000005"}, {"2100000000000000", 8, "21000000"}, {"12", 0, "12"},
		{"1000000000000000001", 18, "1.000000000000000001"}, {"123456789", 8, "1.23456789"},
	}
	for _, c := range amounts {
		v, _ := new(big.Int).SetString(c.v, 10)
		if got := formatAmount(v, c.decimals); got != c.want {
			t.Errorf("formatAmount(%s, %d) = %q, want %q", c.v, c.decimals, got, c.want)
		}
	}
	if got := formatSigned(big.NewInt(700000), 8); got != "+0.007" {
		t.Errorf("formatSigned = %q", got)
	}
	for v, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", -1234567: "-1,234,567"} {
		if got := groupDigits(v); got != want {
			t.Errorf("groupDigits(%d) = %q, want %q", v, got, want)
		}
	}
	now := time.Unix(1_700_000_000, 0)
	for d, want := range map[time.Duration]string{
		0: "0 seconds ago", time.Second: "1 second ago", 90 * time.Second: "1 minute ago",
		3 * time.Hour: "3 hours ago", 47 * time.Hour: "47 hours ago", 72 * time.Hour: "3 days ago",
		100 * 24 * time.Hour: "3 months ago", 800 * 24 * time.Hour: "2 years ago", -time.Hour: "in the future",
	} {
		if got := formatAge(now, now.Add(-d).Unix()); got != want {
			t.Errorf("formatAge(%v) = %q, want %q", d, got, want)
		}
	}
	if got := formatUTC(1_700_000_000); got != "2023-11-14 22:13:20" {
		t.Errorf("formatUTC = %q", got)
	}
	if got := formatFeeRate(api.NewAmount(1015), 145); got != "7 sat/vB" {
		t.Errorf("fee rate %q", got)
	}
	if got := formatFeeRate(api.NewAmount(1000), 3); got != "333.33 sat/vB" {
		t.Errorf("fee rate %q", got)
	}
	if got := shortHash(strings.Repeat("0123456789", 6) + "abcd"); got != "01234567…6789abcd" {
		t.Errorf("shortHash = %q", got)
	}
	if got := formatBytes(9999); got != "9,999 bytes" {
		t.Errorf("formatBytes = %q", got)
	}
	if got := formatBytes(3_800_000); got != "3.8 MB" {
		t.Errorf("formatBytes = %q", got)
	}
}

func TestExplorerPager(t *testing.T) {
	r := httptest.NewRequest("GET", "/address/x?filter=inputs&page=2", nil)
	if p := newPager(r, 1, 1, false); p != nil {
		t.Errorf("a single page has paging: %+v", p)
	}
	p := newPager(r, 2, 5, false)
	if p.Prev != "/address/x?filter=inputs&page=1" || p.Next != "/address/x?filter=inputs&page=3" || p.Last != "/address/x?filter=inputs&page=5" || len(p.Nums) != 4 {
		t.Errorf("page 2 of 5: %+v", p)
	}
	if p := newPager(r, 5, 5, false); p.Next != "" || p.Last != "" || p.Prev == "" {
		t.Errorf("last page: %+v", p)
	}
	if p := newPager(r, 3, -1, true); p.Next == "" || p.Last != "" || p.Total != 0 {
		t.Errorf("unknown total with more: %+v", p)
	}
	if p := newPager(r, 3, -1, false); p.Next != "" {
		t.Errorf("unknown total without more: %+v", p)
	}
}

var _ http.Handler = (*assets)(nil)

// With -explorer set, tx and address pages redirect to the external
// explorer with the same path; other pages stay ours.
func TestExplorerExternalRedirect(t *testing.T) {
	for _, base := range []string{"https://explorer.example/", "https://explorer.example"} {
		p := NewPublic(&explorerFake{}, PublicConfig{ExplorerURL: base}, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
		for _, path := range []string{"/tx/ab12", "/address/bc1qxyz"} {
			rec := httptest.NewRecorder()
			p.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
			if rec.Code != http.StatusFound || rec.Header().Get("Location") != "https://explorer.example"+path {
				t.Errorf("%s with base %s: %d Location %q, want 302 to https://explorer.example%s", path, base, rec.Code, rec.Header().Get("Location"), path)
			}
		}
		rec := httptest.NewRecorder()
		p.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/search?q=", nil))
		if rec.Code == http.StatusFound {
			t.Errorf("search redirected with base %s; only tx and address pages should", base)
		}
	}
}
