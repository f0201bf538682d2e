package rocksdb

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/openexplorer/blockbook/db"
)

// BenchmarkRunWrite writes a staged run of rows shaped like a bulk round's
// (sorted keys, an empty family: the run has the last level's options,
// or with load, those of a load's runs, LZ4), the part of a sync's flush
// spent in RocksDB's SST writer.
func BenchmarkRunWrite(b *testing.B) {
	e, err := openEngine(testOptions(b.TempDir()))
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = e.Close() }()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		cf         db.CF
		klen, vlen int
	}{
		{db.CFAddresses, 26, 6},    // descriptor, height; positions
		{db.CFTxAddresses, 32, 70}, // txid; descriptors and values
		{db.CFSpends, 10, 6},       // position; position
	} {
		const n = 100_000
		keys := make([][]byte, n)
		for i := range keys {
			keys[i] = make([]byte, c.klen)
			for j := range keys[i] {
				keys[i][j] = byte(rng.Uint32())
			}
		}
		slices.SortFunc(keys, func(a, b []byte) int { return slices.Compare(a, b) })
		keys = slices.CompactFunc(keys, func(a, b []byte) bool { return slices.Equal(a, b) })
		value := make([]byte, c.vlen)
		for _, load := range []bool{false, true} {
			if err := e.TuneForLoad(c.cf, db.LoadTuning{Compression: load}); err != nil {
				b.Fatal(err)
			}
			name := c.cf.String()
			if load {
				name += "/load"
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(len(keys) * (c.klen + c.vlen)))
				for b.Loop() {
					w, err := e.NewRun(c.cf, "bench.sst")
					if err != nil {
						b.Fatal(err)
					}
					for i, k := range keys {
						binary.BigEndian.PutUint32(value, uint32(i))
						if err := w.Add(k, value, false); err != nil {
							b.Fatal(err)
						}
					}
					if err := w.Finish(); err != nil {
						b.Fatal(err)
					}
					if err := e.ClearRuns(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
