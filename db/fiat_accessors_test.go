package db

import (
	"errors"
	"slices"
	"testing"
)

const day = 86400

func fiatDay(n int64) int64 { return 1700000000 - 1700000000%day + n*day }

// A gap on day 2, and "eur" missing on day 3.
func writeFiatHistory(t *testing.T, d *DB) {
	t.Helper()
	err := d.WriteFiatTickers([]*FiatTicker{
		{Time: fiatDay(0), Rates: map[string]float64{"usd": 100, "eur": 90}},
		{Time: fiatDay(1), Rates: map[string]float64{"usd": 110, "eur": 99}},
		{Time: fiatDay(3), Rates: map[string]float64{"usd": 130}},
		{Time: fiatDay(4), Rates: map[string]float64{"usd": 140, "eur": 126}},
	})
	if err != nil {
		t.Fatal(err)
	}
}

func tickerTimes(ts []*FiatTicker) []int64 {
	out := make([]int64, len(ts))
	for i, t := range ts {
		if t == nil {
			out[i] = -1
		} else {
			out[i] = t.Time
		}
	}
	return out
}

// A time's ticker is the first stored one at or after it with the currency
// (Blockbook's daily lookup): earlier times get the first day, gaps the
// next day, times after the last day none; input order is kept.
func TestFindFiatTickers(t *testing.T) {
	d := openTestDB(t)
	writeFiatHistory(t, d)
	ts := []int64{fiatDay(4) + 1, fiatDay(2) + 5, 0, fiatDay(1), fiatDay(1) - 1, fiatDay(2) + 5, -7, fiatDay(3) + 1}
	for _, c := range []struct {
		currency string
		want     []int64
	}{
		{"", []int64{-1, fiatDay(3), fiatDay(0), fiatDay(1), fiatDay(1), fiatDay(3), fiatDay(0), fiatDay(4)}},
		{"eur", []int64{-1, fiatDay(4), fiatDay(0), fiatDay(1), fiatDay(1), fiatDay(4), fiatDay(0), fiatDay(4)}},
		{"jpy", []int64{-1, -1, -1, -1, -1, -1, -1, -1}},
	} {
		snap, err := d.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		got, err := FindFiatTickers(snap, ts, c.currency)
		snap.Release()
		if err != nil {
			t.Fatal(err)
		}
		if g := tickerTimes(got); !slices.Equal(g, c.want) {
			t.Errorf("currency %q: got %v, want %v", c.currency, g, c.want)
		}
	}
	got, err := FindFiatTickers(d, []int64{fiatDay(2)}, "")
	if err != nil || got[0].Rates["usd"] != 130 || got[0].Has("eur") {
		t.Fatalf("rates of the gap day: %+v %v", got[0], err)
	}
}

func TestFiatLastAndCurrent(t *testing.T) {
	d := openTestDB(t)
	if last, err := d.LastFiatTicker(""); last != nil || err != nil {
		t.Fatalf("empty: %+v %v", last, err)
	}
	if cur, err := ReadFiatCurrent(d); cur != nil || err != nil {
		t.Fatalf("empty current: %+v %v", cur, err)
	}
	writeFiatHistory(t, d)
	for cur, want := range map[string]int64{"": fiatDay(4), "usd": fiatDay(4), "eur": fiatDay(4), "jpy": -1} {
		last, err := d.LastFiatTicker(cur)
		if err != nil || tickerTimes([]*FiatTicker{last})[0] != want {
			t.Errorf("last %q: %+v %v, want %d", cur, last, err, want)
		}
	}
	// The current ticker is no history ticker.
	if err := d.WriteFiatCurrent(&FiatTicker{Time: fiatDay(5) + 600, Rates: map[string]float64{"usd": 150, "jpy": 20000}}); err != nil {
		t.Fatal(err)
	}
	if last, _ := d.LastFiatTicker("jpy"); last != nil {
		t.Errorf("the current ticker counted as history: %+v", last)
	}
	cur, err := ReadFiatCurrent(d)
	if err != nil || cur.Time != fiatDay(5)+600 || cur.Rates["jpy"] != 20000 {
		t.Fatalf("current: %+v %v", cur, err)
	}
	if got, _ := FindFiatTickers(d, []int64{fiatDay(5)}, ""); got[0] != nil {
		t.Errorf("the current ticker found as history: %+v", got[0])
	}
	// Replacing a day merges nothing by itself: the writer passes the whole ticker.
	if err := d.WriteFiatTickers([]*FiatTicker{{Time: fiatDay(3), Rates: map[string]float64{"usd": 131, "eur": 118}}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := ReadFiatTicker(d, fiatDay(3)); got == nil || got.Rates["eur"] != 118 || got.Time != fiatDay(3) {
		t.Errorf("replaced day: %+v", got)
	}
	if err := d.WriteFiatTickers([]*FiatTicker{{Time: fiatDay(6)}}); !errors.Is(err, ErrEmptyTicker) {
		t.Errorf("empty ticker stored: %v", err)
	}
	if err := d.WriteFiatCurrent(&FiatTicker{Time: 1}); !errors.Is(err, ErrEmptyTicker) {
		t.Errorf("empty current ticker stored: %v", err)
	}
}

// Fiat rates are not chain data: two indexes that differ only in them are
// identical for the connect/disconnect comparisons, and fiat writes are no
// block writes (fault injection does not count them).
func TestFiatRatesOutsideTheMirror(t *testing.T) {
	a, b := openTestDB(t), openTestDB(t)
	writeFiatHistory(t, a)
	if err := a.WriteFiatCurrent(&FiatTicker{Time: 5, Rates: map[string]float64{"usd": 1}}); err != nil {
		t.Fatal(err)
	}
	assertIdentical(t, a, b)
	if a.Writes() != 0 {
		t.Errorf("fiat writes counted as block writes: %d", a.Writes())
	}
}
