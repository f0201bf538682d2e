package db

// The fiat history bootstrap marker and the key-only scan of daily history
// days (fiatRates family, layout in schema_fiat.go):
//
//	'b' → u8(complete: 0 or 1) ‖ uv(failed attempts)
//
// Blockbook keeps the same two facts as HistoricalFiatBootstrapComplete
// and HistoricalFiatBootstrapAttempts in its default family.

import "fmt"

const fiatKindBootstrap = 'b'

var fiatBootstrapKey = []byte{fiatKindBootstrap}

// FiatBootstrap is the persisted state of the first full-history download.
type FiatBootstrap struct {
	Complete bool
	Attempts int // failed runs since the last reset
}

// ReadFiatBootstrap returns the marker; found is false before it was first
// written (a new index, or one from before the marker existed).
func ReadFiatBootstrap(r Reader) (st FiatBootstrap, found bool, err error) {
	v, err := r.get(CFFiatRates, fiatBootstrapKey)
	if err != nil || v == nil {
		return st, false, err
	}
	d := newDecoder("fiat bootstrap marker", v)
	c := d.bytes(1)
	n := d.uvarint()
	if err := d.done(); err != nil {
		return st, false, err
	}
	if c[0] > 1 || n > 1<<20 {
		return st, false, fmt.Errorf("fiat bootstrap marker: bad value %x", v)
	}
	return FiatBootstrap{Complete: c[0] == 1, Attempts: int(n)}, true, nil
}

// WriteFiatBootstrap replaces the marker.
func (d *DB) WriteFiatBootstrap(st FiatBootstrap) error {
	if st.Attempts < 0 {
		return fmt.Errorf("fiat bootstrap marker: negative attempts %d", st.Attempts)
	}
	e := encoder{}
	if st.Complete {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
	e.uvarint(uint64(st.Attempts))
	b := d.NewBatch()
	defer b.Destroy()
	b.put(CFFiatRates, fiatBootstrapKey, e.b)
	return d.writeOffChain(b)
}

// FiatTickerTimes returns the times of the history tickers at or after
// from, ascending, reading keys only.
func FiatTickerTimes(r Reader, from int64) ([]int64, error) {
	var out []int64
	err := r.iterate(CFFiatRates, fiatTickerKey(max(from, 0)), fiatTickerPrefix, func(k, _ []byte) (bool, error) {
		t, err := unpackFiatTickerKey(k)
		if err != nil {
			return false, err
		}
		out = append(out, t)
		return true, nil
	})
	return out, err
}
