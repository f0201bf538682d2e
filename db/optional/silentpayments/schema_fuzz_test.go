package silentpayments

import (
	"bytes"
	"testing"
)

// FuzzUnpackRow: corrupt bytes give an error, never a panic, and a row
// that decodes packs back to the same bytes.
func FuzzUnpackRow(f *testing.F) {
	r := Row{Height: 7, Index: 300, Outputs: []Output{{Vout: 0, Value: 546}, {Vout: 200, Value: 1 << 40}}}
	r.Tweak[0] = 3
	f.Add(rowKey(r.Height, r.Index), packValue(&r))
	f.Add(rowKey(1, 2), []byte{2})
	f.Fuzz(func(t *testing.T, key, val []byte) {
		got, err := unpackRow(key, val)
		if err != nil {
			return
		}
		if !bytes.Equal(rowKey(got.Height, got.Index), key) || !bytes.Equal(packValue(&got), val) {
			t.Fatalf("row %+v does not pack back to %x %x", got, key, val)
		}
	})
}
