package api

import (
	"context"
	"strconv"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// fineService is fiatStore's history (days 0, 1, 3, 4; the current
// ticker an hour into day 5) plus hourly usd points from day 2 to the
// current time and 5-minute ones for its last hour, each 61 s past the
// grid, with usd = 1000 + minutes since day 2.
func fineService(t *testing.T) *UtxoService {
	t.Helper()
	d := fiatStore(t)
	points := func(from, to, step int64) []*db.FiatTicker {
		var out []*db.FiatTicker
		for t := from + 61; t < to; t += step {
			out = append(out, &db.FiatTicker{Time: t, Rates: map[string]float64{"usd": fineUsd(t)}})
		}
		return out
	}
	err := d.WriteFiatSeries(db.FiatHourly, points(fday(2), fday(5)+3600, 3600), 0)
	if err == nil {
		err = d.WriteFiatSeries(db.FiatFiveMinutes, points(fday(5), fday(5)+3600, 300), 0)
	}
	if err != nil {
		t.Fatal(err)
	}
	b := &bchain.Backend{Type: bchain.ChainBitcoinType, Params: bchain.CoinParams{Decimals: 8}}
	return NewUtxoService(d, b, nil, Config{FiatRates: true})
}

func fineUsd(t int64) float64 { return 1000 + float64(t-fday(2))/60 }

// The coin's rate at a time is the finest ticker that covers it: a time
// minutes old takes the 5-minute point, one of days ago the hourly point,
// one before the hourly series (or at a day's start) the daily close. The
// other currencies derive from the day's (else the current) usd ratio; a
// finer ticker that cannot give the one requested currency is passed over.
func TestFiatRatesFinestTicker(t *testing.T) {
	s := fineService(t)
	ctx := context.Background()
	recent := fday(5) + 3000         // 10 minutes before the current ticker
	hoursAgo := fday(4) + 5*3600 + 7 // day 4, 05:00:07
	dayThree := fday(3) + 2*3600 + 5
	old := fday(0) + 5
	ts := []int64{recent, hoursAgo, dayThree, old, fday(4)}
	got, err := s.FiatRatesForTimestamps(ctx, ts, []string{"usd"}, "")
	if err != nil {
		t.Fatal(err)
	}
	five := fday(5) + 3000 + 61     // the 5-minute point of the slot at or after `recent`
	hourly := fday(4) + 6*3600 + 61 // the hourly point of the next full hour
	for i, want := range []struct {
		ts  int64
		usd float64
	}{
		{five, fineUsd(five)},
		{hourly, fineUsd(hourly)},
		{fday(3) + 3*3600 + 61, fineUsd(fday(3) + 3*3600 + 61)},
		{fday(1), 110}, // before the hourly series: the next daily close
		{fday(4), 140}, // a day's start: the daily close, not the hourly point
	} {
		if g := got.Tickers[i]; g.Timestamp != want.ts || g.Rates["usd"] != want.usd {
			t.Errorf("usd at %d: got %+v, want ts %d usd %v", ts[i], g, want.ts, want.usd)
		}
	}
	got, err = s.FiatRatesForTimestamps(ctx, ts, []string{"eur"}, "")
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		ts  int64
		eur float64
	}{
		{five, fineUsd(five) * 135 / 150},     // today: the current ticker's ratio
		{hourly, fineUsd(hourly) * 126 / 140}, // day 4's ratio
		{fday(4), 126},                        // day 3 has no eur: the next daily close with it
		{fday(1), 99},
		{fday(4), 126},
	} {
		if g := got.Tickers[i]; g.Timestamp != want.ts || g.Rates["eur"] != want.eur {
			t.Errorf("eur at %d: got %+v, want ts %d eur %v", ts[i], g, want.ts, want.eur)
		}
	}
	// Balance history buckets take the same rule.
	hist := []BalanceHistory{{Time: recent}, {Time: old}}
	if err := s.historyRates(ctx, hist, []string{"usd"}); err != nil {
		t.Fatal(err)
	}
	if hist[0].Rates["usd"] != fineUsd(five) || hist[1].Rates["usd"] != 110 {
		t.Errorf("balance history rates %v %v", hist[0].Rates, hist[1].Rates)
	}
	// The currencies of a finer ticker are the derived ones.
	list, err := s.FiatRatesTickersList(ctx, hoursAgo, "")
	if err != nil || jsonOf(t, list) != `{"ts":`+strconv.FormatInt(hourly, 10)+`,"available_currencies":["eur","usd"]}` {
		t.Errorf("tickers list %s %v", jsonOf(t, list), err)
	}
}
