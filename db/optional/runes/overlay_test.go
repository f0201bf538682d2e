package runes

import (
	"testing"

	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/tools/optindex"
)

// The overlay holds the rows of blocks not yet in the database but no undo
// row, and reports its memory per block for the bulk round's budget.
func TestOverlayKeepsNoUndoAndCountsItsBytes(t *testing.T) {
	g, _, _ := scenario()
	x, idx := newIndexAndRunes(t)
	l, err := x.NewBulkLoader(db.BulkOptions{RoundBytes: 1 << 30, CacheBytes: 1 << 20, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range g.blocks {
		if err := l.ConnectBlock(b); err != nil {
			t.Fatal(err)
		}
	}
	// One round, not flushed yet: every block's rows are in the overlay.
	var rowBytes int64
	for _, op := range idx.ov.ops {
		for k, v := range op.rows {
			if k[0] == kindUndo {
				t.Fatalf("undo row of block %d in the overlay", op.height)
			}
			rowBytes += int64(len(k) + len(v))
		}
	}
	all, late, none := idx.PendingBytes(0), idx.PendingBytes(8), idx.PendingBytes(uint32(len(g.blocks)))
	if rowBytes == 0 || all < rowBytes || late <= 0 || late >= all || none != 0 {
		t.Fatalf("pending bytes from 0: %d (rows %d B), from 8: %d, above the last block: %d", all, rowBytes, late, none)
	}
	if _, err := l.Finish(); err != nil {
		t.Fatal(err)
	}
	// The disconnect reads the undo rows from the database.
	want := newIndex(t)
	connectAll(t, want, g.blocks[:8])
	for range 2 {
		if _, _, err := x.DisconnectTip(nil); err != nil {
			t.Fatal(err)
		}
	}
	optindex.RequireIdentical(t, x, want)
}
