package db

import (
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// blockPositions names every tx of blocks [from, to] by position, as
// address rows do.
func blockPositions(blocks []*bchain.Block, from, to int) []AddrTxsAt {
	var rows []AddrTxsAt
	for h := from; h <= to; h++ {
		row := AddrTxsAt{Height: uint32(h)}
		for i := len(blocks[h].Txs) - 1; i >= 0; i-- { // any order will do
			row.Txs = append(row.Txs, AddrTx{Index: uint32(i)})
		}
		rows = append(rows, row)
	}
	return rows
}

// checkTxids resolves rows on snap through cache and fails unless they
// are blocks' txids.
func checkTxids(t *testing.T, what string, snap *Snapshot, rows []AddrTxsAt, cache *BoundTxids, blocks []*bchain.Block) {
	snap.txids = cache
	t.Helper()
	for _, row := range rows {
		for i := range row.Txs {
			row.Txs[i].Txid = bchain.Hash{}
		}
	}
	if err := FillRowsTxids(snap, rows); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	for _, row := range rows {
		for _, tx := range row.Txs {
			if want := blocks[row.Height].Txs[tx.Index].Txid; tx.Txid != want {
				t.Fatalf("%s: tx %d of block %d is %s, want %s", what, tx.Index, row.Height, tx.Txid, want)
			}
		}
	}
}

func snapshotAt(t *testing.T, d *DB) (*Snapshot, Tip) {
	t.Helper()
	snap, err := d.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(snap.Release)
	tip, ok, err := ReadTip(snap)
	if err != nil || !ok {
		t.Fatalf("tip: %v %v", ok, err)
	}
	return snap, tip
}

// The txid cache answers as the index does: from its rows once it holds
// them, across a tip that extends its anchor, and after a reorg that
// replaced the blocks at heights it held (emptied, not trusted); a
// snapshot older than the anchor reads the index, and one bound before
// the anchor moved neither reads nor fills the cache.
func TestTxidCacheFollowsReorgs(t *testing.T) {
	chain := newSynthChain(3)
	for range 30 {
		chain.next("")
	}
	x := newTestIndex(t, openTestDB(t), 10, FilterParams{})
	connectAll(t, x, chain.blocks)
	c := NewTxidCache(1 << 20)

	s1, t1 := snapshotAt(t, x.db)
	b1 := c.Bind(s1, t1, true)
	rows1 := blockPositions(chain.blocks, 20, 29)
	checkTxids(t, "first read", s1, rows1, b1, chain.blocks)
	if st := c.Stats(); st.Hits != 0 || st.Misses != 10 || st.Rows != 10 {
		t.Fatalf("after the first read: %+v", st)
	}
	checkTxids(t, "from the cache", s1, rows1, b1, chain.blocks)
	if st := c.Stats(); st.Hits != 10 || st.Misses != 10 {
		t.Fatalf("after the second read: %+v", st)
	}

	// A reorg: blocks 25..29 replaced by a longer branch.
	fork := chain.fork(24, 99)
	for range 5 {
		if _, _, err := x.DisconnectTip(chain.refill); err != nil {
			t.Fatal(err)
		}
	}
	for range 6 {
		if err := x.ConnectBlock(fork.next("b")); err != nil {
			t.Fatal(err)
		}
	}
	s2, t2 := snapshotAt(t, x.db)
	b2 := c.Bind(s2, t2, true)
	if b2 == nil {
		t.Fatal("a tip on another branch may use the cache once emptied")
	}
	if st := c.Stats(); st.Resets != 1 || st.Rows != 0 || st.Bytes != 0 {
		t.Fatalf("after the reorg: %+v", st)
	}
	checkTxids(t, "the new branch", s2, blockPositions(fork.blocks, 20, 30), b2, fork.blocks)
	// The old snapshot still reads its own chain, without the cache.
	checkTxids(t, "the old snapshot", s1, rows1, b1, chain.blocks)
	if c.Bind(s1, t1, true) != nil {
		t.Error("a snapshot older than the anchor was given the cache")
	}
	checkTxids(t, "the new branch again", s2, blockPositions(fork.blocks, 20, 30), b2, fork.blocks)

	// A tip extending the anchor keeps the rows.
	if err := x.ConnectBlock(fork.next("b")); err != nil {
		t.Fatal(err)
	}
	s3, t3 := snapshotAt(t, x.db)
	before := c.Stats()
	b3 := c.Bind(s3, t3, true)
	checkTxids(t, "an extended tip", s3, blockPositions(fork.blocks, 20, 31), b3, fork.blocks)
	if st := c.Stats(); st.Resets != 1 || st.Hits-before.Hits != 11 || st.Misses-before.Misses != 1 {
		t.Fatalf("after extending the tip (before %+v): %+v", before, st)
	}
}

// The cache holds at most its bound, counted in the rows' bytes and a
// fixed cost per row, and keeps answering rightly when it drops rows.
func TestTxidCacheBound(t *testing.T) {
	chain := newSynthChain(5)
	for range 60 {
		chain.next("")
	}
	x := newTestIndex(t, openTestDB(t), 10, FilterParams{})
	connectAll(t, x, chain.blocks)
	const bound = 8 * (txidCacheEntryBytes + 32*4)
	c := NewTxidCache(bound)
	snap, tip := snapshotAt(t, x.db)
	b := c.Bind(snap, tip, true)
	for range 2 {
		for h := 0; h < 60; h += 5 {
			checkTxids(t, "a bounded cache", snap, blockPositions(chain.blocks, h, h+4), b, chain.blocks)
			checkTxids(t, "a bounded cache again", snap, blockPositions(chain.blocks, h, h+4), b, chain.blocks)
			if st := c.Stats(); st.Bytes > bound || st.MaxBytes != bound {
				t.Fatalf("%+v over the bound %d", st, bound)
			}
		}
	}
	if st := c.Stats(); st.Rows == 0 || st.Hits == 0 {
		t.Fatalf("a bounded cache kept nothing: %+v", st)
	}
	if NewTxidCache(0) != nil || NewTxidCache(0).Bind(snap, tip, true) != nil {
		t.Error("a cache of 0 bytes is no cache")
	}
}
