package rocksdb

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linxGnu/grocksdb"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// The WAL, where the rows written since the last memtable flush stay
// until the next one (or a clean close, which flushes every family), is
// compressed: the same blocks leave at most 3/4 of the WAL bytes an open
// without WAL compression leaves (each block's small write is compressed
// alone: 0.63 here, 0.26 for ethbench's grouped writes), a read-only open
// beside the primary replays it to the same rows, and after the clean
// close the rows are in table files alone.
func TestWALCompressed(t *testing.T) {
	blocks := testChain(30)
	want := memIndex(t, blocks)
	wal := func(compress bool) int64 {
		o := testOptions(t.TempDir())
		opts := newOptions(&o)
		if !compress {
			opts.db.SetWALCompression(grocksdb.NoCompression)
		}
		e, err := open(opts, o.Path, db.ColumnFamilies(bchain.ChainBitcoinType), false)
		if err != nil {
			opts.destroy()
			t.Fatal(err)
		}
		d, err := db.OpenEngine(e, o)
		if err != nil {
			t.Fatal(err)
		}
		connect(t, index(t, d), blocks)
		n, sst := dirKinds(t, o.Path)
		if sst != 0 {
			t.Fatalf("%d table-file bytes: the rows are not all in the WAL, the comparison says nothing", sst)
		}
		ro := testOptions(o.Path)
		ro.ReadOnly = true
		r, err := Open(ro) // replays the WAL
		if err != nil {
			t.Fatal(err)
		}
		assertIdentical(t, "read from the WAL", r, want)
		r.Close()
		d.Close()
		// The WAL left is the new, empty one (its compression record).
		if n, sst := dirKinds(t, o.Path); sst == 0 || n > 64 {
			t.Errorf("after a clean close: WAL %d bytes, table files %d; want table files and an empty WAL", n, sst)
		}
		return n
	}
	plain := wal(false)
	packed := wal(true)
	if plain == 0 || packed*4 > plain*3 {
		t.Errorf("WAL: %d bytes compressed, %d without; want at most 3/4", packed, plain)
	}
}

// dirKinds sums the bytes of a datadir's WAL files and table files.
func dirKinds(t *testing.T, dir string) (wal, sst int64) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		fi, err := os.Stat(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case strings.HasSuffix(e.Name(), ".log"):
			wal += fi.Size()
		case strings.HasSuffix(e.Name(), ".sst"):
			sst += fi.Size()
		}
	}
	return wal, sst
}
