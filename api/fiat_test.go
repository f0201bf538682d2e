package api

import (
	"context"
	"encoding/json"
	"math/big"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/tools/apitest"
)

const fiatDay = 86400

func fday(n int64) int64 { return 1_700_006_400 + n*fiatDay } // 2023-11-15 00:00 UTC + n days

// fiatService serves days 0, 1, 3, 4 of history ("jpy" on day 1 only,
// "eur" missing on day 3) and a current ticker an hour into day 5.
func fiatService(t *testing.T, configured bool) *UtxoService {
	t.Helper()
	d := fiatStore(t)
	b := &bchain.Backend{Type: bchain.ChainBitcoinType, Params: bchain.CoinParams{Decimals: 8}}
	return NewUtxoService(d, b, nil, Config{FiatRates: configured})
}

// fiatStore holds fiatService's tickers.
func fiatStore(t *testing.T) *db.DB {
	t.Helper()
	d := apitest.OpenStore(t, db.Options{ChainType: bchain.ChainBitcoinType, Coin: "Test", Network: "test"})
	err := d.WriteFiatTickers([]*db.FiatTicker{
		{Time: fday(0), Rates: map[string]float64{"usd": 100, "eur": 90}},
		{Time: fday(1), Rates: map[string]float64{"usd": 110, "eur": 99, "jpy": 16000}},
		{Time: fday(3), Rates: map[string]float64{"usd": 130}},
		{Time: fday(4), Rates: map[string]float64{"usd": 140, "eur": 126}},
	})
	if err == nil {
		err = d.WriteFiatCurrent(&db.FiatTicker{Time: fday(5) + 3600, Rates: map[string]float64{"usd": 150, "eur": 135}})
	}
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCurrentFiatRates(t *testing.T) {
	s := fiatService(t, true)
	ctx := context.Background()
	for _, c := range []struct {
		currencies []string
		want       string
	}{
		{nil, `{"ts":1700442000,"rates":{"eur":135,"usd":150}}`},
		{[]string{" USD ", ""}, `{"ts":1700442000,"rates":{"usd":150}}`},
		{[]string{"usd", "xyz"}, `{"ts":1700442000,"rates":{"usd":150,"xyz":-1}}`},
		// The current ticker lacks the one currency asked: the newest day that has it.
		{[]string{"jpy"}, `{"ts":1700092800,"rates":{"jpy":16000}}`},
	} {
		got, err := s.CurrentFiatRates(ctx, c.currencies, "")
		if err != nil || jsonOf(t, got) != c.want {
			t.Errorf("%q: %s %v, want %s", c.currencies, jsonOf(t, got), err, c.want)
		}
	}
	_, err := s.CurrentFiatRates(ctx, []string{"xyz"}, "")
	wantUserErr(t, err, "No tickers found!")
	_, err = s.CurrentFiatRates(ctx, nil, "0xdac17f958d2ee523a2206206994597c13d831ec7")
	wantUserErr(t, err, "No tickers found!")
}

func TestFiatRatesForTimestamps(t *testing.T) {
	s := fiatService(t, true)
	ctx := context.Background()
	ts := []int64{0, fday(2) + 5, fday(1), fday(4) + 1, fday(3) - 1}
	for _, c := range []struct {
		currencies []string
		want       string
	}{
		// Before the first day: day 0; in the gap: day 3; after the last
		// day: the current ticker.
		{nil, `{"tickers":[{"ts":1700006400,"rates":{"eur":90,"usd":100}},{"ts":1700265600,"rates":{"usd":130}},` +
			`{"ts":1700092800,"rates":{"eur":99,"jpy":16000,"usd":110}},{"ts":1700442000,"rates":{"eur":135,"usd":150}},{"ts":1700265600,"rates":{"usd":130}}]}`},
		// One currency: days without it are passed over.
		{[]string{"EUR"}, `{"tickers":[{"ts":1700006400,"rates":{"eur":90}},{"ts":1700352000,"rates":{"eur":126}},` +
			`{"ts":1700092800,"rates":{"eur":99}},{"ts":1700442000,"rates":{"eur":135}},{"ts":1700352000,"rates":{"eur":126}}]}`},
		// Several: the next day serves, what it lacks is -1.
		{[]string{"usd", "jpy"}, `{"tickers":[{"ts":1700006400,"rates":{"jpy":-1,"usd":100}},{"ts":1700265600,"rates":{"jpy":-1,"usd":130}},` +
			`{"ts":1700092800,"rates":{"jpy":16000,"usd":110}},{"ts":1700442000,"rates":{"jpy":-1,"usd":150}},{"ts":1700265600,"rates":{"jpy":-1,"usd":130}}]}`},
		// A currency no ticker has: the current ticker, with -1.
		{[]string{"xyz"}, `{"tickers":[{"ts":1700442000,"rates":{"xyz":-1}},{"ts":1700442000,"rates":{"xyz":-1}},` +
			`{"ts":1700442000,"rates":{"xyz":-1}},{"ts":1700442000,"rates":{"xyz":-1}},{"ts":1700442000,"rates":{"xyz":-1}}]}`},
	} {
		got, err := s.FiatRatesForTimestamps(ctx, ts, c.currencies, "")
		if err != nil || jsonOf(t, got) != c.want {
			t.Errorf("%q:\n got %s %v\nwant %s", c.currencies, jsonOf(t, got), err, c.want)
		}
	}
	got, err := s.FiatRatesForTimestamps(ctx, []int64{fday(1)}, []string{"usd"}, "sometoken")
	if want := `{"tickers":[{"ts":1700092800,"rates":{"usd":-1}}]}`; err != nil || jsonOf(t, got) != want {
		t.Errorf("token: %s %v", jsonOf(t, got), err)
	}
	_, err = s.FiatRatesForTimestamps(ctx, nil, nil, "")
	wantUserErr(t, err, "No timestamps provided")
}

func TestFiatRatesTickersList(t *testing.T) {
	s := fiatService(t, true)
	ctx := context.Background()
	for ts, want := range map[int64]string{
		0:           `{"ts":1700006400,"available_currencies":["eur","usd"]}`,
		fday(1) - 9: `{"ts":1700092800,"available_currencies":["eur","jpy","usd"]}`,
		fday(9):     `{"ts":1700442000,"available_currencies":["eur","usd"]}`,
	} {
		got, err := s.FiatRatesTickersList(ctx, ts, "")
		if err != nil || jsonOf(t, got) != want {
			t.Errorf("%d: %s %v, want %s", ts, jsonOf(t, got), err, want)
		}
	}
	_, err := s.FiatRatesTickersList(ctx, 0, "sometoken")
	wantUserErr(t, err, "No tickers found")
}

// Balance-history buckets get the rates at their start time; secondary
// values use the current rate; the status tells how fresh the rates are.
func TestFiatHooksAndStatus(t *testing.T) {
	s := fiatService(t, true)
	ctx := context.Background()
	hist := []BalanceHistory{{Time: fday(0) + 3600}, {Time: fday(4) + 7200}, {Time: fday(2)}}
	if err := s.historyRates(ctx, hist, []string{"EUR", "jpy"}); err != nil {
		t.Fatal(err)
	}
	if got := jsonOf(t, []map[string]float64{hist[0].Rates, hist[1].Rates, hist[2].Rates}); got != `[{"eur":99,"jpy":16000},{"eur":135,"jpy":-1},{"eur":-1,"jpy":-1}]` {
		t.Errorf("bucket rates %s", got)
	}
	if err := s.historyRates(ctx, hist, nil); err != nil || jsonOf(t, hist[2].Rates) != `{"usd":130}` {
		t.Errorf("all rates of a bucket: %s %v", jsonOf(t, hist[2].Rates), err)
	}
	if v, ok := s.secondaryValue(ctx, big.NewInt(150_000_000), "USD"); !ok || v != 225 {
		t.Errorf("secondary value %v %v", v, ok)
	}
	if v, ok := s.secondaryValue(ctx, big.NewInt(1), "jpy"); ok {
		t.Errorf("secondary value without a current rate: %v", v)
	}
	var bb BlockbookInfo
	if err := s.fiatStatus(&bb); err != nil {
		t.Fatal(err)
	}
	if !bb.HasFiatRates || bb.CurrentFiatRatesTime == nil || !bb.CurrentFiatRatesTime.Equal(time.Unix(fday(5)+3600, 0)) ||
		bb.HistoricalFiatRatesTime == nil || !bb.HistoricalFiatRatesTime.Equal(time.Unix(fday(4), 0)) {
		t.Errorf("status %+v", bb)
	}
}

// Without fiat_rates configured nothing is served, whatever the index
// holds: unknown rates are -1, the rest "No tickers found".
func TestFiatNotConfigured(t *testing.T) {
	s := fiatService(t, false)
	ctx := context.Background()
	_, err := s.CurrentFiatRates(ctx, []string{"usd"}, "")
	wantUserErr(t, err, "No tickers found!")
	got, err := s.FiatRatesForTimestamps(ctx, []int64{fday(1), 0}, []string{"USD", "eur"}, "")
	if want := `{"tickers":[{"ts":1700092800,"rates":{"eur":-1,"usd":-1}},{"rates":{"eur":-1,"usd":-1}}]}`; err != nil || jsonOf(t, got) != want {
		t.Errorf("timestamps: %s %v", jsonOf(t, got), err)
	}
	_, err = s.FiatRatesTickersList(ctx, fday(1), "")
	wantUserErr(t, err, "No tickers found")
	hist := []BalanceHistory{{Time: fday(1)}}
	if err := s.historyRates(ctx, hist, nil); err != nil || hist[0].Rates != nil {
		t.Errorf("bucket rates %v %v", hist[0].Rates, err)
	}
	if _, ok := s.secondaryValue(ctx, big.NewInt(1), "usd"); ok {
		t.Error("secondary value without fiat rates")
	}
	var bb BlockbookInfo
	if err := s.fiatStatus(&bb); err != nil || jsonOf(t, bb) != jsonOf(t, BlockbookInfo{}) {
		t.Errorf("status %+v %v", bb, err)
	}
}
