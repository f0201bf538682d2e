package fiat

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/rocksdb"
	"github.com/openexplorer/blockbook/fiat/fiattest"
)

// Outside the bootstrap every daily fetch is Blockbook's: a series with
// nothing stored, or stored last more than 365 days ago, asks 365 days
// (capped) whatever the plan, one day missing is the tip, more a backfill;
// all of them go to the mirror, none to the API. Before the cap, the pro
// plan asked "max" and 390 days.
func TestHistoryRangeKinds(t *testing.T) {
	api, mirror := provider(t), provider(t)
	for n := 0; n <= 400; n++ {
		mirror.AddDay("jpy", dayN(n), float64(100+n))
		mirror.AddDay("btc", dayN(n), 1)
	}
	d := openDB(t, t.TempDir())
	defer d.Close()
	err := d.WriteFiatTickers([]*db.FiatTicker{
		{Time: dayN(10).Unix(), Rates: map[string]float64{"eur": 1}},
		{Time: dayN(398).Unix(), Rates: map[string]float64{"jpy": 1}},
		{Time: dayN(399).Unix(), Rates: map[string]float64{"btc": 1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	td := newTestDownloader(t, d, api, func(c *Config) {
		c.Plan, c.APIKey, c.BootstrapURL = PlanPro, "k", mirror.URL()
		c.VsCurrencies = []string{"usd", "eur", "jpy", "btc"}
	})
	if err := td.updateHistory(t.Context()); err != nil {
		t.Fatal(err)
	}
	charts := chartRequests(mirror, 0)
	const chart = "/api/v3/coins/bitcoin/market_chart?"
	want := []string{
		chart + "days=1&interval=daily&vs_currency=btc",
		chart + "days=365&interval=daily&vs_currency=usd",
		chart + "days=365&interval=daily&vs_currency=eur",
		chart + "days=2&interval=daily&vs_currency=jpy",
	}
	if !slices.Equal(charts, want) || len(api.Requests()) != 0 {
		t.Fatalf("mirror %q, want %q; API %q", charts, want, api.Requests())
	}
	for kind, n := range map[string]float64{rangeCapped: 2, rangeBackfill: 1, rangeTip: 1, rangeHistorical: 0} {
		if got := metricValue(td.m.cgRanges.WithLabelValues(kind)); got != n {
			t.Errorf("range requests %s: %v, want %v", kind, got, n)
		}
	}
	// usd and eur 365 days each (36..400), jpy 399 and 400, btc 400.
	for phase, n := range map[string]float64{phaseBackfill: 732, phaseTip: 1, phaseBootstrap: 0} {
		if got := metricValue(td.m.fetchedUnits.WithLabelValues(phase)); got != n {
			t.Errorf("fetched units %s: %v, want %v", phase, got, n)
		}
	}
	if dayRate(t, d, 36, "eur") != 936 || dayRate(t, d, 35, "eur") != -1 || dayRate(t, d, 10, "eur") != 1 {
		t.Errorf("eur days 10, 35, 36: %v %v %v", dayRate(t, d, 10, "eur"), dayRate(t, d, 35, "eur"), dayRate(t, d, 36, "eur"))
	}
	// In the bootstrap, a series with nothing stored asks the whole history.
	td.booting.Store(true)
	if days, kind := td.historyDays(nil); days != "max" || kind != rangeHistorical {
		t.Errorf("bootstrap range %q %q", days, kind)
	}
}

// chartRequests is the market_chart requests s served from the from'th on.
func chartRequests(s *fiattest.Server, from int) []string {
	var out []string
	for _, r := range s.Requests()[from:] {
		if strings.Contains(r, "market_chart") {
			out = append(out, r)
		}
	}
	return out
}

// Cloudflare's ban (error code 1015) fails the request at once: one
// request, no wait, no throttle window, counted as banned; the finer
// series are not asked in that turn, and the next turn asks again. Before,
// the ban page was taken for throttling and retried after a minute.
func TestBanFastFails(t *testing.T) {
	s := provider(t)
	s.SetIntraday("usd", intradayUsd)
	d := openDB(t, t.TempDir())
	defer d.Close()
	td := newTestDownloader(t, d, s, nil)
	s.BanPath("simple/price", 1)
	_, err := td.updateCurrent(t.Context())
	if !errors.Is(err, ErrBanned) {
		t.Fatalf("banned current rates: %v", err)
	}
	if n := countEndpoint(s, "simple/price"); n != 1 || len(td.sleeps) != 0 || !td.cg.gate.end().IsZero() {
		t.Errorf("%d requests, waits %v, window %v", n, td.sleeps, td.cg.gate.end())
	}
	if td.requests("simple/price", "banned") != 1 || metricValue(td.m.cgRequests.WithLabelValues("simple/price", "banned")) != 1 {
		t.Error("the ban is not counted")
	}

	s.BanPath("simple/price", 1)
	td.currentCycle(t.Context())
	if n := countEndpoint(s, "market_chart"); n != 0 {
		t.Errorf("%d finer-series requests after a ban in the same turn", n)
	}
	_ = td.cg.sleep(t.Context(), time.Hour) // the period to the next turn
	td.currentCycle(t.Context())
	if n := countEndpoint(s, "simple/price"); n != 3 {
		t.Errorf("%d current-rate requests in three turns", n)
	}
	if n := countEndpoint(s, "market_chart"); n != 2 {
		t.Errorf("%d finer-series requests in the turn after the ban", n)
	}
	if cur, _ := db.ReadFiatCurrent(d); cur == nil || cur.Rates["usd"] != 1500.5 {
		t.Errorf("current after the ban: %+v", cur)
	}

	// A ban of the tokens' current rates keeps the finer series from the
	// API in that turn too.
	ts := tokenProvider(t)
	ts.SetIntraday("usd", intradayUsd)
	d2 := openDB(t, t.TempDir())
	defer d2.Close()
	tt := newTokenDownloader(t, d2, ts, nil)
	ts.BanPath("simple/price?ids=norate", 1)
	tt.currentCycle(t.Context())
	if n, m := countEndpoint(ts, "simple/price?ids=norate"), countEndpoint(ts, "market_chart"); n != 1 || m != 0 {
		t.Errorf("token rates banned: %d token requests, %d finer-series requests", n, m)
	}
	if cur, _ := db.ReadFiatCurrent(d2); cur == nil || cur.Rates["usd"] != 1500.5 {
		t.Errorf("the coin's rates after the tokens' ban: %+v", cur)
	}

	// A banned history run asks nothing more and waits at least 30 min.
	s.BanPath("market_chart", 100)
	before := len(s.Requests())
	err = td.historyCycle(t.Context())
	if !errors.Is(err, ErrBanned) || countEndpointSince(s, before, "market_chart") != 1 {
		t.Errorf("banned history: %v, %q", err, s.Requests()[before:])
	}
	td.cfg.Period = 15 * time.Minute // production's
	if w := td.historyRetryWait(err); w != banBackoff {
		t.Errorf("wait after a ban %v", w)
	}
	if w := td.historyRetryWait(ErrThrottled); w != td.cfg.Period {
		t.Errorf("wait after throttling %v", w)
	}
	// Newly learned tokens do not cut the ban's backoff short; after
	// other failures they start the next run.
	if td.historyWake(err) != nil {
		t.Error("the backoff after a ban can be woken")
	}
	if td.historyWake(ErrThrottled) == nil || td.historyWake(nil) == nil {
		t.Error("the wait after throttling or a run cannot be woken")
	}
}

// The startup reconcile counts Blockbook's reasons: a ban ends it (one
// request, nothing stored), a failed series is fetch_failed, a gap of 90
// days or more gap_too_large (in days), and a budget that runs out
// budget_exhausted (the series left).
func TestReconcileUnableReasons(t *testing.T) {
	api, mirror := bootstrapPair(t)
	d := openDB(t, t.TempDir())
	defer d.Close()
	storeDays(t, d, 300, 398, 350)
	td := newTestDownloader(t, d, api, withMirror(mirror))
	td.cfg.Reconcile = true
	unable := func(reason string) float64 {
		return metricValue(td.m.unable.WithLabelValues(phaseReconcile, reason))
	}
	mirror.BanPath("market_chart", 100)
	if _, err := td.reconcile(t.Context()); !errors.Is(err, ErrBanned) || countEndpoint(mirror, "market_chart") != 1 {
		t.Errorf("banned reconcile: %v, %q", err, mirror.Requests())
	}
	if unable(unableProviderBanned) != 1 || dayRate(t, d, 350, "usd") != -1 {
		t.Errorf("provider_banned %v, day 350 %v", unable(unableProviderBanned), dayRate(t, d, 350, "usd"))
	}
	mirror.BanPath("market_chart", 0)

	mirror.FailPath("vs_currency=eur", 1)
	if filled, err := td.reconcile(t.Context()); err != nil || filled != 1 || unable(unableFetchFailed) != 1 {
		t.Errorf("reconcile with a failed series: %d %v, fetch_failed %v", filled, err, unable(unableFetchFailed))
	}
	if got := metricValue(td.m.fetchedUnits.WithLabelValues(phaseReconcile)); got != 1 {
		t.Errorf("fetched units reconcile %v", got)
	}

	d2 := openDB(t, t.TempDir())
	defer d2.Close()
	storeDays(t, d2, 200, 398, rangeInts(250, 340)...)
	td.db = d2
	if _, err := td.reconcile(t.Context()); err != nil || unable(unableGapTooLarge) != 91 {
		t.Errorf("gap: %v, gap_too_large %v", err, unable(unableGapTooLarge))
	}

	d3 := openDB(t, t.TempDir())
	defer d3.Close()
	storeDays(t, d3, 300, 398, 350)
	td.db = d3
	td.cg.sleep = func(ctx context.Context, _ time.Duration) error { <-ctx.Done(); return ctx.Err() }
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := td.reconcile(ctx); !errors.Is(err, errReconcileAborted) || unable(unableBudgetExhausted) != 2 {
		t.Errorf("budget: %v, budget_exhausted %v (btc fetched, usd and eur left)", err, unable(unableBudgetExhausted))
	}
}

// A low-priority (history) request throttled while a current-rates request
// is in flight polls through the window in 1 s steps instead of sleeping
// to its end at once, so that the current request goes first when the
// window ends; its retry then fires as soon as the window has passed, with
// the current request possibly still in flight (as in Blockbook, which
// holds the history only while the window is open).
func TestThrottledHistoryYields(t *testing.T) {
	s := provider(t)
	d := openDB(t, t.TempDir())
	defer d.Close()
	td := newTestDownloader(t, d, s, nil)
	done := td.cg.gate.enter() // a current-rates request in flight
	s.Throttle(1, "3")
	if _, err := td.cg.marketChart(lowPriority(t.Context()), "bitcoin", "usd", "2"); err != nil {
		t.Fatal(err)
	}
	done()
	if !slices.Equal(td.sleeps, []time.Duration{time.Second, time.Second, time.Second}) {
		t.Errorf("the throttled history request waited %v, want 1 s polls", td.sleeps)
	}
}

// The reconcile loads the vs-currency and token lists; the first history
// run after it uses them instead of asking again.
func TestReconcileListsServeFirstRun(t *testing.T) {
	mirror := tokenProvider(t)
	api := provider(t)
	d := openDB(t, t.TempDir())
	defer d.Close()
	storeDays(t, d, 300, 398, 392)
	td := newTokenDownloader(t, d, api, withMirror(mirror))
	td.cfg.Reconcile = true
	td.reconcileAtStart(t.Context())
	if err := td.historyCycle(t.Context()); err != nil {
		t.Fatal(err)
	}
	if a, b := countEndpoint(mirror, "supported_vs_currencies"), countEndpoint(mirror, "coins/list"); a != 1 || b != 1 {
		t.Errorf("lists asked %d and %d times by the reconcile and the first run", a, b)
	}
	if err := td.historyCycle(t.Context()); err != nil {
		t.Fatal(err)
	}
	if a, b := countEndpoint(mirror, "supported_vs_currencies"), countEndpoint(mirror, "coins/list"); a != 2 || b != 2 {
		t.Errorf("the second run reloaded the lists %d and %d times in all", a, b)
	}
	if got := metricValue(td.m.fetchedTokens.WithLabelValues(phaseReconcile)); got != 2 {
		t.Errorf("token series reconciled %v", got)
	}
}

// A first run whose token pass is skipped (the coin's pass throttled)
// does not leave the reconcile's token list to the next run, a period or
// a day later: that run loads it again.
func TestReconcileListsExpireWithFirstRun(t *testing.T) {
	mirror := tokenProvider(t)
	api := provider(t)
	d := openDB(t, t.TempDir())
	defer d.Close()
	storeDays(t, d, 300, 398, 392)
	td := newTokenDownloader(t, d, api, withMirror(mirror))
	td.cfg.Reconcile = true
	td.reconcileAtStart(t.Context())
	mirror.ThrottlePath("market_chart", td.cfg.MaxAttempts)
	if err := td.historyCycle(t.Context()); !errors.Is(err, ErrThrottled) {
		t.Fatalf("first run: %v, want throttled", err)
	}
	if n := countEndpoint(mirror, "coins/list"); n != 1 {
		t.Fatalf("coins/list asked %d times by the reconcile and the skipped token pass", n)
	}
	if err := td.historyCycle(t.Context()); err != nil {
		t.Fatal(err)
	}
	if a, b := countEndpoint(mirror, "supported_vs_currencies"), countEndpoint(mirror, "coins/list"); a != 2 || b != 2 {
		t.Errorf("the second run asked the lists %d and %d times in all, want 2 and 2 (coins/list reloaded)", a, b)
	}
}

// A reconcile whose write fails (the datadir below its reserve) counts no
// fetched rates or tokens; the pass that stores them does.
func TestReconcileCountsStoredOnly(t *testing.T) {
	var free atomic.Int64
	free.Store(1 << 40)
	d, err := rocksdb.Open(db.Options{Path: t.TempDir(), ChainType: bchain.ChainBitcoinType, Coin: "Test", Network: "test",
		MinFreeBytes: 1 << 20, FreeSpace: func(string) (int64, error) { return free.Load(), nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	storeDays(t, d, 300, 398, 392)
	td := newTokenDownloader(t, d, provider(t), withMirror(tokenProvider(t)))
	counts := func() (float64, float64) {
		return metricValue(td.m.fetchedUnits.WithLabelValues(phaseReconcile)), metricValue(td.m.fetchedTokens.WithLabelValues(phaseReconcile))
	}
	free.Store(0)
	if _, err := td.reconcile(t.Context()); !errors.Is(err, db.ErrDiskFull) {
		t.Fatalf("reconcile on a full disk: %v", err)
	}
	if u, k := counts(); u != 0 || k != 0 {
		t.Errorf("a failed write counted %v rates and %v tokens fetched", u, k)
	}
	free.Store(1 << 40)
	filled, err := td.reconcile(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if u, k := counts(); u != float64(filled) || k != 2 || filled == 0 {
		t.Errorf("stored %d rates; counted %v rates and %v tokens", filled, u, k)
	}
}

// Blockbook's fiat series are exported under its names with its labels.
func TestBlockbookMetricNames(t *testing.T) {
	s := provider(t)
	d := openDB(t, t.TempDir())
	defer d.Close()
	td := newTestDownloader(t, d, s, nil)
	s.Throttle(1, "1")
	td.currentCycle(t.Context())
	if err := td.historyCycle(t.Context()); err != nil {
		t.Fatal(err)
	}
	td.m.unableTo(phaseReconcile, unableNoBaseTicker, 1)
	td.m.fetched(phaseReconcile, 1, 1)
	families, err := td.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName())
			}
			sort.Strings(labels)
			got[f.GetName()] = strings.Join(labels, ",")
		}
	}
	want := map[string]string{
		"blockbook_coingecko_requests":                 "endpoint,status",
		"blockbook_coingecko_range_requests":           "range",
		"blockbook_fiat_rates_update_duration_seconds": "stage,status",
		"blockbook_fiat_rates_fetched_units_total":     "phase",
		"blockbook_fiat_rates_fetched_tokens_total":    "phase",
		"blockbook_fiat_rates_unable_total":            "phase,reason",
		"blockbook_fiat_rates_requests_total":          "endpoint,status",
	}
	for name, labels := range want {
		if got[name] != labels {
			t.Errorf("%s: labels %q, want %q", name, got[name], labels)
		}
	}
	if v := metricValue(td.m.cgRequests.WithLabelValues("supported_vs_currencies", "throttle")); v != 1 {
		t.Errorf("Blockbook's throttle status %v", v)
	}
	// The first run is the bootstrap: three whole histories.
	if v := metricValue(td.m.cgRanges.WithLabelValues(rangeHistorical)); v != 3 {
		t.Errorf("historical ranges %v", v)
	}
}
