package rocksdb

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/dbtest"
	"github.com/openexplorer/blockbook/internal/syncbuf"
)

func TestConformance(t *testing.T) {
	dbtest.Run(t, func(t *testing.T) db.Engine {
		e, err := openEngine(db.Options{Path: t.TempDir(), ChainType: bchain.ChainBitcoinType})
		if err != nil {
			t.Fatal(err)
		}
		return e
	})
}

// Compaction after a bulk load leaves no level-0 files and the same rows;
// Close cancels a running one.
func TestCompaction(t *testing.T) {
	blocks := testChain(30)
	var logs syncbuf.Buffer
	o := testOptions(t.TempDir())
	o.Log = slog.New(slog.NewTextHandler(&logs, nil))
	d, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	x := index(t, d)
	connect(t, x, blocks[:10])
	l, err := x.NewBulkLoader(db.BulkOptions{RoundBytes: 1}) // a round per block
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks[10:] {
		if err := l.ConnectBlock(b); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Finish(); err != nil {
		t.Fatal(err)
	}
	if d.Size() <= 0 {
		t.Errorf("size %d", d.Size())
	}
	d.CompactInBackground()
	d.Close() // cancels it, or waits for it

	d, err = Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	assertIdentical(t, "after a cancelled compaction", d, memIndex(t, blocks))
	const finished = "compaction after bulk load finished"
	before := strings.Count(logs.String(), finished) // the first may have finished
	d.CompactInBackground()
	deadline := time.Now().Add(time.Minute)
	for strings.Count(logs.String(), finished) == before {
		if time.Now().After(deadline) {
			t.Fatal("compaction did not finish")
		}
		time.Sleep(20 * time.Millisecond)
	}
	files := d.FilesAtLevel0()
	if len(files) != len(db.ColumnFamilies(bchain.ChainBitcoinType)) {
		t.Errorf("level-0 counts of %d families: %v", len(files), files)
	}
	for cf, n := range files {
		if n != 0 {
			t.Errorf("%s: %d files at level 0 after compaction", cf, n)
		}
	}
	assertIdentical(t, "after compaction", d, memIndex(t, blocks))
}
