package db

import (
	"slices"
	"testing"
)

// The bootstrap marker: absent until written, kept as written, a bad value
// refused; the day scan reads the history's times only, from a time on.
func TestFiatBootstrapMarker(t *testing.T) {
	d := openTestDB(t)
	if _, found, err := ReadFiatBootstrap(d); found || err != nil {
		t.Fatalf("new index: found %v err %v", found, err)
	}
	for _, st := range []FiatBootstrap{{}, {Attempts: 2}, {Complete: true}} {
		if err := d.WriteFiatBootstrap(st); err != nil {
			t.Fatal(err)
		}
		got, found, err := ReadFiatBootstrap(d)
		if err != nil || !found || got != st {
			t.Fatalf("wrote %+v, read %+v %v %v", st, got, found, err)
		}
	}
	if err := d.WriteFiatBootstrap(FiatBootstrap{Attempts: -1}); err == nil {
		t.Error("negative attempts stored")
	}
	for _, bad := range [][]byte{{}, {2, 0}, {1}, {0, 0, 0}} {
		b := d.NewBatch()
		b.put(CFFiatRates, fiatBootstrapKey, bad)
		if err := d.writeOffChain(b); err != nil {
			t.Fatal(err)
		}
		b.Destroy()
		if _, _, err := ReadFiatBootstrap(d); err == nil {
			t.Errorf("value %x accepted", bad)
		}
	}

	var rows []*FiatTicker
	for _, n := range []int64{1, 2, 5} {
		rows = append(rows, &FiatTicker{Time: fiatDay(n), Rates: map[string]float64{"usd": 1}})
	}
	if err := d.WriteFiatTickers(rows); err != nil {
		t.Fatal(err)
	}
	if err := d.WriteFiatCurrent(&FiatTicker{Time: fiatDay(6), Rates: map[string]float64{"usd": 1}}); err != nil {
		t.Fatal(err)
	}
	got, err := FiatTickerTimes(d, fiatDay(2))
	if err != nil || !slices.Equal(got, []int64{fiatDay(2), fiatDay(5)}) {
		t.Errorf("times %v %v", got, err)
	}
}

func FuzzUnpackFiatBootstrap(f *testing.F) {
	f.Add(packFiatBootstrap(FiatBootstrap{Complete: true}))
	f.Add(packFiatBootstrap(FiatBootstrap{Attempts: 2}))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := unpackFiatBootstrap(b)
		checkCanonical(t, b, err, func() []byte { return packFiatBootstrap(v) })
	})
}
