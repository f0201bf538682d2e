package fiat

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/rocksdb"
	"github.com/openexplorer/blockbook/fiat/fiattest"
	"github.com/openexplorer/blockbook/internal/promreg"
)

const day = 24 * time.Hour

// t0 is a day start; the fake provider's clock is 5 hours into day 400.
var t0 = time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)

func dayN(n int) time.Time { return t0.Add(time.Duration(n) * day) }

func openDB(t *testing.T, dir string) *db.DB {
	t.Helper()
	d, err := rocksdb.Open(db.Options{Path: dir, ChainType: bchain.ChainBitcoinType, Coin: "Test", Network: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// provider serves 400 days of usd and eur closes (usd on day n: 1000+n,
// eur: 900+n), current rates for usd, eur, jpy and btc.
func provider(t *testing.T) *fiattest.Server {
	s := fiattest.New("bitcoin", dayN(400).Add(5*time.Hour))
	t.Cleanup(s.Close)
	s.SetSupported("btc", "eth", "usd", "eur", "jpy")
	s.SetCurrent(map[string]float64{"usd": 1500.5, "eur": 1400.25, "jpy": 210000, "btc": 1})
	for n := 0; n <= 400; n++ {
		s.AddDay("usd", dayN(n), float64(1000+n))
		s.AddDay("eur", dayN(n), float64(900+n))
	}
	return s
}

type testDownloader struct {
	*Downloader
	sleeps []time.Duration
	reg    *prometheus.Registry
}

func newTestDownloader(t *testing.T, d *db.DB, s *fiattest.Server, mod func(*Config)) *testDownloader {
	t.Helper()
	cfg := Config{URL: s.URL(), Coin: "bitcoin", VsCurrencies: []string{"usd", "eur", "btc", "xyz"}, Period: time.Hour}
	if mod != nil {
		mod(&cfg)
	}
	td := &testDownloader{reg: prometheus.NewRegistry()}
	cfg.Metrics = td.reg
	cfg.Log = slog.New(slog.DiscardHandler)
	td.Downloader = New(d, cfg)
	// The clock moves only by the downloader's own (recorded) sleeps.
	var mu sync.Mutex
	var slept time.Duration
	td.now = func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return dayN(400).Add(5*time.Hour + slept)
	}
	td.cg.sleep = func(ctx context.Context, wait time.Duration) error {
		mu.Lock()
		td.sleeps = append(td.sleeps, wait)
		slept += wait
		mu.Unlock()
		return ctx.Err()
	}
	return td
}

// metricValue reads a counter or gauge.
var metricValue = promreg.Value

func (td *testDownloader) requests(endpoint, status string) float64 {
	return metricValue(td.m.requests.WithLabelValues(endpoint, status))
}

// countEndpoint counts the provider's requests whose URI contains part.
func countEndpoint(s *fiattest.Server, part string) int {
	n := 0
	for _, r := range s.Requests() {
		if strings.Contains(r, part) {
			n++
		}
	}
	return n
}

func TestCurrentRates(t *testing.T) {
	s := provider(t)
	d := openDB(t, t.TempDir())
	defer d.Close()
	td := newTestDownloader(t, d, s, nil)
	var got []*db.FiatTicker
	td.OnCurrent(func(ft *db.FiatTicker) { got = append(got, ft) })
	ft, err := td.updateCurrent(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// Supported ∩ fiat_rates_vs_currencies, in the provider's order.
	if q := s.Requests(); !slices.Contains(q, "/api/v3/simple/price?ids=bitcoin&vs_currencies=btc%2Cusd%2Ceur") {
		t.Errorf("requests %v", q)
	}
	want := map[string]float64{"usd": 1500.5, "eur": 1400.25, "btc": 1}
	stored, err := db.ReadFiatCurrent(d)
	if err != nil || stored == nil || stored.Time != dayN(400).Add(5*time.Hour).Unix() || !equalRates(stored.Rates, want) {
		t.Fatalf("stored current ticker %+v %v", stored, err)
	}
	if len(got) != 1 || got[0] != ft || !equalRates(ft.Rates, want) {
		t.Fatalf("callback got %+v", got)
	}
	// The supported list is fetched once, not per update.
	if _, err := td.updateCurrent(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := countEndpoint(s, "supported_vs_currencies"); n != 1 {
		t.Errorf("supported_vs_currencies asked %d times", n)
	}
	if td.requests("simple/price", "success") != 2 || len(got) != 2 {
		t.Errorf("simple/price successes %v, callbacks %d", td.requests("simple/price", "success"), len(got))
	}
	if keys := s.APIKeys(); len(keys) != 0 {
		t.Errorf("API key headers without a key: %v", keys)
	}
}

func equalRates(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// The first run fetches the range the free plan allows (365 days) for every
// currency; a restart asks only for the days since the last stored one.
func TestHistoryFirstRunThenResume(t *testing.T) {
	s := provider(t)
	s.AddDay("btc", dayN(399), 1) // btc has a single day of history
	dir := t.TempDir()
	d := openDB(t, dir)
	td := newTestDownloader(t, d, s, nil)
	if err := td.updateHistory(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, cur := range []string{"usd", "eur", "btc"} {
		if n := countEndpoint(s, "vs_currency="+cur+"&days=365&interval=daily") + countEndpoint(s, "days=365&interval=daily&vs_currency="+cur); n != 1 {
			t.Errorf("%s: %d history requests of 365 days in %v", cur, n, s.Requests())
		}
	}
	// Days 36..400 are in range (365 days back from day 400 05:00); the
	// "now" point is not a day and is left out.
	got, err := db.FindFiatTickers(d, []int64{0, dayN(35).Unix(), dayN(400).Unix(), dayN(400).Unix() + 1}, "")
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Time != dayN(36).Unix() || got[1].Time != dayN(36).Unix() || got[2].Rates["usd"] != 1400 || got[2].Rates["eur"] != 1300 || got[3] != nil {
		t.Fatalf("stored history %+v %+v %+v %+v", got[0], got[1], got[2], got[3])
	}
	if d399, _ := db.ReadFiatTicker(d, dayN(399).Unix()); d399 == nil || d399.Rates["btc"] != 1 || d399.Rates["usd"] != 1399 {
		t.Fatalf("day 399: %+v", d399)
	}
	if len(td.sleeps) != 3 || td.sleeps[0] != 2100*time.Millisecond {
		t.Errorf("pauses between history requests %v", td.sleeps)
	}
	if g := metricValue(td.m.updated.WithLabelValues("historical")); g != float64(td.now().Unix()) {
		t.Errorf("historical update gauge %v", g)
	}
	d.Close()

	// Three days later, after a restart: only the missing days are asked,
	// three for usd and eur, four for btc, stored last on day 399.
	for n := 400; n <= 403; n++ {
		s.AddDay("usd", dayN(n), float64(1000+n))
		s.AddDay("eur", dayN(n), float64(900+n))
		s.AddDay("btc", dayN(n), 1)
	}
	s.SetNow(dayN(403).Add(2 * time.Hour))
	d = openDB(t, dir)
	defer d.Close()
	td = newTestDownloader(t, d, s, nil)
	td.now = func() time.Time { return dayN(403).Add(2 * time.Hour) }
	before := len(s.Requests())
	if err := td.updateHistory(t.Context()); err != nil {
		t.Fatal(err)
	}
	charts := chartRequests(s, before)
	want := []string{
		"/api/v3/coins/bitcoin/market_chart?days=4&interval=daily&vs_currency=btc",
		"/api/v3/coins/bitcoin/market_chart?days=3&interval=daily&vs_currency=usd",
		"/api/v3/coins/bitcoin/market_chart?days=3&interval=daily&vs_currency=eur",
	}
	if !slices.Equal(charts, want) {
		t.Fatalf("resumed requests %v, want %v", charts, want)
	}
	last, err := d.LastFiatTicker("eur")
	if err != nil || last == nil || last.Time != dayN(403).Unix() || last.Rates["eur"] != 1303 || last.Rates["usd"] != 1403 {
		t.Fatalf("last after resume %+v %v", last, err)
	}
	// Up to date: a second run the same day asks nothing.
	before = len(s.Requests())
	if err := td.updateHistory(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := countEndpointSince(s, before, "market_chart"); n != 0 {
		t.Errorf("%d history requests when up to date", n)
	}
}

func countEndpointSince(s *fiattest.Server, from int, part string) int {
	n := 0
	for _, r := range s.Requests()[from:] {
		if strings.Contains(r, part) {
			n++
		}
	}
	return n
}

// On the pro plan without a mirror, the bootstrap asks for the whole
// history ("max") with the pro key header; a provider that refuses the
// range (error 10012) ends the run quietly, storing nothing and asking no
// further currency.
func TestHistoryPlansAndRangeLimit(t *testing.T) {
	s := provider(t)
	d := openDB(t, t.TempDir())
	defer d.Close()
	td := newTestDownloader(t, d, s, func(c *Config) { c.Plan, c.APIKey = PlanPro, "k-pro" })
	td.booting.Store(true)
	if err := td.updateHistory(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := countEndpoint(s, "days=max"); n != 3 {
		t.Errorf("%d requests of days=max: %v", n, s.Requests())
	}
	if first, _ := db.FindFiatTickers(d, []int64{0}, "usd"); first[0] == nil || first[0].Time != t0.Unix() {
		t.Errorf("full history not stored: %+v", first[0])
	}
	if keys := s.APIKeys(); len(keys) == 0 || keys[0] != "x-cg-pro-api-key: k-pro" {
		t.Errorf("key headers %v", keys)
	}

	s2 := provider(t)
	s2.SetRangeLimit(365)
	d2 := openDB(t, t.TempDir())
	defer d2.Close()
	td2 := newTestDownloader(t, d2, s2, func(c *Config) { c.Plan, c.APIKey = PlanPro, "k" })
	td2.booting.Store(true)
	if err := td2.updateHistory(t.Context()); err != nil {
		t.Fatalf("range limit: %v", err)
	}
	if n := countEndpoint(s2, "market_chart"); n != 1 {
		t.Errorf("%d history requests after the range error", n)
	}
	if last, _ := d2.LastFiatTicker(""); last != nil {
		t.Errorf("stored %+v", last)
	}
	// The demo key of the free plan goes in its own header.
	s3 := provider(t)
	d3 := openDB(t, t.TempDir())
	defer d3.Close()
	td3 := newTestDownloader(t, d3, s3, func(c *Config) { c.Plan, c.APIKey = PlanFree, "k-demo" })
	if _, err := td3.updateCurrent(t.Context()); err != nil {
		t.Fatal(err)
	}
	if keys := s3.APIKeys(); len(keys) != 2 || keys[1] != "x-cg-demo-api-key: k-demo" {
		t.Errorf("demo key headers %v", keys)
	}
}

// HTTP 429 is retried after Retry-After, or a doubling backoff from 60 s
// without one, and gives up after MaxAttempts with ErrThrottled.
func TestThrottling(t *testing.T) {
	s := provider(t)
	d := openDB(t, t.TempDir())
	defer d.Close()
	td := newTestDownloader(t, d, s, nil)
	s.Throttle(2, "7")
	if _, err := td.updateCurrent(t.Context()); err != nil {
		t.Fatalf("after two 429s: %v", err)
	}
	if !slices.Equal(td.sleeps, []time.Duration{7 * time.Second, 7 * time.Second}) {
		t.Errorf("waits %v, want Retry-After's 7 s twice", td.sleeps)
	}
	if td.requests("supported_vs_currencies", "throttled") != 2 {
		t.Errorf("throttled count %v", td.requests("supported_vs_currencies", "throttled"))
	}

	td.sleeps = nil
	s.Throttle(10, "")
	_, err := td.updateCurrent(t.Context())
	if !errors.Is(err, ErrThrottled) {
		t.Fatalf("persistent 429: %v", err)
	}
	if !slices.Equal(td.sleeps, []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute}) {
		t.Errorf("backoff %v", td.sleeps)
	}
	// A persistently throttled history run stops (to be retried later).
	s.Throttle(100, "1")
	if err := td.updateHistory(t.Context()); !errors.Is(err, ErrThrottled) {
		t.Errorf("history under throttling: %v", err)
	}

	// A Retry-After above MaxBackoff is capped; HTTP dates are understood.
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	if got := parseRetryAfter(now.Add(90*time.Second).Format(http.TimeFormat), now); got != 90*time.Second {
		t.Errorf("HTTP-date Retry-After: %v", got)
	}
	if got := parseRetryAfter("soon", now); got != -1 {
		t.Errorf("bad Retry-After: %v", got)
	}
	td.sleeps = nil
	td.cfg.MaxBackoff = 30 * time.Second
	s.Throttle(1, "3600")
	if _, err := td.updateCurrent(t.Context()); err != nil || !slices.Equal(td.sleeps, []time.Duration{30 * time.Second}) {
		t.Errorf("capped wait %v, err %v", td.sleeps, err)
	}
}

// Malformed answers store nothing; a bad history of one currency does not
// stop the others.
func TestMalformedAnswers(t *testing.T) {
	s := provider(t)
	d := openDB(t, t.TempDir())
	defer d.Close()
	td := newTestDownloader(t, d, s, nil)
	called := 0
	td.OnCurrent(func(*db.FiatTicker) { called++ })
	for _, body := range []string{`{"bitcoin":`, `["usd"]`, `{"bitcoin":{"usd":"1.5"}}`, `{}`, `{"ethereum":{"usd":2000}}`} {
		s.Malform("simple/price", body)
		if _, err := td.updateCurrent(t.Context()); !errors.Is(err, ErrMalformed) {
			t.Errorf("simple/price %s: %v", body, err)
		}
	}
	s.Malform("simple/price", "")
	if cur, _ := db.ReadFiatCurrent(d); cur != nil || called != 0 {
		t.Fatalf("stored %+v, callbacks %d", cur, called)
	}

	s.Malform("market_chart", `{"prices":"none"}`)
	if err := td.updateHistory(t.Context()); err != nil {
		t.Fatal(err)
	}
	if last, _ := d.LastFiatTicker(""); last != nil {
		t.Fatalf("stored from a malformed chart: %+v", last)
	}
	if e := metricValue(td.m.errors.WithLabelValues("historical")); e != 3 {
		t.Errorf("historical errors %v", e)
	}
	s.Malform("market_chart", "")
	// Points that are not whole days, zero rates and junk are skipped.
	s.AddDay("btc", dayN(390), 0)
	s.AddDay("btc", dayN(391), 1)
	if err := td.updateHistory(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.FindFiatTickers(d, []int64{dayN(390).Unix()}, "btc"); got[0] == nil || got[0].Time != dayN(391).Unix() {
		t.Errorf("btc history %+v", got[0])
	}
	s.Malform("supported_vs_currencies", `["aaa","bbb"]`)
	if err := td.updateHistory(t.Context()); !errors.Is(err, ErrMalformed) {
		t.Errorf("no wanted vs-currency: %v", err)
	}
}

// Run downloads at once when nothing is stored, calls back with each new
// ticker, downloads again on Refresh, and returns when ctx ends.
func TestRunRefresh(t *testing.T) {
	s := provider(t)
	d := openDB(t, t.TempDir())
	defer d.Close()
	td := newTestDownloader(t, d, s, nil)
	td.now = time.Now
	tickers := make(chan *db.FiatTicker, 4)
	td.OnCurrent(func(ft *db.FiatTicker) { tickers <- ft })
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- td.Run(ctx) }()
	first := <-tickers
	if first.Rates["usd"] != 1500.5 {
		t.Fatalf("first ticker %+v", first)
	}
	if err := td.Run(ctx); !errors.Is(err, ErrRunning) {
		t.Errorf("second Run: %v", err)
	}
	s.SetCurrent(map[string]float64{"usd": 1600, "eur": 1450})
	td.Refresh()
	if second := <-tickers; second.Rates["usd"] != 1600 || second.Has("btc") {
		t.Fatalf("refreshed ticker %+v", second)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A stored ticker of the current period is used as is after a restart;
// an older one (or none) is replaced at once.
func TestInitialWait(t *testing.T) {
	s := provider(t)
	d := openDB(t, t.TempDir())
	defer d.Close()
	td := newTestDownloader(t, d, s, nil)
	now := td.now()
	if w := td.initialWait(); w != 0 {
		t.Errorf("nothing stored: wait %v", w)
	}
	if err := d.WriteFiatCurrent(&db.FiatTicker{Time: now.Add(-2 * time.Hour).Unix(), Rates: map[string]float64{"usd": 1}}); err != nil {
		t.Fatal(err)
	}
	if w := td.initialWait(); w != 0 {
		t.Errorf("old ticker: wait %v", w)
	}
	if err := d.WriteFiatCurrent(&db.FiatTicker{Time: now.Add(-time.Minute).Unix(), Rates: map[string]float64{"usd": 1}}); err != nil {
		t.Fatal(err)
	}
	if w := td.initialWait(); w < time.Hour || w > time.Hour+2*time.Second {
		t.Errorf("fresh ticker: wait %v", w)
	}
}
