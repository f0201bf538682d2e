package db

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// ethGroupBlocks returns n synthetic blocks (fresh ones per call: a
// prepare attaches metadata to the blocks it sees).
func ethGroupBlocks(seed int64, n int) []*bchain.Block {
	s := newEthSynth(seed)
	for range n {
		s.next("")
	}
	return s.blocks
}

func sameEthRows(t *testing.T, what string, a, b *DB) {
	t.Helper()
	diffs, err := Diff(a, b, ColumnFamilies(bchain.ChainEthereumType), 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Errorf("%s: %s", what, d)
	}
}

// countingSource is testContractSource counting its calls.
func countingSource(n *atomic.Int32) ContractSource {
	return func(ctx context.Context, c bchain.AddrDesc) (*bchain.EthContractInfo, error) {
		n.Add(1)
		return testContractSource(ctx, c)
	}
}

// Blocks connected in groups of any size (the undo records of blocks in
// the same write deleted by a later one with a small window) write the
// rows a block-by-block connect writes, whether each block is prepared
// just before its connect (it meets the group's pending contract rows) or
// all are prepared first (the metadata of a contract is then asked once).
func TestEthGroupIdenticalToBlockByBlock(t *testing.T) {
	const n = 60
	for _, keep := range []int{3, 300} {
		ref := newEthTestIndex(t, keep, ethGroupBlocks(11, n))
		for _, size := range []int{1, 4, 17, n} {
			for _, prepareFirst := range []bool{false, true} {
				t.Run(fmt.Sprintf("keep=%d/group=%d/prepareFirst=%v", keep, size, prepareFirst), func(t *testing.T) {
					var calls atomic.Int32
					x := NewEthIndex(openEthTestDB(t), keep, countingSource(&calls))
					blocks := ethGroupBlocks(11, n)
					g, err := x.NewGroup()
					if err != nil {
						t.Fatal(err)
					}
					defer g.Close()
					prepare := func(b *bchain.Block) {
						if err := x.PrepareBlock(context.Background(), b); err != nil {
							t.Fatalf("prepare %d: %v", b.Height, err)
						}
					}
					if prepareFirst {
						for _, b := range blocks {
							prepare(b)
						}
					}
					for _, b := range blocks {
						if !prepareFirst {
							prepare(b)
						}
						if err := g.ConnectBlock(b); err != nil {
							t.Fatalf("connect %d: %v", b.Height, err)
						}
						if g.Blocks() >= size {
							if err := g.Flush(); err != nil {
								t.Fatal(err)
							}
						}
					}
					if err := g.Flush(); err != nil {
						t.Fatal(err)
					}
					sameEthRows(t, "grouped", x.db, ref.db)
					if prepareFirst {
						if want := distinctContracts(blocks); int(calls.Load()) != want {
							t.Errorf("%d metadata calls for %d contracts", calls.Load(), want)
						}
					}
				})
			}
		}
	}
}

// distinctContracts counts the contracts the blocks name.
func distinctContracts(blocks []*bchain.Block) int {
	seen := map[string]bool{}
	for _, b := range blocks {
		order, _ := contractEvents(b.Height, ethTxRecords(b.Eth))
		for _, k := range order {
			seen[k] = true
		}
	}
	return len(seen)
}

// A block that does not extend the group's tip leaves the group as it
// was; a block that fails half-way (not prepared) breaks it: nothing of
// the group since its last write is written, the index stays at that
// write, the held rows still equal the store, and a block-by-block
// connect from there ends identical to the reference.
func TestEthGroupFailureWritesNothing(t *testing.T) {
	const n = 40
	ref := newEthTestIndex(t, 300, ethGroupBlocks(5, n))
	x := NewEthIndex(openEthTestDB(t), 300, testContractSource)
	blocks := ethGroupBlocks(5, n)
	g, err := x.NewGroup()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks[:10] {
		if err := x.PrepareBlock(context.Background(), b); err != nil {
			t.Fatal(err)
		}
		if err := g.ConnectBlock(b); err != nil {
			t.Fatal(err)
		}
		if b.Height == 5 {
			if err := g.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := g.ConnectBlock(blocks[12]); !errors.Is(err, ErrNotNextBlock) {
		t.Fatalf("a block above the group's tip: %v", err)
	}
	if err := g.Flush(); err != nil {
		t.Fatalf("the group after a refused block: %v", err)
	}
	if tip, _, _ := x.Tip(); tip.Height != 9 {
		t.Fatalf("tip %d after the flush, want 9", tip.Height)
	}
	// Unprepared blocks: the first that meets a contract without a row
	// fails after some of its rows entered the batch.
	failed := -1
	for _, b := range blocks[10:] {
		if err := g.ConnectBlock(b); err != nil {
			if !errors.Is(err, ErrNotPrepared) {
				t.Fatalf("connect %d: %v", b.Height, err)
			}
			failed = int(b.Height)
			break
		}
	}
	if failed < 0 {
		t.Fatal("no block failed unprepared: the test chain meets no new contract")
	}
	if err := g.Flush(); !errors.Is(err, ErrNotPrepared) {
		t.Fatalf("flush of a broken group: %v", err)
	}
	g.Close()
	if tip, _, _ := x.Tip(); tip.Height != 9 {
		t.Fatalf("tip %d after a broken group, want 9 (block %d failed)", tip.Height, failed)
	}
	for _, b := range blocks[10:] {
		connectEth(t, x, b)
	}
	sameEthRows(t, "after a broken group", x.db, ref.db)
}
