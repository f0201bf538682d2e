package rocksdb

import (
	"encoding/binary"
	"testing"

	"github.com/openexplorer/blockbook/db"
)

// GetManyUncached reads the same values as GetMany but leaves the block
// cache as it found it; GetMany fills it with the data blocks it reads.
func TestGetManyUncachedLeavesTheCacheAlone(t *testing.T) {
	e := openTestEngine(t, t.TempDir())
	cf := db.CFTxAddresses
	const rows = 20_000
	key := func(i int) []byte { return binary.BigEndian.AppendUint64(nil, uint64(i)) }
	value := make([]byte, 200)
	ingestRun(t, e, cf, "run.sst", rows, func(i int) ([]byte, []byte) { return key(i), value })
	var keys [][]byte
	for i := 0; i < rows; i += 97 {
		keys = append(keys, key(i))
	}
	before := e.opts.cache.GetUsage()
	cold, err := e.GetManyUncached(cf, keys)
	if err != nil {
		t.Fatal(err)
	}
	if after := e.opts.cache.GetUsage(); after != before {
		t.Fatalf("uncached reads of %d blocks changed the cache's usage from %d to %d bytes", len(keys), before, after)
	}
	warm, err := e.GetMany(cf, keys)
	if err != nil {
		t.Fatal(err)
	}
	if grew := e.opts.cache.GetUsage() - before; grew < uint64(len(keys))*4<<10 {
		t.Fatalf("cached reads of %d blocks grew the cache by %d bytes only", len(keys), grew)
	}
	for i := range keys {
		if cold[i] == nil || string(cold[i]) != string(warm[i]) {
			t.Fatalf("key %d: uncached %x, cached %x", i, cold[i], warm[i])
		}
	}
}
