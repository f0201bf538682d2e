package db

import (
	"errors"
	"testing"
)

// scanPayingTxs accepts exactly the rows unpackAddrTxs accepts, and keeps
// the entries unpackAddrTxs decodes with an output index pays accepts
// (here: even ones), with their positions in the row.
func FuzzScanPayingTxs(f *testing.F) {
	f.Add(packAddrTxs([]AddrTx{{Index: 9, Indexes: []int32{^0, 2}}, {Index: 4, Indexes: []int32{1}}, {Index: 0, Indexes: []int32{0, 4, ^3}}}))
	f.Add(packAddrTxs([]AddrTx{{Index: 3, Indexes: []int32{^1}}}))
	f.Add([]byte{5, 0})             // a tx without indexes
	f.Add([]byte{1, 1, 0, 2, 1, 2}) // indexes not decreasing
	f.Add([]byte{0x80})             // a truncated varint
	f.Fuzz(func(t *testing.T, b []byte) {
		txs, err := unpackAddrTxs(b)
		even := func(i int, vout uint32) bool { return i == 7 && vout%2 == 0 }
		kept, places, n, scanErr := scanPayingTxs(b, 7, even, nil, nil)
		if (err == nil) != (scanErr == nil) {
			t.Fatalf("unpackAddrTxs: %v, scanPayingTxs: %v", err, scanErr)
		}
		if err != nil {
			if !errors.Is(scanErr, ErrCorrupt) {
				t.Fatalf("error is not ErrCorrupt: %v", scanErr)
			}
			return
		}
		if int(n) != len(txs) {
			t.Fatalf("%d txs counted, %d decoded", n, len(txs))
		}
		k := 0
		for j, tx := range txs {
			pays := false
			for _, x := range tx.Indexes {
				pays = pays || (x >= 0 && x%2 == 0)
			}
			if !pays {
				continue
			}
			if k >= len(kept) || kept[k].Index != tx.Index || places[k] != int32(j) {
				t.Fatalf("entry %d (tx %d) not kept as %d", j, tx.Index, k)
			}
			k++
		}
		if k != len(kept) {
			t.Fatalf("%d kept, want %d", len(kept), k)
		}
	})
}
