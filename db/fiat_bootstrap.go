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
	st, err = unpackFiatBootstrap(v)
	return st, err == nil, err
}

// maxFiatBootstrapAttempts bounds the stored count (a corrupt row is not
// a count).
const maxFiatBootstrapAttempts = 1 << 20

func packFiatBootstrap(st FiatBootstrap) []byte {
	e := encoder{}
	if st.Complete {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
	e.uvarint(uint64(st.Attempts))
	return e.b
}

func unpackFiatBootstrap(v []byte) (FiatBootstrap, error) {
	d := newDecoder("fiat bootstrap marker", v)
	var st FiatBootstrap
	if c := d.bytes(1); c != nil {
		if c[0] > 1 {
			d.fail("complete flag %d", c[0])
		}
		st.Complete = c[0] == 1
	}
	if n := d.uvarint(); n > maxFiatBootstrapAttempts {
		d.fail("attempts %d", n)
	} else {
		st.Attempts = int(n)
	}
	return st, d.done()
}

// WriteFiatBootstrap replaces the marker.
func (d *DB) WriteFiatBootstrap(st FiatBootstrap) error {
	if st.Attempts < 0 || st.Attempts > maxFiatBootstrapAttempts {
		return fmt.Errorf("fiat bootstrap marker: attempts %d out of range", st.Attempts)
	}
	b := d.NewBatch()
	defer b.Destroy()
	b.put(CFFiatRates, fiatBootstrapKey, packFiatBootstrap(st))
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
