package db

import (
	"slices"
	"testing"
)

// seriesPoints returns usd points every step from `from` (each 61 s past
// the grid, as CoinGecko's are not on round times) with rate = index.
func seriesPoints(from, step int64, n int) []*FiatTicker {
	out := make([]*FiatTicker, n)
	for i := range out {
		out[i] = &FiatTicker{Time: from + int64(i)*step + 61, Rates: map[string]float64{"usd": float64(100 + i)}}
	}
	return out
}

// The finer series: stored under slots, found by Blockbook's rule (first
// slot ≤ t ≤ last slot, the first point at or after t rounded up to the
// step), pruned by keepFrom in the same write, off the mirror.
func TestFiatSeries(t *testing.T) {
	d := openTestDB(t)
	h := int64(3600)
	base := fiatDay(10)
	pts := seriesPoints(base, h, 48)
	pts = slices.Delete(pts, 5, 7) // a gap: hours 5 and 6 missing
	if err := d.WriteFiatSeries(FiatHourly, pts, 0); err != nil {
		t.Fatal(err)
	}
	if err := d.WriteFiatSeries(FiatFiveMinutes, seriesPoints(base+47*h, 300, 12), 0); err != nil {
		t.Fatal(err)
	}
	first, ok, err := FiatSeriesFirst(d, FiatHourly)
	if err != nil || !ok || first != base {
		t.Fatalf("first %d %v %v, want %d", first, ok, err, base)
	}
	if last, err := d.LastFiatSeriesSlot(FiatHourly); err != nil || last != base+47*h {
		t.Fatalf("last %d %v", last, err)
	}
	for _, c := range []struct {
		t    int64
		want int64 // point time, -1 none
		rate float64
	}{
		{base - 1, -1, 0},                       // before the series
		{base, base + 61, 100},                  // on the first slot
		{base + 1, base + h + 61, 101},          // rounded up to the next hour
		{base + 4*h + 10, base + 7*h + 61, 107}, // the gap takes the next point
		{base + 47*h, base + 47*h + 61, 147},    // the last slot
		{base + 47*h + 1, -1, 0},                // after it
	} {
		snap, err := d.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		got, err := FindFiatSeriesTicker(snap, FiatHourly, c.t, first)
		snap.Release()
		switch {
		case err != nil:
			t.Fatal(err)
		case c.want < 0 && got != nil:
			t.Errorf("t %d: got %+v, want none", c.t, got)
		case c.want >= 0 && (got == nil || got.Time != c.want || got.Rates["usd"] != c.rate):
			t.Errorf("t %d: got %+v, want point %d rate %v", c.t, got, c.want, c.rate)
		}
	}
	// A new download replaces the same slots and prunes what is older
	// than keepFrom, in one write; the other series is untouched.
	fresh := seriesPoints(base+24*h, h, 30)
	for _, p := range fresh {
		p.Rates["usd"] += 1000
		p.Time += 30 // a slightly different point time of the same slot
	}
	if err := d.WriteFiatSeries(FiatHourly, fresh, base+24*h); err != nil {
		t.Fatal(err)
	}
	if first, _, _ := FiatSeriesFirst(d, FiatHourly); first != base+24*h {
		t.Errorf("after pruning the first slot is %d, want %d", first, base+24*h)
	}
	n := 0
	err = d.iterate(CFFiatRates, nil, []byte{byte(FiatHourly)}, func(_, _ []byte) (bool, error) { n++; return true, nil })
	if err != nil || n != 30 {
		t.Errorf("%d hourly rows after the replacement, want 30 (%v)", n, err)
	}
	got, err := FindFiatSeriesTicker(d, FiatHourly, base+30*h, base+24*h)
	if err != nil || got == nil || got.Rates["usd"] != 1106 || got.Time != base+30*h+91 {
		t.Errorf("replaced point: %+v %v", got, err)
	}
	if f, ok, _ := FiatSeriesFirst(d, FiatFiveMinutes); !ok || f != base+47*h {
		t.Errorf("5-minute series touched: %d %v", f, ok)
	}
	// Daily lookups never see the finer rows.
	if last, err := d.LastFiatTicker(""); last != nil || err != nil {
		t.Errorf("a finer row read as daily: %+v %v", last, err)
	}
	if err := d.WriteFiatSeries(FiatHourly, []*FiatTicker{{Time: base, Rates: nil}}, 0); err == nil {
		t.Error("a ticker without rates was stored")
	}
	if err := d.WriteFiatSeries('x', pts, 0); err == nil {
		t.Error("an unknown series was stored")
	}
	assertIdentical(t, d, openTestDB(t))
}
