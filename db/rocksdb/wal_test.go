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

// The WAL, where the rows of a short sync stay after a clean stop, is
// compressed: the same blocks leave at most 3/4 of the WAL bytes an open
// without WAL compression leaves (each block's small write is compressed
// alone: 0.63 here, 0.26 for ethbench's grouped writes), and the index
// reopens with the same rows.
func TestWALCompressed(t *testing.T) {
	blocks := testChain(30)
	wal := func(compress bool) (int64, string) {
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
		d.Close()
		n, sst := dirKinds(t, o.Path)
		if sst != 0 {
			t.Fatalf("%d table-file bytes: the rows are not all in the WAL, the comparison says nothing", sst)
		}
		return n, o.Path
	}
	plain, _ := wal(false)
	packed, path := wal(true)
	if plain == 0 || packed*4 > plain*3 {
		t.Errorf("WAL after a clean stop: %d bytes compressed, %d without; want at most 3/4", packed, plain)
	}
	ro := testOptions(path)
	ro.ReadOnly = true
	d, err := Open(ro)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	assertIdentical(t, "reopened from a compressed WAL", d, memIndex(t, blocks))
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
