package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/fiat"
	"github.com/openexplorer/blockbook/fiat/fiattest"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// Fiat rates end to end: the demo stack with fiat_rates configured the way
// Blockbook's bitcoin.json does it, pointed at two local servers that speak
// CoinGecko's API: the API itself (fiat_rates_params' tipUrl: current and
// finer rates; its public plan refuses history beyond 90 days) and the
// bootstrap mirror (Blockbook's url: the daily history, whose whole range
// the first run asks). The downloader's clock is fixed a few days after the
// demo chain's blocks, so the answers are golden.

const fiatGoldenDir = "testdata/fiat"

// fiatNow is 2023-11-20 05:00 UTC; the demo chain's blocks are of
// 2023-11-14 to 16.
var fiatNow = time.Date(2023, 11, 20, 5, 0, 0, 0, time.UTC)

// fiatProvider serves daily closes from 2023-11-10 to 2023-11-20 for usd,
// eur and btc (usd on day n of November: 36000 + 100n, eur 0.92 of it),
// and current rates that include jpy.
func fiatProvider(t *testing.T) *fiattest.Server {
	s := fiattest.New("bitcoin", fiatNow)
	t.Cleanup(s.Close)
	s.SetSupported("btc", "eth", "ltc", "usd", "eur", "jpy", "gbp")
	for d := 10; d <= 20; d++ {
		day := time.Date(2023, 11, d, 0, 0, 0, 0, time.UTC)
		s.AddDay("usd", day, float64(36000+100*d))
		s.AddDay("eur", day, float64(36000+100*d)*0.92)
		s.AddDay("btc", day, 1)
	}
	s.SetCurrent(map[string]float64{"usd": 37512.5, "eur": 34350.25, "btc": 1, "jpy": 5612345, "gbp": 30100})
	s.SetIntraday("usd", fiatIntradayUsd)
	return s
}

// fiatIntradayUsd is the provider's usd rate between the daily closes (its
// hourly and 5-minute points): 36000 plus a cent per 10 seconds since
// November 1st.
func fiatIntradayUsd(t time.Time) float64 {
	return 36000 + float64(t.Sub(time.Date(2023, 11, 1, 0, 0, 0, 0, time.UTC)).Milliseconds()/10000)/100
}

func TestE2EFiatRates(t *testing.T) {
	prov, mirror := fiatProvider(t), fiatProvider(t)
	prov.SetRangeLimit(90)
	mirror.SetCurrent(map[string]float64{}) // a mirror of the history only
	downloaders := make(chan *fiat.Downloader, 1)
	esploraAddr := make(chan string, 1)
	st := startDemoStackWith(t, map[string]any{
		"fiat_rates":               "coingecko",
		"fiat_rates_params":        fmt.Sprintf(`{"coin": "bitcoin", "periodSeconds": 900, "url": %q, "tipUrl": %q}`, mirror.URL(), prov.URL()),
		"fiat_rates_vs_currencies": "USD,EUR,BTC,JPY",
	}, func(o *app.Options) {
		o.FiatConfig = func(c *fiat.Config) {
			c.Now = func() time.Time { return fiatNow }
			c.RequestGap, c.BootstrapGap = time.Millisecond, time.Millisecond
		}
		o.OnFiat = func(dl *fiat.Downloader) { downloaders <- dl }
		listenEsplora(o, esploraAddr) // mempool.space's prices
	})
	dl := <-downloaders
	g, base := st.g, st.inst.base
	lastDay := time.Date(2023, 11, 20, 0, 0, 0, 0, time.UTC)
	// The status golden is of a finished sync pass (inSync), which ends a
	// moment after the tip block that startDemoStackWith waited for.
	waitStatus(t, base, func(s *api.SystemInfo) bool {
		b := s.Blockbook
		return b.InSync && !b.InitialSync && b.HasFiatRates && b.CurrentFiatRatesTime != nil &&
			b.HistoricalFiatRatesTime != nil && b.HistoricalFiatRatesTime.Equal(lastDay)
	})
	waitMempoolInSync(t, base)
	checkFiatBootstrap(t, prov, mirror)
	checkFinestFiat(t, base)
	p2tr, err := g.Address(chaingen.P2TR, chaingen.DemoIndex)
	if err != nil {
		t.Fatal(err)
	}

	gs := newGoldenSet(t, fiatGoldenDir, "TestE2EFiatRates")
	for _, r := range []struct {
		name, path string
		code       int
	}{
		{"status-fiat", "/api/v2", 200},
		{"tickers-current", "/api/v2/tickers/", 200},
		{"tickers-current-usd", "/api/v2/tickers/?currency=USD", 200},
		{"tickers-timestamp-eur", "/api/v2/tickers/?timestamp=1700000000&currency=eur", 200},
		{"tickers-timestamp-all", "/api/v2/tickers/?timestamp=1700092800", 200},
		{"tickers-timestamp-after-history", "/api/v2/tickers/?timestamp=1700500000&currency=usd", 200},
		{"tickers-timestamp-unknown-currency", "/api/v2/tickers/?timestamp=1700000000&currency=xyz", 200},
		{"tickers-block-1", "/api/v2/tickers/?block=1&currency=usd", 200},
		{"multi-tickers-usd", "/api/v2/multi-tickers/?timestamp=1600000000,1700000000,1700092800,1800000000&currency=usd", 200},
		{"multi-tickers-all", "/api/v2/multi-tickers/?timestamp=1700006400,1700092801", 200},
		{"tickers-list", "/api/v2/tickers-list/?timestamp=1700000000", 200},
		{"tickers-list-current", "/api/v2/tickers-list/?timestamp=1800000000", 200},
		{"balancehistory-p2tr-usd", "/api/v2/balancehistory/" + p2tr + "?groupBy=86400&fiatcurrency=usd", 200},
		{"balancehistory-p2tr-all", "/api/v2/balancehistory/" + p2tr + "?groupBy=86400", 200},
		{"address-p2tr-secondary", "/api/v2/address/" + p2tr + "?details=basic&secondary=EUR", 200},
		{"error-tickers-timestamp", "/api/v2/tickers/?timestamp=yesterday", 400},
		{"error-tickers-block", "/api/v2/tickers/?block=99999", 400},
		{"error-multi-tickers-missing", "/api/v2/multi-tickers/", 400},
		{"error-multi-tickers-timestamp", "/api/v2/multi-tickers/?timestamp=1700000000,x", 400},
		{"error-tickers-list-timestamp", "/api/v2/tickers-list/", 400},
		{"error-tickers-current-unknown", "/api/v2/tickers/?currency=xyz", 400},
	} {
		got := fetchGolden(t, base+r.path, r.code)
		if r.name == "status-fiat" {
			got = normalizeStatus(t, got)
		}
		gs.check(r.name, got)
	}
	checkExplorerFiat(t, base, p2tr) // before the rates below change

	esp := "http://" + <-esploraAddr
	checkMempoolSpacePrices(t, esp)
	checkPricesGoldens(t, esp)
	// mempool.space's websocket pushes conversions to every client when
	// the rates change, not only in init.
	mp := dialMpWS(t, esp)
	mp.send(map[string]any{"action": "ping"})
	mp.await("pong", []string{"pong"}, nil)

	ws := newWS(t, base)
	wsGolden := func(name string, data json.RawMessage) {
		t.Helper()
		var buf bytes.Buffer
		if err := json.Indent(&buf, data, "", "  "); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		buf.WriteByte('\n')
		gs.check("ws-"+name, buf.Bytes())
	}
	for _, c := range []struct {
		name, method string
		params       any
	}{
		{"getCurrentFiatRates", "getCurrentFiatRates", map[string]any{"currencies": []string{"usd", "EUR"}}},
		{"getCurrentFiatRates-all", "getCurrentFiatRates", nil},
		{"getFiatRatesForTimestamps", "getFiatRatesForTimestamps", map[string]any{"timestamps": []int64{1700000000, 1700092800, 1800000000}, "currencies": []string{"usd"}}},
		{"getFiatRatesTickersList", "getFiatRatesTickersList", map[string]any{"timestamp": 1700000000}},
		{"getBalanceHistory-usd", "getBalanceHistory", map[string]any{"descriptor": p2tr, "groupBy": 86400, "currencies": []string{"usd"}}},
		{"getAccountInfo-secondary", "getAccountInfo", map[string]any{"descriptor": p2tr, "secondaryCurrency": "usd"}},
		{"error-getCurrentFiatRates-unknown", "getCurrentFiatRates", map[string]any{"currencies": []string{"xyz"}}},
		{"error-getFiatRatesTickersList-token", "getFiatRatesTickersList", map[string]any{"timestamp": 1700000000, "token": "0xdAC17F958D2ee523a2206206994597C13D831ec7"}},
	} {
		_, data := ws.call(c.method, c.params)
		wsGolden(c.name, data)
	}

	// Subscriptions: one currency (case-insensitive), all currencies, and
	// a currency the next ticker lacks.
	a, b, c := newWS(t, base), newWS(t, base), newWS(t, base)
	var sub struct{ Subscribed bool }
	idA := a.ok("subscribeFiatRates", map[string]any{"currency": "USD"}, &sub)
	idB := b.ok("subscribeFiatRates", map[string]any{}, &sub)
	idC := c.ok("subscribeFiatRates", map[string]any{"currency": "jpy"}, &sub)
	if !sub.Subscribed {
		t.Fatalf("subscribeFiatRates: %+v", sub)
	}
	prov.SetCurrent(map[string]float64{"usd": 38000, "eur": 35000.5, "btc": 1})
	dl.Refresh()
	wsGolden("notification-fiatRates-usd", afterInitial(a, idA, "usd"))
	mp.await("conversions after new rates", []string{"conversions"}, func(m map[string]json.RawMessage) bool {
		var conv map[string]float64
		return json.Unmarshal(m["conversions"], &conv) == nil && conv["USD"] == 38000 && conv["EUR"] == 35001
	})
	wsGolden("notification-fiatRates-all", afterInitial(b, idB, "usd"))
	// The pushed rates are the current ones now.
	var cur api.FiatTicker
	ws.ok("getCurrentFiatRates", map[string]any{"currencies": []string{"usd"}}, &cur)
	if cur.Rates["usd"] != 38000 {
		t.Fatalf("current rates after the push: %+v", cur)
	}

	// Subscribing again replaces the subscription (notifications take the
	// new request's id); c hears nothing of a ticker without jpy, so its
	// first notification is the next one's.
	idB = b.ok("subscribeFiatRates", map[string]any{"currency": "eur"}, &sub)
	a.ok("unsubscribeFiatRates", nil, &sub)
	prov.SetCurrent(map[string]float64{"usd": 38100, "eur": 35100, "jpy": 5700000})
	dl.Refresh()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("provider requests %q\n%s", prov.Requests(), tail(st.inst.logs.String(), 40))
		}
	})
	type fiatNote struct {
		Rates map[string]float64 `json:"rates"`
	}
	var gotC, gotB fiatNote
	if err := json.Unmarshal(afterInitial(c, idC, "jpy"), &gotC); err != nil {
		t.Fatal(err)
	}
	if len(gotC.Rates) != 1 || gotC.Rates["jpy"] != 5700000 {
		t.Errorf("jpy subscriber got %v first", gotC.Rates)
	}
	b.notification(idB, &gotB)
	if len(gotB.Rates) != 1 || gotB.Rates["eur"] != 35100 {
		t.Errorf("re-subscribed (eur) subscriber got %v", gotB.Rates)
	}
	// a unsubscribed before the second push, which was queued for every
	// subscriber before b and c got it: a notification for a would come
	// before the answer to a request sent now.
	a.ok("ping", nil, nil)
	if n := len(a.pending(idA)); n != 0 {
		t.Errorf("unsubscribed client got %d more notifications", n)
	}
	gs.finish()
}

// afterInitial returns the next fiat notification of subscription id,
// skipping one with the initial rates of currency: the push of the initial
// download can still reach a client that subscribed as soon as the status
// showed those rates stored.
func afterInitial(c *wsClient, id, currency string) json.RawMessage {
	c.t.Helper()
	initial := map[string]float64{"usd": 37512.5, "jpy": 5612345}[currency]
	for {
		var note json.RawMessage
		c.notification(id, &note)
		var n struct {
			Rates map[string]float64 `json:"rates"`
		}
		if err := json.Unmarshal(note, &n); err != nil {
			c.t.Fatal(err)
		}
		if n.Rates[currency] != initial {
			return note
		}
	}
}

// checkMempoolSpacePrices reads mempool.space's prices and
// historical-price from fiatProvider's rates: the current ticker (usd
// 37512.5, eur 34350.25, jpy 5612345; the config drops gbp), the hourly
// point after 1700000000 (usd 37206.06, eur derived with the day's 0.92)
// and the daily closes.
func checkMempoolSpacePrices(t *testing.T, esplora string) {
	t.Helper()
	var now map[string]float64
	esploraJSON(t, esplora+"/api/v1/prices", &now)
	for c, want := range map[string]float64{"USD": 37513, "EUR": 34350, "JPY": 5612345, "GBP": -1, "CAD": -1, "ZAR": -1} {
		if now[c] != want {
			t.Errorf("prices %s: %v, want %v (%v)", c, now[c], want, now)
		}
	}
	if len(now) != 34 || now["time"] <= 0 {
		t.Errorf("prices: %d keys, time %v", len(now), now["time"])
	}
	// 2023-11-14 22:13 UTC: the next day's close (Blockbook's rule).
	var hist struct {
		Prices        []map[string]float64 `json:"prices"`
		ExchangeRates map[string]float64   `json:"exchangeRates"`
	}
	esploraJSON(t, esplora+"/api/v1/historical-price?timestamp=1700000000&currency=EUR", &hist)
	if len(hist.Prices) != 1 || len(hist.Prices[0]) != 3 || hist.Prices[0]["time"] != 1700002861 || hist.Prices[0]["USD"] != 37206 || hist.Prices[0]["EUR"] != 34230 {
		t.Errorf("historical-price EUR: %v", hist.Prices)
	}
	if hist.ExchangeRates["USDEUR"] != 0.92 || hist.ExchangeRates["USDJPY"] != 149.61 || hist.ExchangeRates["USDGBP"] != 0 || len(hist.ExchangeRates) != 32 {
		t.Errorf("historical-price exchangeRates: %v", hist.ExchangeRates)
	}
	esploraJSON(t, esplora+"/api/v1/historical-price?timestamp=1700092800", &hist)
	if len(hist.Prices) != 1 || len(hist.Prices[0]) != 34 || hist.Prices[0]["USD"] != 37600 {
		t.Errorf("historical-price: %v", hist.Prices)
	}
	for path, want := range map[string]struct {
		code int
		body string
	}{
		"/api/v1/historical-price":                                   {400, "timestamp must be a Unix time"},
		"/api/v1/historical-price?timestamp=yesterday":               {400, "timestamp must be a Unix time"},
		"/api/v1/historical-price?timestamp=1700000000&currency=XYZ": {400, "currency must be one of USD, EUR"},
		"/api/v1/historical-price?timestamp=1700000000&currency=CAD": {404, "no CAD price"},
		"/api/v1/prices/x": {404, "endpoint does not exist"},
	} {
		if code, body := esploraGet(t, esplora+path); code != want.code || !strings.Contains(string(body), want.body) {
			t.Errorf("GET %s: %d %s, want %d %q", path, code, body, want.code, want.body)
		}
	}
}

// checkFinestFiat waits for the finer tickers (downloaded after the first
// current rates) and checks Blockbook's rule end to end: a time minutes
// old takes the 5-minute point, one of days ago (the demo chain's first
// block) the hourly point, one older than the hourly series the daily
// close; a day's start always the daily close.
func checkFinestFiat(t *testing.T, base string) {
	t.Helper()
	recent := fiatNow.Add(-7 * time.Minute)
	block1 := time.Date(2023, 11, 14, 22, 13, 20, 0, time.UTC) // 1700000000
	old := time.Date(2023, 7, 1, 12, 0, 0, 0, time.UTC)
	dayStart := time.Date(2023, 11, 15, 0, 0, 0, 0, time.UTC)
	path := fmt.Sprintf("/api/v2/multi-tickers/?timestamp=%d,%d,%d,%d&currency=usd", recent.Unix(), block1.Unix(), old.Unix(), dayStart.Unix())
	point := func(slot time.Time) api.FiatTicker {
		at := slot.Add(fiattest.IntradayOffset)
		return api.FiatTicker{Timestamp: at.Unix(), Rates: map[string]float64{"usd": fiatIntradayUsd(at)}}
	}
	want := []api.FiatTicker{
		point(fiatNow.Add(-5 * time.Minute)),                  // the next 5-minute slot
		point(time.Date(2023, 11, 14, 23, 0, 0, 0, time.UTC)), // the next full hour
		{Timestamp: time.Date(2023, 11, 10, 0, 0, 0, 0, time.UTC).Unix(), Rates: map[string]float64{"usd": 37000}},
		{Timestamp: dayStart.Unix(), Rates: map[string]float64{"usd": 37500}},
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var got []api.FiatTicker
		if err := json.Unmarshal(fetchGolden(t, base+path, 200), &got); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) == fmt.Sprint(want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("finest tickers:\n got %v\nwant %v", got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkFiatBootstrap: the first history run asked every currency's whole
// history ("max") from the bootstrap mirror, once, and nothing daily from
// the API; the current rates came from the API only.
func checkFiatBootstrap(t *testing.T, api, mirror *fiattest.Server) {
	t.Helper()
	var apiDaily, mirrorPrice []string
	for _, r := range api.Requests() {
		if strings.Contains(r, "interval=daily") {
			apiDaily = append(apiDaily, r)
		}
	}
	maxes := map[string]int{}
	for _, r := range mirror.Requests() {
		if strings.HasPrefix(r, "/api/v3/simple/price") {
			mirrorPrice = append(mirrorPrice, r)
		}
		if strings.Contains(r, "/market_chart?days=max&interval=daily&vs_currency=") {
			maxes[r[strings.LastIndex(r, "=")+1:]]++
		}
	}
	if len(apiDaily) > 0 || len(mirrorPrice) > 0 {
		t.Errorf("daily history asked of the API %q, current rates of the mirror %q", apiDaily, mirrorPrice)
	}
	for _, c := range []string{"usd", "eur", "btc", "jpy"} {
		if maxes[c] != 1 {
			t.Errorf("full history of %s asked %d times of the mirror (requests %q)", c, maxes[c], mirror.Requests())
		}
	}
}
