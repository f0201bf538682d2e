package db

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
)

// Row is one key/value of a column family.
type Row struct {
	CF         CF
	Key, Value []byte
}

// DumpRows calls fn for every row that the connect/disconnect byte-identity
// guarantee covers: all column families except caches and off-chain data
// (fiat rates), and the internal state without volatile keys. Rows come in
// (column family, key) order.
func DumpRows(r Reader, cfs []CF, fn func(Row) error) error {
	for _, cf := range cfs {
		if !cf.Mirrored() {
			continue
		}
		err := r.iterate(cf, nil, nil, func(k, v []byte) (bool, error) {
			if cf == CFDefault && IsVolatileStateKey(k) {
				return true, nil
			}
			return true, fn(Row{CF: cf, Key: slices.Clone(k), Value: slices.Clone(v)})
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Dump writes the rows DumpRows visits as text, one "cf key value" line each
// (hex), for diffing two indexes with ordinary tools.
func Dump(r Reader, cfs []CF, w io.Writer) error {
	return DumpRows(r, cfs, func(row Row) error {
		_, err := fmt.Fprintf(w, "%s %s %s\n", row.CF, hex.EncodeToString(row.Key), hex.EncodeToString(row.Value))
		return err
	})
}

// Diff compares two indexes row by row and describes the first differences
// (at most maxDiffs); an empty result means they are byte-identical.
func Diff(a, b Reader, cfs []CF, maxDiffs int) ([]string, error) {
	var ra, rb []Row
	if err := DumpRows(a, cfs, func(r Row) error { ra = append(ra, r); return nil }); err != nil {
		return nil, err
	}
	if err := DumpRows(b, cfs, func(r Row) error { rb = append(rb, r); return nil }); err != nil {
		return nil, err
	}
	var diffs []string
	i, j := 0, 0
	for (i < len(ra) || j < len(rb)) && len(diffs) < maxDiffs {
		switch c := compareRows(ra, rb, i, j); {
		case c < 0:
			diffs = append(diffs, fmt.Sprintf("only in first: %s %x = %x", ra[i].CF, ra[i].Key, ra[i].Value))
			i++
		case c > 0:
			diffs = append(diffs, fmt.Sprintf("only in second: %s %x = %x", rb[j].CF, rb[j].Key, rb[j].Value))
			j++
		default:
			if !bytes.Equal(ra[i].Value, rb[j].Value) {
				diffs = append(diffs, fmt.Sprintf("differs: %s %x: %x vs %x", ra[i].CF, ra[i].Key, ra[i].Value, rb[j].Value))
			}
			i++
			j++
		}
	}
	return diffs, nil
}

// compareRows orders row i of a against row j of b; a missing row sorts last.
func compareRows(a, b []Row, i, j int) int {
	switch {
	case i >= len(a):
		return 1
	case j >= len(b):
		return -1
	case a[i].CF != b[j].CF:
		return int(a[i].CF) - int(b[j].CF)
	}
	return bytes.Compare(a[i].Key, b[j].Key)
}
