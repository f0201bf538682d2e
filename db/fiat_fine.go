package db

// Finer fiat tickers (Blockbook's HourlyTickers and FiveMinutesTickers):
// the coin's rate in one currency at hourly points for 90 days and at
// 5-minute points for one day, beside the daily history. Rows of the
// fiatRates family (layout in schema_fiat.go):
//
//	'h' ‖ u32be(slot) → uv(point time) ‖ rates   hourly
//	'f' ‖ u32be(slot) → uv(point time) ‖ rates   5-minute
//
// slot is the provider's point time rounded to the nearest step (as
// Blockbook keys them), so a later download of the same point replaces the
// row; the value keeps the point's own time, which the answers show.

import "fmt"

// FiatSeries names a series of finer tickers.
type FiatSeries byte

const (
	FiatHourly      FiatSeries = 'h'
	FiatFiveMinutes FiatSeries = 'f'
)

// Step is the series' granularity in seconds.
func (s FiatSeries) Step() int64 {
	if s == FiatHourly {
		return 3600
	}
	return 300
}

// Keep is how far back (seconds) the series is kept: 90 days of hourly
// points, one day of 5-minute points, as CoinGecko serves them.
func (s FiatSeries) Keep() int64 {
	if s == FiatHourly {
		return 90 * 86400
	}
	return 86400
}

// Name is the series' name in logs and metrics.
func (s FiatSeries) Name() string {
	if s == FiatHourly {
		return "hourly"
	}
	return "five_minutes"
}

func (s FiatSeries) key(slot int64) []byte {
	e := encoder{b: []byte{byte(s)}}
	e.u32be(uint32(min(max(slot, 0), maxFiatTime)))
	return e.b
}

// FiatSlot rounds t to the nearest step of the series (Blockbook's
// roundUnix).
func (s FiatSeries) FiatSlot(t int64) int64 {
	u := t + s.Step()/2
	return u - u%s.Step()
}

// FiatCeil is t rounded up to the step (Blockbook's ceilUnix).
func (s FiatSeries) FiatCeil(t int64) int64 {
	u := t + s.Step() - 1
	return u - u%s.Step()
}

// WriteFiatSeries stores tickers of the series, each under its slot, and
// deletes the rows whose slot is before keepFrom, in one atomic write (a
// crash leaves the old rows or the new ones, never a mix).
func (d *DB) WriteFiatSeries(s FiatSeries, tickers []*FiatTicker, keepFrom int64) error {
	if s != FiatHourly && s != FiatFiveMinutes {
		return fmt.Errorf("unknown fiat series %q", byte(s))
	}
	b := d.NewBatch()
	defer b.Destroy()
	end := s.key(max(keepFrom, 0))
	err := d.iterate(CFFiatRates, nil, []byte{byte(s)}, func(k, _ []byte) (bool, error) {
		if string(k) >= string(end) {
			return false, nil
		}
		b.del(CFFiatRates, k)
		return true, nil
	})
	if err != nil {
		return err
	}
	for _, t := range tickers {
		if len(t.Rates) == 0 {
			return fmt.Errorf("%w at %d", ErrEmptyTicker, t.Time)
		}
		if t.Time <= 0 || t.Time > maxFiatTime {
			return fmt.Errorf("fiat ticker time %d out of range", t.Time)
		}
		if slot := s.FiatSlot(t.Time); slot >= keepFrom {
			b.put(CFFiatRates, s.key(slot), packFiatCurrent(t))
		}
	}
	return d.writeOffChain(b)
}

// fiatSeriesRow decodes a row of a series.
func fiatSeriesRow(s FiatSeries, k, v []byte) (slot int64, t *FiatTicker, err error) {
	if len(k) != 5 || k[0] != byte(s) {
		return 0, nil, fmt.Errorf("fiatRates %s key %x malformed", s.Name(), k)
	}
	slot = int64(uint32(k[1])<<24 | uint32(k[2])<<16 | uint32(k[3])<<8 | uint32(k[4]))
	t, err = unpackFiatCurrent(v)
	if err != nil {
		return 0, nil, fmt.Errorf("fiat %s ticker at %d: %w", s.Name(), slot, err)
	}
	return slot, t, nil
}

// FiatSeriesFirst returns the first slot of the series; ok is false when
// it is empty.
func FiatSeriesFirst(r Reader, s FiatSeries) (first int64, ok bool, err error) {
	err = r.iterate(CFFiatRates, nil, []byte{byte(s)}, func(k, v []byte) (bool, error) {
		first, _, err = fiatSeriesRow(s, k, v)
		ok = err == nil
		return false, err
	})
	return first, ok, err
}

// LastFiatSeriesSlot returns the last slot of the series (0 when empty).
func (d *DB) LastFiatSeriesSlot(s FiatSeries) (int64, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return 0, ErrClosed
	}
	var last int64
	err := d.eng.IterateReverse(CFFiatRates, s.key(maxFiatTime), []byte{byte(s)}, func(k, v []byte) (bool, error) {
		var err error
		last, _, err = fiatSeriesRow(s, k, v)
		return false, err
	})
	return last, err
}

// FindFiatSeriesTicker returns the series' ticker for time t by Blockbook's
// rule: when t lies within the series (its first slot ≤ t ≤ its last slot),
// the first row at or after t rounded up to the step (a missing slot takes
// the next point); else nil. Rates are as stored (the provider's one
// currency); the ticker's Time is the point's own.
func FindFiatSeriesTicker(r Reader, s FiatSeries, t, first int64) (*FiatTicker, error) {
	if t < first {
		return nil, nil
	}
	var found *FiatTicker
	err := r.iterate(CFFiatRates, s.key(s.FiatCeil(t)), []byte{byte(s)}, func(k, v []byte) (bool, error) {
		_, ft, err := fiatSeriesRow(s, k, v)
		found = ft
		return false, err
	})
	return found, err
}
