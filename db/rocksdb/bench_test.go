package rocksdb

import (
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// The hot reads of a sync through the engine: a point lookup and a short
// prefix iteration (run with -benchmem: the engine adds no allocations).
func BenchmarkReads(b *testing.B) {
	d, err := Open(testOptions(b.TempDir()))
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	txid := bchain.Hash{7}
	if err := d.WriteCachedTx(txid, make([]byte, 200)); err != nil {
		b.Fatal(err)
	}
	b.Run("get", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if v, err := db.ReadCachedTx(d, txid); err != nil || v == nil {
				b.Fatal(v, err)
			}
		}
	})
	b.Run("iterate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := db.IterateUtxos(d, bchain.AddrDesc{1, 2, 3}, func(*db.Utxo) (bool, error) { return true, nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
}
