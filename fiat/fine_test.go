package fiat

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/fiat/fiattest"
)

// intradayUsd is the provider's usd rate at any time: a minute's worth of
// rate per minute since t0, so each point's rate tells its time.
func intradayUsd(t time.Time) float64 { return float64(t.Sub(t0)) / float64(time.Minute) }

func seriesRows(t *testing.T, d *db.DB, s db.FiatSeries) (first, last int64) {
	t.Helper()
	first, ok, err := db.FiatSeriesFirst(d, s)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return 0, 0
	}
	last, err = d.LastFiatSeriesSlot(s)
	if err != nil {
		t.Fatal(err)
	}
	return first, last
}

// The pro plan's finer charts: market_chart without interval (CoinGecko's
// automatic granularity) for 90 days of hourly and one day of 5-minute usd
// points, with the pro key header; stored by slot, the last ("now") point
// dropped; downloaded again only when due, pruned to what the series keeps.
func TestFineTickers(t *testing.T) {
	s := provider(t)
	s.SetIntraday("usd", intradayUsd)
	d := openDB(t, t.TempDir())
	defer d.Close()
	td := newTestDownloader(t, d, s, func(c *Config) { c.Plan, c.APIKey = PlanPro, "k-pro" })
	now := dayN(400).Add(5 * time.Hour)
	td.updateFine(t.Context())
	for _, want := range []string{
		"/api/v3/coins/bitcoin/market_chart?days=90&vs_currency=usd",
		"/api/v3/coins/bitcoin/market_chart?days=1&vs_currency=usd",
	} {
		if !slices.Contains(s.Requests(), want) {
			t.Errorf("no request %s in %v", want, s.Requests())
		}
	}
	if keys := s.APIKeys(); len(keys) == 0 || keys[len(keys)-1] != "x-cg-pro-api-key: k-pro" {
		t.Errorf("key headers %v", keys)
	}
	h, f := db.FiatHourly, db.FiatFiveMinutes
	if first, last := seriesRows(t, d, h); first != now.Add(-90*day+time.Hour).Unix() || last != now.Add(-time.Hour).Unix() {
		t.Errorf("hourly slots %s to %s", time.Unix(first, 0).UTC(), time.Unix(last, 0).UTC())
	}
	if first, last := seriesRows(t, d, f); first != now.Add(-day+5*time.Minute).Unix() || last != now.Add(-5*time.Minute).Unix() {
		t.Errorf("5-minute slots %s to %s", time.Unix(first, 0).UTC(), time.Unix(last, 0).UTC())
	}
	// 5 minutes 20 s ago: the point of the next 5-minute slot, at its own
	// time (61 s past the grid) and rate.
	at := now.Add(-320 * time.Second).Unix()
	first, _, _ := db.FiatSeriesFirst(d, f)
	got, err := db.FindFiatSeriesTicker(d, f, at, first)
	wantAt := now.Add(-5*time.Minute + fiattest.IntradayOffset)
	if err != nil || got == nil || got.Time != wantAt.Unix() || got.Rates["usd"] != intradayUsd(wantAt) || len(got.Rates) != 1 {
		t.Errorf("5-minute ticker %+v %v, want %d rate %v", got, err, wantAt.Unix(), intradayUsd(wantAt))
	}
	if td.requests("market_chart", "success") != 2 || metricValue(td.m.updated.WithLabelValues("five_minutes")) != float64(now.Unix()) {
		t.Errorf("metrics: %v requests, updated %v", td.requests("market_chart", "success"), metricValue(td.m.updated.WithLabelValues("five_minutes")))
	}

	// Not due yet: nothing asked. 20 minutes on, only the 5-minute series.
	n := len(s.Requests())
	td.updateFine(t.Context())
	if len(s.Requests()) != n {
		t.Errorf("asked again before due: %v", s.Requests()[n:])
	}
	now = now.Add(20 * time.Minute)
	td.now = func() time.Time { return now }
	s.SetNow(now)
	td.updateFine(t.Context())
	if q := s.Requests()[n:]; len(q) != 1 || !strings.Contains(q[0], "days=1&") {
		t.Errorf("requests when the 5-minute series is due: %v", q)
	}
	// Pruned to the last day: the previous download's rows of that day stay.
	if first, last := seriesRows(t, d, f); first != now.Add(-day).Unix() || last != now.Add(-5*time.Minute).Unix() {
		t.Errorf("5-minute slots after the update %s to %s", time.Unix(first, 0).UTC(), time.Unix(last, 0).UTC())
	}
	// usd not kept: no finer series (their other currencies derive from it).
	td2 := newTestDownloader(t, d, s, func(c *Config) { c.VsCurrencies = []string{"eur"} })
	td2.now = func() time.Time { return now.Add(3 * time.Hour) }
	n = len(s.Requests())
	td2.updateFine(t.Context())
	if q := s.Requests()[n:]; len(q) != 1 || !strings.Contains(q[0], "supported_vs_currencies") {
		t.Errorf("requests without usd kept: %v", q)
	}
}

// A 429 with Retry-After is waited out; garbage, a chart coarser than the
// series and a provider that is down store nothing and are counted.
func TestFineTickerFailures(t *testing.T) {
	s := provider(t)
	s.SetIntraday("usd", intradayUsd)
	d := openDB(t, t.TempDir())
	defer d.Close()
	td := newTestDownloader(t, d, s, nil)
	if _, err := td.vsCurrencies(t.Context(), false); err != nil {
		t.Fatal(err)
	}
	errs := func() float64 {
		return metricValue(td.m.errors.WithLabelValues("hourly")) + metricValue(td.m.errors.WithLabelValues("five_minutes"))
	}
	stored := func() bool {
		_, okH, _ := db.FiatSeriesFirst(d, db.FiatHourly)
		_, okF, _ := db.FiatSeriesFirst(d, db.FiatFiveMinutes)
		return okH || okF
	}
	for _, c := range []struct {
		name  string
		setup func()
	}{
		{"garbage", func() { s.Malform("market_chart", `<html>Bad gateway</html>`) }},
		{"wrong shape", func() { s.Malform("market_chart", `{"prices":[[1,2]]}`) }},
		{"coarser", func() { s.Malform("market_chart", ""); s.SetIntraday("usd", nil) }},
	} {
		before := errs()
		c.setup()
		td.updateFine(t.Context())
		if stored() || errs() != before+2 {
			t.Errorf("%s: stored %v, errors %v→%v", c.name, stored(), before, errs())
		}
	}
	s.SetIntraday("usd", intradayUsd)
	td.sleeps = nil
	s.Throttle(1, "7")
	td.updateFine(t.Context())
	if !stored() || !slices.Equal(td.sleeps, []time.Duration{7 * time.Second}) {
		t.Errorf("after a 429: stored %v, waits %v", stored(), td.sleeps)
	}
	if td.requests("market_chart", "throttled") != 1 {
		t.Errorf("throttled %v", td.requests("market_chart", "throttled"))
	}
	// Down: the stored series stay as they were.
	hFirst, hLast := seriesRows(t, d, db.FiatHourly)
	s.Close()
	before := errs()
	td.now = func() time.Time { return dayN(400).Add(9 * time.Hour) }
	td.updateFine(t.Context())
	if a, b := seriesRows(t, d, db.FiatHourly); a != hFirst || b != hLast || errs() != before+2 {
		t.Errorf("provider down: hourly %d..%d (was %d..%d), errors %v→%v", a, b, hFirst, hLast, before, errs())
	}
}
