package db

// Accessors of the fiatRates column family (layout in schema_fiat.go). Its
// writes are not block writes: they go straight to the engine (with its log),
// never count for fault injection, and do not wait for the sync worker.

import (
	"errors"
	"fmt"
	"slices"
)

// ErrEmptyTicker is returned when storing a ticker without rates.
var ErrEmptyTicker = errors.New("fiat ticker without rates")

// ReadFiatCurrent returns the current ticker, or nil before the first
// download.
func ReadFiatCurrent(r Reader) (*FiatTicker, error) {
	v, err := r.get(CFFiatRates, fiatCurrentKey)
	if err != nil || v == nil {
		return nil, err
	}
	t, err := unpackFiatCurrent(v)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// ReadFiatTicker returns the history ticker stored for exactly time t.
func ReadFiatTicker(r Reader, t int64) (*FiatTicker, error) {
	if t < 0 || t > maxFiatTime {
		return nil, nil
	}
	v, err := r.get(CFFiatRates, fiatTickerKey(t))
	if err != nil || v == nil {
		return nil, err
	}
	ft, err := unpackFiatRates(v)
	if err != nil {
		return nil, fmt.Errorf("fiat ticker at %d: %w", t, err)
	}
	ft.Time = t
	return ft, nil
}

// FindFiatTickers returns, for each of timestamps, the first history ticker
// at or after it that has a rate for currency ("" takes any), or nil when
// there is none. This is Blockbook's rule: a time's rate is the next daily
// close, and times before the first stored day get the first one.
func FindFiatTickers(r Reader, timestamps []int64, currency string) ([]*FiatTicker, error) {
	return findFiatTickersBy(r, timestamps, func(t *FiatTicker) bool { return t.Has(currency) })
}

// FindFiatTokenTickers is FindFiatTickers for the tickers that have a rate
// of token (a contract, lowercase 0x hex).
func FindFiatTokenTickers(r Reader, timestamps []int64, token string) ([]*FiatTicker, error) {
	return findFiatTickersBy(r, timestamps, func(t *FiatTicker) bool { return t.HasToken(token) })
}

// HasToken reports whether the ticker has a rate of token ("": of any).
func (t *FiatTicker) HasToken(token string) bool {
	if token == "" {
		return len(t.TokenRates) > 0
	}
	_, ok := t.TokenRates[token]
	return ok
}

func findFiatTickersBy(r Reader, timestamps []int64, suits func(*FiatTicker) bool) ([]*FiatTicker, error) {
	out := make([]*FiatTicker, len(timestamps))
	order := make([]int, len(timestamps))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return compareInt64(timestamps[a], timestamps[b]) })
	var prev *FiatTicker // the answer for the previous (smaller) timestamp
	exhausted := false   // no suitable ticker at or after the previous timestamp
	for _, i := range order {
		t := max(timestamps[i], 0)
		switch {
		case exhausted:
			continue
		case prev != nil && t <= prev.Time:
			out[i] = prev // nothing suitable lies between the two
			continue
		case t > maxFiatTime:
			exhausted = true
			continue
		}
		found, err := findFiatTicker(r, t, suits)
		if err != nil {
			return nil, err
		}
		if found == nil {
			exhausted = true
			continue
		}
		out[i], prev = found, found
	}
	return out, nil
}

func compareInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func findFiatTicker(r Reader, t int64, suits func(*FiatTicker) bool) (*FiatTicker, error) {
	var found *FiatTicker
	err := r.iterate(CFFiatRates, fiatTickerKey(t), fiatTickerPrefix, func(k, v []byte) (bool, error) {
		ft, err := decodeFiatRow(k, v)
		if err != nil {
			return false, err
		}
		if suits(ft) {
			found = ft
			return false, nil
		}
		return true, nil
	})
	return found, err
}

func decodeFiatRow(k, v []byte) (*FiatTicker, error) {
	ts, err := unpackFiatTickerKey(k)
	if err != nil {
		return nil, err
	}
	ft, err := unpackFiatRates(v)
	if err != nil {
		return nil, fmt.Errorf("fiat ticker at %d: %w", ts, err)
	}
	ft.Time = ts
	return ft, nil
}

// LastFiatTicker returns the newest history ticker that has a rate for
// currency ("" takes any), or nil.
func (d *DB) LastFiatTicker(currency string) (*FiatTicker, error) {
	return d.lastFiatTickerBy(func(t *FiatTicker) bool { return t.Has(currency) })
}

// LastFiatTokenTicker returns the newest history ticker that has a rate of
// token ("": of any token), or nil.
func (d *DB) LastFiatTokenTicker(token string) (*FiatTicker, error) {
	return d.lastFiatTickerBy(func(t *FiatTicker) bool { return t.HasToken(token) })
}

func (d *DB) lastFiatTickerBy(suits func(*FiatTicker) bool) (*FiatTicker, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return nil, ErrClosed
	}
	var found *FiatTicker
	err := d.eng.IterateReverse(CFFiatRates, fiatTickerKey(maxFiatTime), fiatTickerPrefix, func(k, v []byte) (bool, error) {
		ft, err := decodeFiatRow(k, v)
		if err != nil {
			return false, err
		}
		if suits(ft) {
			found = ft
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	return found, nil
}

// WriteFiatTickers stores history tickers (replacing those of the same
// times) in one atomic write.
func (d *DB) WriteFiatTickers(tickers []*FiatTicker) error {
	b := d.NewBatch()
	defer b.Destroy()
	for _, t := range tickers {
		if len(t.Rates) == 0 {
			return fmt.Errorf("%w at %d", ErrEmptyTicker, t.Time)
		}
		if t.Time < 0 || t.Time > maxFiatTime {
			return fmt.Errorf("fiat ticker time %d out of range", t.Time)
		}
		b.put(CFFiatRates, fiatTickerKey(t.Time), packFiatRates(t))
	}
	return d.writeOffChain(b)
}

// WriteFiatCurrent replaces the current ticker.
func (d *DB) WriteFiatCurrent(t *FiatTicker) error {
	if len(t.Rates) == 0 {
		return ErrEmptyTicker
	}
	b := d.NewBatch()
	defer b.Destroy()
	b.put(CFFiatRates, fiatCurrentKey, packFiatCurrent(t))
	return d.writeOffChain(b)
}

// writeOffChain commits a batch that is not a block write.
func (d *DB) writeOffChain(b *Batch) error { return d.writeUncounted(b) }
