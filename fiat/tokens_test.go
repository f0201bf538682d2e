package fiat

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/fiat/fiattest"
)

const (
	usdtID = "tether"
	usdt   = "0xdac17f958d2ee523a2206206994597c13d831ec7"
	linkID = "chainlink"
	link   = "0x514910771af9ca656af840dff83e8264ecf986ca"
	// A token the provider lists on the platform but the index does not
	// know, one on another platform, and one the index knows without rates.
	unknownID = "unindexed"
	unknown   = "0x1111111111111111111111111111111111111111"
	otherID   = "other-chain"
	noRateID  = "norate"
	noRate    = "0x2222222222222222222222222222222222222222"
)

// tokenProvider adds, to provider's coin, tokens on platform "ethereum"
// priced in usd: current usdt 1.0002 and link 15, daily closes of days
// 390..400.
func tokenProvider(t *testing.T) *fiattest.Server {
	s := provider(t)
	s.AddToken(usdtID, "ethereum", usdt)
	s.AddToken(linkID, "ethereum", strings.ToUpper(link[:10])+link[10:]) // the key is lowercased
	s.AddToken(unknownID, "ethereum", unknown)
	s.AddToken(otherID, "polygon-pos", usdt)
	s.AddToken(noRateID, "ethereum", noRate)
	s.SetTokenCurrent(usdtID, "usd", 1.0002)
	s.SetTokenCurrent(linkID, "usd", 15)
	s.SetTokenCurrent(unknownID, "usd", 3)
	for n := 390; n <= 400; n++ {
		s.AddTokenDay(usdtID, "usd", dayN(n), 1)
		s.AddTokenDay(linkID, "usd", dayN(n), float64(n-380))
	}
	return s
}

func newTokenDownloader(t *testing.T, d *db.DB, s *fiattest.Server, mod func(*Config)) *testDownloader {
	td := newTestDownloader(t, d, s, func(c *Config) {
		c.Platform, c.PlatformVsCurrency = "ethereum", "usd"
		if mod != nil {
			mod(c)
		}
	})
	td.knownToken = func(c bchain.AddrDesc) (bool, error) {
		switch "0x" + hex.EncodeToString(c) {
		case usdt, link, noRate:
			return true, nil
		}
		return false, nil
	}
	return td
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

// Current token rates: only known tokens of the platform, converted to
// coins with the coin's usd rate; a token without a price is left out.
func TestCurrentTokenRates(t *testing.T) {
	s := tokenProvider(t)
	d := openDB(t, t.TempDir())
	defer d.Close()
	td := newTokenDownloader(t, d, s, nil)
	ft, err := td.updateCurrent(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{usdt: 1.0002 / 1500.5, link: 15 / 1500.5}
	stored, err := db.ReadFiatCurrent(d)
	if err != nil || stored == nil || len(stored.TokenRates) != 2 {
		t.Fatalf("stored %+v %v", stored, err)
	}
	for k, v := range want {
		if !near(stored.TokenRates[k], v) || !near(ft.TokenRates[k], v) {
			t.Errorf("%s: stored %v, pushed %v, want %v", k, stored.TokenRates[k], ft.TokenRates[k], v)
		}
	}
	if q := s.Requests(); !contains(q, "/api/v3/coins/list?include_platform=true") ||
		!contains(q, "/api/v3/simple/price?ids=norate%2Cchainlink%2Ctether&vs_currencies=usd") {
		t.Errorf("requests %q", q)
	}
	// The platform list is fetched once between history runs.
	if _, err := td.updateCurrent(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := countEndpoint(s, "coins/list"); n != 1 {
		t.Errorf("coins/list asked %d times", n)
	}
	if got := metricValue(td.m.tokens); got != 3 {
		t.Errorf("followed tokens %v", got)
	}

	// A 429 of the token request is waited out: nothing is lost.
	s.ThrottlePath("vs_currencies=usd", 1)
	s.SetTokenCurrent(linkID, "usd", 16)
	td.sleeps = nil
	if ft, err = td.updateCurrent(t.Context()); err != nil || !near(ft.TokenRates[link], 16/1500.5) || len(td.sleeps) != 1 {
		t.Fatalf("after a 429: %+v %v, waits %v", ft, err, td.sleeps)
	}
	// Throttled beyond MaxAttempts: the coin's rates are stored with the
	// previous token rates.
	s.ThrottlePath("vs_currencies=usd", 100)
	s.SetCurrent(map[string]float64{"usd": 1600, "eur": 1500, "btc": 1})
	if ft, err = td.updateCurrent(t.Context()); err != nil || ft.Rates["usd"] != 1600 || !near(ft.TokenRates[link], 16/1500.5) {
		t.Fatalf("throttled tokens: %+v %v", ft, err)
	}
	if got := metricValue(td.m.errors.WithLabelValues("tokens")); got != 1 {
		t.Errorf("token errors %v", got)
	}
	s.ThrottlePath("vs_currencies=usd", 0)

	// Token rates in the coin itself are taken as they are.
	d2 := openDB(t, t.TempDir())
	defer d2.Close()
	s.SetTokenCurrent(usdtID, "btc", 0.00003)
	td2 := newTokenDownloader(t, d2, s, func(c *Config) { c.PlatformVsCurrency, c.PlatformVsIsCoin = "btc", true })
	if ft, err = td2.updateCurrent(t.Context()); err != nil || len(ft.TokenRates) != 1 || ft.TokenRates[usdt] != 0.00003 {
		t.Fatalf("rates in the coin: %+v %v", ft, err)
	}
	// Without the coin's rate in platformVsCurrency, no token rates.
	d3 := openDB(t, t.TempDir())
	defer d3.Close()
	td3 := newTokenDownloader(t, d3, s, func(c *Config) { c.PlatformVsCurrency = "jpy" })
	if ft, err = td3.updateCurrent(t.Context()); err != nil || ft.TokenRates != nil {
		t.Fatalf("no coin rate in jpy: %+v %v", ft, err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Token history goes into the days that have the coin's rates, in coins;
// the next run asks only for the missing days; a token whose chart fails
// does not stop the others.
func TestTokenHistory(t *testing.T) {
	s := tokenProvider(t)
	d := openDB(t, t.TempDir())
	defer d.Close()
	td := newTokenDownloader(t, d, s, nil)
	// The coin's days first, except day 395 (tokens skip it too).
	if err := td.updateHistory(t.Context()); err != nil {
		t.Fatal(err)
	}
	day395, err := db.ReadFiatTicker(d, dayN(395).Unix())
	if err != nil || day395 == nil {
		t.Fatal(day395, err)
	}
	delete(day395.Rates, "usd")
	if err := d.WriteFiatTickers([]*db.FiatTicker{day395}); err != nil {
		t.Fatal(err)
	}
	s.ThrottlePath("/coins/"+usdtID+"/", 1) // waited out
	if err := td.updateTokenHistory(t.Context()); err != nil {
		t.Fatal(err)
	}
	for n := 390; n <= 400; n++ {
		ft, err := db.ReadFiatTicker(d, dayN(n).Unix())
		if err != nil || ft == nil {
			t.Fatalf("day %d: %+v %v", n, ft, err)
		}
		if n == 395 {
			if len(ft.TokenRates) != 0 {
				t.Errorf("day 395 without usd got token rates %v", ft.TokenRates)
			}
			continue
		}
		usd := float64(1000 + n)
		if !near(ft.TokenRates[usdt], 1/usd) || !near(ft.TokenRates[link], float64(n-380)/usd) || len(ft.TokenRates) != 2 {
			t.Errorf("day %d: %v", n, ft.TokenRates)
		}
		if ft.Rates["eur"] != float64(900+n) {
			t.Errorf("day %d lost the coin's rates: %v", n, ft.Rates)
		}
	}
	last, err := d.LastFiatTokenTicker(link)
	if err != nil || last == nil || last.Time != dayN(400).Unix() {
		t.Fatalf("last link day %+v %v", last, err)
	}
	found, err := db.FindFiatTokenTickers(d, []int64{dayN(395).Unix() - 5, dayN(389).Unix(), dayN(401).Unix()}, usdt)
	if err != nil || found[0] == nil || found[0].Time != dayN(396).Unix() || found[1].Time != dayN(390).Unix() || found[2] != nil {
		t.Fatalf("find usdt tickers %+v %v", found, err)
	}
	if !strings.Contains(fmt.Sprint(s.Requests()), "/coins/chainlink/market_chart?days=365&interval=daily&vs_currency=usd") {
		t.Errorf("requests %q", s.Requests())
	}
	// Up to date: no chart is asked again; the unpriced token's is (it has
	// no days) and answers nothing.
	before := len(s.Requests())
	if err := td.updateTokenHistory(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := countEndpointSince(s, before, "market_chart"); n != 1 {
		t.Errorf("second run asked %d charts: %q", n, s.Requests()[before:])
	}
	// Persistent throttling ends the run.
	s.ThrottlePath("market_chart", 100)
	if err := td.updateTokenHistory(t.Context()); !errors.Is(err, ErrThrottled) {
		t.Errorf("throttled run: %v", err)
	}
}

// A token the index learns after a history run starts the next run early
// (once), so its history does not wait for the next day.
func TestNewTokenWakesHistory(t *testing.T) {
	s := tokenProvider(t)
	d := openDB(t, t.TempDir())
	defer d.Close()
	td := newTokenDownloader(t, d, s, nil)
	known := td.knownToken
	td.knownToken = func(bchain.AddrDesc) (bool, error) { return false, nil }
	if _, err := td.updateCurrent(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(td.wakeHistory) != 0 {
		t.Fatal("woken before the first history run")
	}
	if err := td.updateTokenHistory(t.Context()); err != nil {
		t.Fatal(err)
	}
	td.knownToken = known
	for range 2 {
		if _, err := td.updateCurrent(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if len(td.wakeHistory) != 1 {
		t.Fatalf("new tokens did not wake the history run")
	}
	<-td.wakeHistory
	if _, err := td.updateCurrent(t.Context()); err != nil || len(td.wakeHistory) != 0 {
		t.Fatalf("woken again for the same tokens: %v", err)
	}
}
