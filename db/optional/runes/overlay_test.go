package runes

import (
	"fmt"
	"math/rand/v2"
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
	// The loader asked on every block with the round's first height: one
	// walk of the ops, then the running total.
	if idx.ov.walks != 1 {
		t.Fatalf("%d walks of the overlay for a round of %d blocks, want 1", idx.ov.walks, len(g.blocks))
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

// The running total of pendingBytes equals a walk of the ops through any
// sequence of connects, disconnects, settles and changes of from.
func TestOverlayPendingBytesRunningTotal(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 46))
	var o overlay
	walk := func(from uint32) int64 {
		var n int64
		for _, op := range o.ops {
			if op.height >= from {
				n += op.bytes
			}
		}
		return n
	}
	tip, hasTip, h := uint32(0), false, uint32(0)
	for step := range 5000 {
		switch r := rng.IntN(10); {
		case r < 6: // connect a block with a few rows
			h++
			o.settle(tip, hasTip, h, true)
			op := o.begin(h, true)
			for i := range 1 + rng.IntN(4) {
				o.set(op, []byte(fmt.Sprintf("k%d-%d", h, i)), make([]byte, rng.IntN(40)))
			}
		case r < 7 && h > 0: // disconnect the last block
			o.settle(tip, hasTip, h, false)
			op := o.begin(h, false)
			o.set(op, []byte(fmt.Sprintf("k%d-0", h)), nil)
			h--
		case r < 9: // the database catches up
			tip, hasTip = h-uint32(rng.IntN(3)), true
			if tip > h {
				tip = h
			}
		}
		from := h - uint32(rng.IntN(8))
		if from > h {
			from = 0
		}
		if rng.IntN(4) == 0 {
			from = uint32(rng.IntN(int(h) + 2))
		}
		if got, want := o.pendingBytes(from), walk(from); got != want {
			t.Fatalf("step %d: pendingBytes(%d) = %d, a walk gives %d", step, from, got, want)
		}
	}
}
