package fiat

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/fiat/fiattest"
)

// bootstrapPair is the plan's API, which (as the public plan) refuses
// history beyond 365 days and has the days shifted (usd 5000+n), and the
// bootstrap mirror with the whole history (provider's: usd 1000+n).
func bootstrapPair(t *testing.T) (api, mirror *fiattest.Server) {
	api, mirror = provider(t), provider(t)
	api.SetRangeLimit(365)
	for n := 0; n <= 400; n++ {
		api.AddDay("usd", dayN(n), float64(5000+n))
	}
	return api, mirror
}

func withMirror(mirror *fiattest.Server) func(*Config) {
	return func(c *Config) { c.BootstrapURL = mirror.URL() }
}

// maxRequests counts the mirror's full-history requests of cur.
func maxRequests(s *fiattest.Server, cur string) int {
	return countEndpoint(s, "/coins/bitcoin/market_chart?days=max&interval=daily&vs_currency="+cur)
}

func bootstrapState(t *testing.T, d *db.DB) db.FiatBootstrap {
	t.Helper()
	st, found, err := db.ReadFiatBootstrap(d)
	if err != nil || !found {
		t.Fatalf("bootstrap marker found %v, err %v", found, err)
	}
	return st
}

func dayRate(t *testing.T, d *db.DB, n int, cur string) float64 {
	t.Helper()
	ft, err := db.ReadFiatTicker(d, dayN(n).Unix())
	if err != nil {
		t.Fatal(err)
	}
	if ft == nil {
		return -1
	}
	if r, ok := ft.Rates[cur]; ok {
		return r
	}
	return -1
}

// The first run asks every currency's whole history of the mirror, once,
// 100 ms apart, and nothing daily of the API; the marker is then complete
// and the next run asks only what is new, of the mirror too.
func TestBootstrapFullHistoryFromMirror(t *testing.T) {
	api, mirror := bootstrapPair(t)
	d := openDB(t, t.TempDir())
	defer d.Close()
	td := newTestDownloader(t, d, api, withMirror(mirror))
	if err := td.historyCycle(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, cur := range []string{"btc", "usd", "eur"} {
		if n := maxRequests(mirror, cur); n != 1 {
			t.Errorf("%s: %d full-history requests in %q", cur, n, mirror.Requests())
		}
	}
	if q := api.Requests(); len(q) != 0 {
		t.Errorf("API asked %q", q)
	}
	// Day 0 is beyond the API's 365 days: only the mirror has it.
	if r0, r400 := dayRate(t, d, 0, "usd"), dayRate(t, d, 400, "eur"); r0 != 1000 || r400 != 1300 {
		t.Errorf("stored usd day 0 %v, eur day 400 %v", r0, r400)
	}
	if st := bootstrapState(t, d); !st.Complete || st.Attempts != 0 {
		t.Errorf("marker %+v", st)
	}
	for _, s := range td.sleeps {
		if s != 100*time.Millisecond {
			t.Errorf("history requests spaced %v, not the mirror's 100ms: %v", s, td.sleeps)
			break
		}
	}
	// The next day's run: one day of usd and eur (btc has no history: the
	// range a new currency gets outside the bootstrap), all of the mirror.
	before := len(mirror.Requests())
	api.SetNow(dayN(401).Add(5 * time.Hour))
	mirror.SetNow(dayN(401).Add(5 * time.Hour))
	mirror.AddDay("usd", dayN(401), 1401)
	mirror.AddDay("eur", dayN(401), 1301)
	td.now = func() time.Time { return dayN(401).Add(5 * time.Hour) }
	if err := td.historyCycle(t.Context()); err != nil {
		t.Fatal(err)
	}
	got := mirror.Requests()[before:]
	want := []string{
		"/api/v3/simple/supported_vs_currencies",
		"/api/v3/coins/bitcoin/market_chart?days=365&interval=daily&vs_currency=btc",
		"/api/v3/coins/bitcoin/market_chart?days=1&interval=daily&vs_currency=usd",
		"/api/v3/coins/bitcoin/market_chart?days=1&interval=daily&vs_currency=eur",
	}
	if !slices.Equal(got, want) || len(api.Requests()) != 0 {
		t.Errorf("second run asked the mirror %q, the API %q", got, api.Requests())
	}
	if r := dayRate(t, d, 401, "usd"); r != 1401 {
		t.Errorf("usd day 401: %v", r)
	}
}

// A bootstrap killed midway resumes after a restart: the marker says it is
// not complete although days are stored, so the currencies not yet stored
// still get their whole history, and those stored are not asked again.
func TestBootstrapResumesAfterKill(t *testing.T) {
	api, mirror := bootstrapPair(t)
	dir := t.TempDir()
	d := openDB(t, dir)
	td := newTestDownloader(t, d, api, withMirror(mirror))
	ctx, kill := context.WithCancel(t.Context())
	sleep := td.cg.sleep
	gaps := 0
	td.cg.sleep = func(c context.Context, w time.Duration) error {
		if gaps++; gaps == 2 { // after btc's and usd's charts
			kill()
		}
		return sleep(c, w)
	}
	if err := td.historyCycle(ctx); err == nil {
		t.Fatal("killed run: no error")
	}
	if st := bootstrapState(t, d); st.Complete || st.Attempts != 0 {
		t.Fatalf("marker after the kill %+v (a shutdown is no failed attempt)", st)
	}
	if dayRate(t, d, 0, "usd") != 1000 || dayRate(t, d, 0, "eur") != -1 {
		t.Fatalf("before the restart: usd %v, eur %v", dayRate(t, d, 0, "usd"), dayRate(t, d, 0, "eur"))
	}
	d.Close()
	d = openDB(t, dir)
	defer d.Close()
	td = newTestDownloader(t, d, api, withMirror(mirror))
	if err := td.historyCycle(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n, m := maxRequests(mirror, "eur"), maxRequests(mirror, "usd"); n != 1 || m != 1 {
		t.Errorf("full history of eur asked %d times, of usd %d: %q", n, m, mirror.Requests())
	}
	if r := dayRate(t, d, 0, "eur"); r != 900 {
		t.Errorf("eur day 0 after the resume: %v", r)
	}
	if st := bootstrapState(t, d); !st.Complete {
		t.Errorf("marker %+v", st)
	}
}

// An index with history but no marker (from before it) is not
// bootstrapped again; an empty one is.
func TestBootstrapMarkerOfOlderIndex(t *testing.T) {
	api, mirror := bootstrapPair(t)
	d := openDB(t, t.TempDir())
	defer d.Close()
	if err := d.WriteFiatTickers([]*db.FiatTicker{{Time: dayN(399).Unix(), Rates: map[string]float64{"usd": 1}}}); err != nil {
		t.Fatal(err)
	}
	td := newTestDownloader(t, d, api, withMirror(mirror))
	if err := td.historyCycle(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := countEndpoint(mirror, "days=max"); n != 0 {
		t.Errorf("%d full-history requests on an index with history", n)
	}
	if st := bootstrapState(t, d); !st.Complete {
		t.Errorf("marker %+v", st)
	}
}

// Three failed bootstrap runs give it up (Blockbook's limit): the marker is
// complete with its attempts reset, the third failure is no error (the
// next run is the next day's), and later runs ask a failing currency only
// the plan's range, not the whole history.
func TestBootstrapGivesUpAfterThreeFailures(t *testing.T) {
	api, mirror := bootstrapPair(t)
	mirror.ThrottlePath("vs_currency=eur", 1000)
	d := openDB(t, t.TempDir())
	defer d.Close()
	td := newTestDownloader(t, d, api, func(c *Config) {
		c.BootstrapURL = mirror.URL()
		c.MaxAttempts = 1
	})
	for run := 1; run <= 3; run++ {
		err := td.historyCycle(t.Context())
		st := bootstrapState(t, d)
		switch {
		case run < 3 && (err == nil || st.Complete || st.Attempts != run):
			t.Fatalf("run %d: err %v, marker %+v", run, err, st)
		case run == 3 && (err != nil || !st.Complete || st.Attempts != 0):
			t.Fatalf("run 3: err %v, marker %+v", err, st)
		}
	}
	if n := maxRequests(mirror, "eur"); n != 3 {
		t.Errorf("full history of eur asked %d times", n)
	}
	if n := maxRequests(mirror, "usd"); n != 1 {
		t.Errorf("full history of usd asked %d times", n)
	}
	_ = td.historyCycle(t.Context())
	if n := maxRequests(mirror, "eur"); n != 3 || countEndpoint(mirror, "days=365&interval=daily&vs_currency=eur") != 1 {
		t.Errorf("after giving up, eur asked %q", mirror.Requests())
	}
	if st := bootstrapState(t, d); !st.Complete || st.Attempts != 0 {
		t.Errorf("marker after a failed later run %+v", st)
	}
}

// observations counts the stage's duration observations with status.
func observations(t *testing.T, td *testDownloader, stage, status string) uint64 {
	t.Helper()
	var pb dto.Metric
	if err := td.m.duration.WithLabelValues(stage, status).(prometheus.Metric).Write(&pb); err != nil {
		t.Fatal(err)
	}
	return pb.GetHistogram().GetSampleCount()
}

// A bootstrap run in which a currency failed is observed as an error of
// historical_tickers ("bootstrap incomplete"), as Blockbook observes it,
// though the other currencies' days were stored.
func TestBootstrapCurrencyFailureObserved(t *testing.T) {
	api, mirror := bootstrapPair(t)
	mirror.FailPath("vs_currency=eur", 1)
	d := openDB(t, t.TempDir())
	defer d.Close()
	td := newTestDownloader(t, d, api, withMirror(mirror))
	if err := td.historyCycle(t.Context()); !errors.Is(err, errBootstrapIncomplete) {
		t.Fatalf("run with eur failed: %v", err)
	}
	if e, s := observations(t, td, "historical_tickers", "error"), observations(t, td, "historical_tickers", "success"); e != 1 || s != 0 {
		t.Errorf("historical_tickers observed %d errors, %d successes; want 1, 0", e, s)
	}
	if err := td.historyCycle(t.Context()); err != nil {
		t.Fatal(err)
	}
	if s := observations(t, td, "historical_tickers", "success"); s != 1 {
		t.Errorf("the completing run observed %d successes", s)
	}
}

// storeDays stores usd and eur rates (old values: 1 and 2) on days from..to
// except skip.
func storeDays(t *testing.T, d *db.DB, from, to int, skip ...int) {
	t.Helper()
	var rows []*db.FiatTicker
	for n := from; n <= to; n++ {
		if !slices.Contains(skip, n) {
			rows = append(rows, &db.FiatTicker{Time: dayN(n).Unix(), Rates: map[string]float64{"usd": 1, "eur": 2}})
		}
	}
	if err := d.WriteFiatTickers(rows); err != nil {
		t.Fatal(err)
	}
	if err := d.WriteFiatBootstrap(db.FiatBootstrap{Complete: true}); err != nil {
		t.Fatal(err)
	}
}

// The startup reconcile asks the mirror the range back to the earliest
// hole and fills the missing days only, for every currency; the days that
// were there keep their rates and the API is not asked.
func TestReconcileFillsHoles(t *testing.T) {
	api, mirror := bootstrapPair(t)
	d := openDB(t, t.TempDir())
	defer d.Close()
	storeDays(t, d, 300, 398, 350, 351, 390)
	td := newTestDownloader(t, d, api, withMirror(mirror))
	td.cfg.Reconcile = true
	filled, err := td.reconcile(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// btc has no history at the mirror: 3 days × usd, eur.
	if filled != 6 {
		t.Errorf("filled %d", filled)
	}
	for _, n := range []int{350, 351, 390} {
		if u, e := dayRate(t, d, n, "usd"), dayRate(t, d, n, "eur"); u != float64(1000+n) || e != float64(900+n) {
			t.Errorf("day %d: usd %v eur %v", n, u, e)
		}
	}
	for _, n := range []int{300, 349, 352, 398} {
		if u := dayRate(t, d, n, "usd"); u != 1 {
			t.Errorf("day %d rewritten: usd %v", n, u)
		}
	}
	if dayRate(t, d, 399, "usd") != -1 {
		t.Error("the tip's day was filled by the reconcile")
	}
	if n := countEndpoint(mirror, "/coins/bitcoin/market_chart?days=51&interval=daily&vs_currency=usd"); n != 1 || len(api.Requests()) != 0 {
		t.Errorf("mirror %q, API %q", mirror.Requests(), api.Requests())
	}
	// Healthy now: the next start asks nothing.
	before := len(mirror.Requests())
	if filled, err := td.reconcile(t.Context()); err != nil || filled != 0 || len(mirror.Requests()) != before {
		t.Errorf("second reconcile: %d %v %q", filled, err, mirror.Requests()[before:])
	}
}

// The reconcile does nothing during the bootstrap, when disabled, without
// a mirror, and for a gap of 90 days or more; it stores nothing when the
// provider keeps throttling.
func TestReconcileSkips(t *testing.T) {
	api, mirror := bootstrapPair(t)
	d := openDB(t, t.TempDir())
	defer d.Close()
	storeDays(t, d, 300, 398, 350)
	run := func(name string, mod func(*Config)) {
		t.Helper()
		td := newTestDownloader(t, d, api, mod)
		td.reconcileAtStart(t.Context())
		if r := dayRate(t, d, 350, "usd"); r != -1 {
			t.Errorf("%s: day 350 filled (%v)", name, r)
		}
	}
	run("no mirror", func(c *Config) { c.Reconcile = true })
	run("disabled", withMirror(mirror))
	if err := d.WriteFiatBootstrap(db.FiatBootstrap{}); err != nil {
		t.Fatal(err)
	}
	run("bootstrap", func(c *Config) { c.BootstrapURL, c.Reconcile = mirror.URL(), true })
	if err := d.WriteFiatBootstrap(db.FiatBootstrap{Complete: true}); err != nil {
		t.Fatal(err)
	}
	mirror.ThrottlePath("vs_currency=eur", 1000)
	run("throttled", func(c *Config) { c.BootstrapURL, c.Reconcile, c.MaxAttempts = mirror.URL(), true, 1 })
	if n := countEndpoint(mirror, "market_chart"); n != 3 {
		t.Errorf("throttled run asked %d charts: %q", n, mirror.Requests())
	}
	mirror.ThrottlePath("vs_currency=eur", 0)
	// 90 missing days: reported, not fetched.
	d2 := openDB(t, t.TempDir())
	defer d2.Close()
	storeDays(t, d2, 200, 398, rangeInts(250, 339)...)
	before := len(mirror.Requests())
	td := newTestDownloader(t, d2, api, func(c *Config) { c.BootstrapURL, c.Reconcile = mirror.URL(), true })
	if filled, err := td.reconcile(t.Context()); err != nil || filled != 0 || len(mirror.Requests()) != before {
		t.Errorf("90-day gap: %d %v %q", filled, err, mirror.Requests()[before:])
	}
	if strings.Join(api.Requests(), "") != "" {
		t.Errorf("API asked %q", api.Requests())
	}
}

func rangeInts(from, to int) []int {
	var out []int
	for n := from; n <= to; n++ {
		out = append(out, n)
	}
	return out
}

// Tokens: the bootstrap asks each followed token's whole history of the
// mirror too, and the reconcile repairs their rates in the days it fills,
// in coins with the repaired day's own coin rate.
func TestBootstrapAndReconcileTokens(t *testing.T) {
	mirror := tokenProvider(t)
	api := provider(t)
	d := openDB(t, t.TempDir())
	defer d.Close()
	td := newTokenDownloader(t, d, api, withMirror(mirror))
	if err := td.historyCycle(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{usdtID, linkID, noRateID} {
		if n := countEndpoint(mirror, "/coins/"+id+"/market_chart?days=max&interval=daily&vs_currency=usd"); n != 1 {
			t.Errorf("%s: %d full-history requests in %q", id, n, mirror.Requests())
		}
	}
	if countEndpoint(mirror, "coins/list") == 0 || len(api.Requests()) != 0 {
		t.Errorf("mirror %q, API %q", mirror.Requests(), api.Requests())
	}
	ft, err := db.ReadFiatTicker(d, dayN(390).Unix())
	if err != nil || ft == nil || math.Abs(ft.TokenRates[link]-10.0/1390) > 1e-12 {
		t.Fatalf("day 390 %+v %v", ft, err)
	}

	d2 := openDB(t, t.TempDir())
	defer d2.Close()
	storeDays(t, d2, 300, 398, 392, 393)
	td = newTokenDownloader(t, d2, api, withMirror(mirror))
	filled, err := td.reconcile(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// usd, eur and the two priced tokens on two days.
	if filled != 8 {
		t.Errorf("filled %d", filled)
	}
	for _, n := range []int{392, 393} {
		ft, err := db.ReadFiatTicker(d2, dayN(n).Unix())
		if err != nil || ft == nil || ft.Rates["usd"] != float64(1000+n) ||
			math.Abs(ft.TokenRates[link]-float64(n-380)/float64(1000+n)) > 1e-12 || math.Abs(ft.TokenRates[usdt]-1.0/float64(1000+n)) > 1e-12 {
			t.Errorf("day %d: %+v %v", n, ft, err)
		}
	}
	if ft, _ := db.ReadFiatTicker(d2, dayN(391).Unix()); ft == nil || len(ft.TokenRates) != 0 {
		t.Errorf("day 391 (present) changed: %+v", ft)
	}
}

// A token whose full history fails makes the bootstrap run a failed
// attempt, as a currency's does: the bootstrap is not marked complete with
// that token's history missing, and the next run asks it again.
func TestBootstrapTokenFailureIsAnAttempt(t *testing.T) {
	mirror := tokenProvider(t)
	api := provider(t)
	mirror.FailPath("/coins/"+linkID+"/market_chart", 1)
	d := openDB(t, t.TempDir())
	defer d.Close()
	td := newTokenDownloader(t, d, api, withMirror(mirror))
	if err := td.historyCycle(t.Context()); err == nil {
		t.Error("a bootstrap run with a failed token succeeded")
	}
	if st := bootstrapState(t, d); st.Complete || st.Attempts != 1 {
		t.Fatalf("marker after a run whose token failed: %+v", st)
	}
	if err := td.historyCycle(t.Context()); err != nil {
		t.Fatal(err)
	}
	if st := bootstrapState(t, d); !st.Complete {
		t.Errorf("marker after the token's history came: %+v", st)
	}
	if n := countEndpoint(mirror, "/coins/"+linkID+"/market_chart?days=max"); n != 2 {
		t.Errorf("the failed token's full history asked %d times, want 2", n)
	}
}
