package rocksdb

import (
	"bytes"
	"errors"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// A secondary instance sees the primary's blocks after each catch-up (WAL
// writes and bulk rounds alike), keeps a snapshot's view across a catch-up,
// follows a disconnect, refuses writes, and ends with the same rows as the
// primary.
func TestSecondaryFollowsPrimary(t *testing.T) {
	dir := t.TempDir()
	blocks := testChain(40)
	p, err := Open(testOptions(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	x := index(t, p)
	connect(t, x, blocks[:5])

	r, err := OpenSecondary(testOptions(dir), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tipOf := func() db.Tip {
		t.Helper()
		s, err := r.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Release()
		tip, _, err := db.ReadTip(s)
		if err != nil {
			t.Fatal(err)
		}
		return tip
	}
	if tip := tipOf(); tip.Height != 4 {
		t.Fatalf("replica tip %d at open, want 4", tip.Height)
	}
	connect(t, x, blocks[5:10])
	before, err := r.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.CatchUp(); err != nil {
		t.Fatal(err)
	}
	if tip := tipOf(); tip.Height != 9 || tip.Hash != blocks[9].Hash {
		t.Fatalf("replica tip %d after catch-up, want 9", tip.Height)
	}
	if tip, _, _ := db.ReadTip(before); tip.Height != 4 {
		t.Fatalf("a snapshot from before the catch-up moved to %d", tip.Height)
	}
	// Nothing new: the catch-up changes nothing. A new block: the next
	// catch-up would update the instance the old snapshot reads, so it is
	// postponed until the snapshot is released.
	if err := r.CatchUp(); err != nil {
		t.Fatal(err)
	}
	connect(t, x, blocks[10:11])
	if err := r.CatchUp(); !errors.Is(err, ErrCatchUpBusy) {
		t.Fatalf("catch-up with a query on the instance to update: %v, want ErrCatchUpBusy", err)
	}
	if tip, _, _ := db.ReadTip(before); tip.Height != 4 {
		t.Fatalf("the old snapshot moved to %d", tip.Height)
	}
	before.Release()
	if err := r.CatchUp(); err != nil {
		t.Fatal(err)
	}
	if tip := tipOf(); tip.Height != 10 {
		t.Fatalf("replica tip %d, want 10", tip.Height)
	}

	// A bulk round (ingested table files, no WAL) and a disconnect.
	l, err := x.NewBulkLoader(db.BulkOptions{RoundBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks[11:30] {
		if err := l.ConnectBlock(b); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Finish(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := x.DisconnectTip(func(h uint32, _ bchain.Hash) (*bchain.Block, error) { return blocks[h], nil }); err != nil {
		t.Fatal(err)
	}
	if err := r.CatchUp(); err != nil {
		t.Fatal(err)
	}
	if tip := tipOf(); tip.Height != 28 {
		t.Fatalf("replica tip %d after bulk and disconnect, want 28", tip.Height)
	}
	if err := r.WriteCachedTx(bchain.Hash{1}, []byte{1}); !errors.Is(err, db.ErrReadOnly) {
		t.Fatalf("a write on the replica: %v, want ErrReadOnly", err)
	}
	if !r.ReadOnly() {
		t.Fatal("replica does not report read-only")
	}
	if err := p.CatchUp(); err == nil {
		t.Fatal("catch-up on the primary succeeded")
	}
	if a, b := dump(t, p), dump(t, r); !bytes.Equal(a, b) {
		t.Fatalf("replica dump (%d bytes) differs from the primary's (%d bytes)", len(b), len(a))
	}
	// The removal log (left out of dumps) too: Mesh's block events are the
	// replica's as well.
	if rm, err := db.ReadRemovals(r); err != nil || len(rm) != 1 || rm[0] != (db.Removal{Height: 29, Hash: blocks[29].Hash}) {
		t.Fatalf("replica's removal log %v %v", rm, err)
	}
	// The primary goes away: the replica keeps answering.
	p.Close()
	if err := r.CatchUp(); err != nil {
		t.Fatalf("catch-up after the primary closed: %v", err)
	}
	if tip := tipOf(); tip.Height != 28 {
		t.Fatalf("replica tip %d after the primary closed, want 28", tip.Height)
	}
}

// A replica needs an existing index.
func TestSecondaryNeedsIndex(t *testing.T) {
	if _, err := OpenSecondary(testOptions(t.TempDir()), t.TempDir()); !errors.Is(err, db.ErrIncompatible) {
		t.Fatalf("open of an empty datadir: %v, want ErrIncompatible", err)
	}
}

func dump(t *testing.T, d *db.DB) []byte {
	t.Helper()
	s, err := d.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	var buf bytes.Buffer
	if err := db.Dump(s, db.ColumnFamilies(bchain.ChainBitcoinType), &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
