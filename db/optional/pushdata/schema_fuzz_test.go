package pushdata

import (
	"bytes"
	"errors"
	"testing"

	"github.com/openexplorer/blockbook/db"
)

// FuzzRow: any bytes decode to a row or give ErrCorrupt, and a row that
// decodes encodes back to the same key (one encoding per row).
func FuzzRow(f *testing.F) {
	f.Add(rowKey(Ref{Height: 7, Index: 300, N: 2, Input: true}), []byte{})
	f.Add(rowKey(Ref{Hash: [32]byte{1}, Height: 1 << 31, Index: 0xffffffff, N: 0xffffffff}), []byte{})
	f.Add(append(rowKey(Ref{}), 0), []byte{})
	f.Add(rowKey(Ref{}), []byte{1})
	f.Fuzz(func(t *testing.T, key, val []byte) {
		r, err := unpackRow(key, val)
		if err != nil {
			if !errors.Is(err, db.ErrCorrupt) {
				t.Fatalf("error not ErrCorrupt: %v", err)
			}
			return
		}
		if k := rowKey(r); !bytes.Equal(k, key) {
			t.Fatalf("%x decodes to %+v, which encodes to %x", key, r, k)
		}
	})
}
