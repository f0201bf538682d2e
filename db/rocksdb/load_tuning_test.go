package rocksdb

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/linxGnu/grocksdb"

	"github.com/openexplorer/blockbook/db"
)

// A deferred family keeps its level-0 files past the usual trigger, and
// restoring the trigger sets off the compaction that merges them.
func TestDeferredCompactionKeepsLevel0UntilRestored(t *testing.T) {
	e := openTestEngine(t, t.TempDir())
	cf := db.CFSpends
	if err := e.TuneForLoad(cf, db.LoadTuning{DeferCompaction: true}); err != nil {
		t.Fatal(err)
	}
	// The first run lands in the empty family's last level; each later one
	// overlaps it and goes to level 0.
	const overlapping = level0CompactionTrigger + 4
	for i := range overlapping + 1 {
		ingestRun(t, e, cf, fmt.Sprintf("run%d.sst", i), 100, func(k int) ([]byte, []byte) {
			return fmt.Appendf(nil, "key%04d", k*(i+1)), fmt.Appendf(nil, "v%d", i)
		})
	}
	waitCompactionIdle(t, e, cf)
	if n, _ := e.Level0Files(cf); n != overlapping {
		t.Fatalf("%d level-0 files while deferred, want all %d runs", n, overlapping)
	}
	if err := e.TuneForLoad(cf, db.LoadTuning{DeferCompaction: false}); err != nil {
		t.Fatal(err)
	}
	waitCompactionIdle(t, e, cf)
	if n, _ := e.Level0Files(cf); n >= level0CompactionTrigger {
		t.Fatalf("%d level-0 files after the trigger was restored", n)
	}
	if v, err := e.Get(cf, []byte("key0000")); err != nil || string(v) != fmt.Sprintf("v%d", overlapping) {
		t.Fatalf("newest value after the compaction: %q %v", v, err)
	}
	b := e.NewBatch()
	b.Put(cf, []byte("after"), []byte("x"))
	if err := e.Write(b, true); err != nil {
		t.Fatalf("a write with %d level-0 files: %v", overlapping, err)
	}
	b.Destroy()
}

// RocksDB also starts a level-0 compaction when level 0 holds more than
// max_bytes_for_level_base; a deferred family is kept from that too. The
// test lowers that size so that a few small runs pass it: first to show
// that they are compacted when nothing is deferred, then that deferring
// keeps them.
func TestDeferredCompactionIgnoresLevel0Size(t *testing.T) {
	e := openTestEngine(t, t.TempDir())
	cf := db.CFSpends
	h := e.handle(cf)
	smallBase := func() {
		t.Helper()
		if err := e.rdb.SetOptionsCF(h, []string{"max_bytes_for_level_base"}, []string{"65536"}); err != nil {
			t.Fatal(err)
		}
	}
	// Runs of 40 kB of random values each: three of them pass 64 KiB in
	// fewer files than the trigger's count.
	const runs = 3
	next := 0
	ingest := func() {
		t.Helper()
		for range runs {
			ingestRun(t, e, cf, fmt.Sprintf("run%d.sst", next), 200, func(k int) ([]byte, []byte) {
				v := make([]byte, 200)
				_, _ = rand.Read(v)
				return fmt.Appendf(nil, "key%04d", k), v
			})
			next++
		}
		waitCompactionIdle(t, e, cf)
	}
	smallBase()
	ingest()
	if n, _ := e.Level0Files(cf); n >= runs-1 {
		t.Fatalf("%d level-0 files past the level-0 size: the premise (RocksDB compacts them) does not hold", n)
	}
	smallBase()
	if err := e.TuneForLoad(cf, db.LoadTuning{DeferCompaction: true}); err != nil {
		t.Fatal(err)
	}
	ingest()
	if n, _ := e.Level0Files(cf); n != runs {
		t.Fatalf("%d level-0 files while deferred, want all %d runs", n, runs)
	}
}

// ingestRun stages a run of n rows, row(0) to row(n-1) in ascending key
// order, and ingests it into cf.
func ingestRun(t *testing.T, e *engine, cf db.CF, name string, n int, row func(i int) (key, value []byte)) {
	t.Helper()
	w, err := e.NewRun(cf, name)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		k, v := row(i)
		if err := w.Add(k, v, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	if ok, err := e.IngestRun(cf, name); err != nil || !ok {
		t.Fatalf("ingest %s: %v %v", name, ok, err)
	}
}

// waitCompactionIdle waits until cf has no compaction pending or running.
func waitCompactionIdle(t *testing.T, e *engine, cf db.CF) {
	t.Helper()
	h := e.handle(cf)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if e.rdb.GetPropertyCF("rocksdb.compaction-pending", h) == "0" && e.rdb.GetPropertyCF("rocksdb.num-running-compactions", h) == "0" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("compaction still pending after a minute")
		}
	}
}

// While a bulk load runs, a compaction writes a family's last level with
// LZ4; once the load is over, the next Compact rewrites those files with
// zstd, even when nothing above the last level overlaps them.
func TestLoadCompressionLastsUntilTheNextCompact(t *testing.T) {
	dir := t.TempDir()
	e := openTestEngine(t, dir)
	cf := db.CFTxAddresses
	lastLevel := func() []string {
		t.Helper()
		var kinds []string
		for _, f := range e.rdb.GetLiveFilesMetaData() {
			if f.ColumnFamilyName != cf.String() {
				continue
			}
			if f.Level != 6 {
				t.Fatalf("%s at level %d after a full compaction", f.Name, f.Level)
			}
			data, err := os.ReadFile(filepath.Join(dir, f.Name))
			if err != nil {
				t.Fatal(err)
			}
			kinds = append(kinds, runCompression(data))
		}
		if len(kinds) == 0 {
			t.Fatal("no files in the family")
		}
		return kinds
	}
	if err := e.TuneForLoad(cf, db.LoadTuning{Compression: true}); err != nil {
		t.Fatal(err)
	}
	writeFlushedFiles(t, e, cf, 5000, func(k int) []byte { return bytes.Repeat(fmt.Appendf(nil, "descriptor %d;", k%97), 4) })
	// A compaction while loading (not Compact, which ends the load's
	// files) writes the last level with LZ4.
	e.rdb.CompactRangeCF(e.handle(cf), grocksdb.Range{})
	for _, c := range lastLevel() {
		if c != "LZ4" {
			t.Fatalf("a compaction during the load wrote %s files: %v", c, lastLevel())
		}
	}
	if err := e.TuneForLoad(cf, db.LoadTuning{Compression: false}); err != nil {
		t.Fatal(err)
	}
	if err := e.Compact(cf); err != nil {
		t.Fatal(err)
	}
	for _, c := range lastLevel() {
		if c != "ZSTD" {
			t.Fatalf("after the load's Compact the last level holds %s files: %v", c, lastLevel())
		}
	}
	if v, err := e.Get(cf, []byte("00000000-2")); err != nil || !bytes.HasPrefix(v, []byte("descriptor 0;")) {
		t.Fatalf("a row after the recompression: %q %v", v, err)
	}
}

// While a bulk load runs, txAddresses' new files get small blocks, which
// its random reads copy whole; once the load is over, the next Compact
// rewrites every file with the usual blocks, which queries read. A family
// whose blocks are small anyway is left alone.
func TestLoadSmallBlocksLastUntilTheNextCompact(t *testing.T) {
	e := openTestEngine(t, t.TempDir())
	cf := db.CFTxAddresses
	// bytesPerBlock is the family's uncompressed row bytes per data block.
	bytesPerBlock := func() int {
		t.Helper()
		props := e.rdb.GetPropertyCF("rocksdb.aggregated-table-properties", e.handle(cf))
		var blocks, keys, values int
		for _, f := range strings.Split(props, ";") {
			name, v, ok := strings.Cut(strings.TrimSpace(f), "=")
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if !ok || err != nil {
				continue
			}
			switch strings.TrimSpace(name) {
			case "# data blocks":
				blocks = n
			case "raw key size":
				keys = n
			case "raw value size":
				values = n
			}
		}
		if blocks == 0 || keys+values == 0 {
			t.Fatalf("no data blocks in the table properties %q", props)
		}
		return (keys + values) / blocks
	}
	if err := e.TuneForLoad(cf, db.LoadTuning{SmallBlocks: true}); err != nil {
		t.Fatal(err)
	}
	if err := e.TuneForLoad(db.CFAddresses, db.LoadTuning{SmallBlocks: true}); err != nil {
		t.Fatalf("a family with small blocks already: %v", err)
	}
	writeFlushedFiles(t, e, cf, 4000, func(int) []byte {
		v := make([]byte, 60)
		_, _ = rand.Read(v)
		return v
	})
	// A compaction while loading (not Compact, which ends the load's files).
	e.rdb.CompactRangeCF(e.handle(cf), grocksdb.Range{})
	if n := bytesPerBlock(); n > smallBlockBytes+smallBlockBytes/2 {
		t.Fatalf("%d bytes per block written during the load, want about %d", n, smallBlockBytes)
	}
	if err := e.TuneForLoad(cf, db.LoadTuning{SmallBlocks: false}); err != nil {
		t.Fatal(err)
	}
	if err := e.Compact(cf); err != nil {
		t.Fatal(err)
	}
	if n, usual := bytesPerBlock(), blockBytes(cf.Storage()); n < usual*3/4 {
		t.Fatalf("%d bytes per block after the load's Compact, want about %d", n, usual)
	}
	if v, err := e.Get(cf, []byte("00000000-2")); err != nil || len(v) != 60 {
		t.Fatalf("a row after the rewrite: %q %v", v, err)
	}
}

// writeFlushedFiles writes three overlapping table files into cf, each of
// the keys "k-i" for k < rows in a shuffled order, with value(k).
func writeFlushedFiles(t *testing.T, e *engine, cf db.CF, rows int, value func(k int) []byte) {
	t.Helper()
	for i := range 3 {
		b := e.NewBatch()
		for k := range rows {
			b.Put(cf, fmt.Appendf(nil, "%08d-%d", k*7919%rows, i), value(k))
		}
		if err := e.Write(b, true); err != nil {
			t.Fatal(err)
		}
		b.Destroy()
		fo := grocksdb.NewDefaultFlushOptions()
		fo.SetWait(true)
		err := e.rdb.FlushCF(e.handle(cf), fo)
		fo.Destroy()
		if err != nil {
			t.Fatal(err)
		}
	}
}
