package db

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
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

// indexedChain indexes a synthetic chain of n blocks (keeping undo data
// for keep).
func indexedChain(t *testing.T, seed int64, n, keep int) (*synthChain, *UtxoIndex) {
	t.Helper()
	chain := newSynthChain(seed)
	for range n {
		chain.next("")
	}
	x := newTestIndex(t, openTestDB(t), keep, FilterParams{})
	connectAll(t, x, chain.blocks)
	return chain, x
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
// cacheAtTip indexes a synthetic chain of 30 blocks and binds a txid cache
// at its tip, which reads blocks 20..29 through it (rows1).
type cacheAtTip struct {
	chain *synthChain
	x     *UtxoIndex
	c     *TxidCache
	s1    *Snapshot
	t1    Tip
	b1    *BoundTxids
	rows1 []AddrTxsAt
}

func newCacheAtTip(t *testing.T, seed int64) *cacheAtTip {
	f := &cacheAtTip{c: NewTxidCache(1 << 20)}
	f.chain, f.x = indexedChain(t, seed, 30, 10)
	f.s1, f.t1 = snapshotAt(t, f.x.db)
	f.b1 = f.c.Bind(f.s1, f.t1, true)
	f.rows1 = blockPositions(f.chain.blocks, 20, 29)
	checkTxids(t, "first read", f.s1, f.rows1, f.b1, f.chain.blocks)
	return f
}

func TestTxidCacheFollowsReorgs(t *testing.T) {
	f := newCacheAtTip(t, 3)
	chain, x, c, s1, t1, b1, rows1 := f.chain, f.x, f.c, f.s1, f.t1, f.b1, f.rows1
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
	chain, x := indexedChain(t, 5, 60, 10)
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

// A rollback to a lower tip (blocks disconnected, the chain regrown on
// another branch but still lower than before) empties the cache and
// anchors it at the newer, lower tip: it answers there at once, never
// with a disconnected block's txids, while a reader bound before the
// rollback and a snapshot older than it read the index.
func TestTxidCacheAfterRollback(t *testing.T) {
	f := newCacheAtTip(t, 7)
	chain, x, c, s1, t1, b1, rows1 := f.chain, f.x, f.c, f.s1, f.t1, f.b1, f.rows1

	for range 6 { // down to 23
		if _, _, err := x.DisconnectTip(chain.refill); err != nil {
			t.Fatal(err)
		}
	}
	s2, t2 := snapshotAt(t, x.db)
	b2 := c.Bind(s2, t2, true)
	if b2 == nil {
		t.Fatal("a snapshot after a rollback to a lower tip does not use the cache")
	}
	if st := c.Stats(); st.Resets != 1 || st.Rows != 0 {
		t.Fatalf("after the rollback: %+v", st)
	}
	checkTxids(t, "at the lower tip", s2, blockPositions(chain.blocks, 18, 23), b2, chain.blocks)
	checkTxids(t, "at the lower tip again", s2, blockPositions(chain.blocks, 18, 23), b2, chain.blocks)
	if st := c.Stats(); st.Hits != 6 || st.Rows != 6 {
		t.Fatalf("at the lower tip, the cache is not used: %+v", st)
	}
	// the reader bound before it fills nothing (its rows 24..29 are gone)
	checkTxids(t, "the reader bound before", s1, rows1, b1, chain.blocks)
	if c.Bind(s1, t1, true) != nil {
		t.Error("a snapshot older than the rollback was given the cache")
	}

	// regrown on another branch, lower than before: the new blocks'
	// positions resolve to the new txids, the older ones from the cache
	fork := chain.fork(23, 77)
	for range 3 { // 24..26
		if err := x.ConnectBlock(fork.next("b")); err != nil {
			t.Fatal(err)
		}
	}
	s3, t3 := snapshotAt(t, x.db)
	before := c.Stats()
	b3 := c.Bind(s3, t3, true)
	if b3 == nil {
		t.Fatal("a tip regrown lower than before does not use the cache")
	}
	for range 2 {
		checkTxids(t, "the regrown branch", s3, blockPositions(fork.blocks, 18, 26), b3, fork.blocks)
	}
	if st := c.Stats(); st.Resets != 1 || st.Hits-before.Hits != 6+9 || st.Misses-before.Misses != 3 {
		t.Fatalf("on the regrown branch (before %+v): %+v", before, st)
	}
	for h := 24; h <= 26; h++ {
		if fork.blocks[h].Txs[0].Txid == chain.blocks[h].Txs[0].Txid {
			t.Fatalf("block %d is the same on both branches: the test proves nothing", h)
		}
	}
}

// yieldingSnapshots is an engine whose snapshotter yields once it has its
// snapshot: where a snapshotter may be paused (its thread preempted, or
// waiting for a P after the cgo call), made likely.
type yieldingSnapshots struct{ Engine }

func (e yieldingSnapshots) Snapshot() (EngineSnapshot, error) {
	s, err := e.Engine.Snapshot()
	runtime.Gosched()
	return s, err
}

// Snapshots taken while writes land are numbered in the order of what
// they see: a larger Seq never sees a lower tip, nor a lower value of any
// writer's counter (the views' order that the txid cache and the API's
// pending-runes cache rely on). Many snapshotters race many writers, each
// snapshotter yielding between its snapshot and its number: were the
// number taken apart from the snapshot (outside DB.snapMu), others would
// take snapshots and numbers meanwhile, pairing an older state with a
// newer number.
func TestSnapshotSeqOrdersTips(t *testing.T) {
	chain := newSynthChain(9)
	for range 60 {
		chain.next("")
	}
	x := newTestIndex(t, openTestDB(t), 10, FilterParams{})
	d := x.db
	d.eng = yieldingSnapshots{d.eng}
	connectAll(t, x, chain.blocks[:1])
	// Each snapshotter takes perEach snapshots, about perBlock at each tip.
	const writers, snapshotters, perEach, perBlock = 4, 8, 300, 40
	counterKey := func(w int) []byte { return []byte(fmt.Sprintf("test-seq-counter-%d", w)) }
	type seen struct {
		seq    uint64
		height uint32
		counts [writers]uint32
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range writers { // each writes 1, 2, 3, ... to its own row
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := uint32(1); ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				b := d.NewBatch()
				b.put(CFDefault, counterKey(w), binary.BigEndian.AppendUint32(nil, n))
				err := d.writeUncounted(b)
				b.Destroy()
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	var taken atomic.Int64
	results := make(chan []seen, snapshotters)
	for range snapshotters {
		go func() {
			var out []seen
			defer func() { results <- out }()
			for range perEach {
				s, err := d.Snapshot()
				if err != nil {
					t.Error(err)
					return
				}
				e := seen{seq: s.Seq()}
				tip, _, err := ReadTip(s)
				e.height = tip.Height
				for w := 0; w < writers && err == nil; w++ {
					var v []byte
					if v, err = s.get(CFDefault, counterKey(w)); len(v) == 4 {
						e.counts[w] = binary.BigEndian.Uint32(v)
					}
				}
				s.Release()
				if err != nil {
					t.Error(err)
					return
				}
				out = append(out, e)
				taken.Add(1)
			}
		}()
	}
	for _, b := range chain.blocks[1:] { // the tip moves while the counters do
		for n := taken.Load(); taken.Load() < n+perBlock && taken.Load() < snapshotters*perEach && !t.Failed(); {
			runtime.Gosched()
		}
		connectAll(t, x, []*bchain.Block{b})
	}
	var all []seen
	for range snapshotters {
		all = append(all, <-results...)
	}
	close(stop)
	wg.Wait()
	slices.SortFunc(all, func(a, b seen) int { return cmp.Compare(a.seq, b.seq) })
	for i := 1; i < len(all); i++ {
		p, c := all[i-1], all[i]
		if c.seq == p.seq {
			t.Fatalf("two snapshots numbered %d", c.seq)
		}
		if c.height < p.height {
			t.Fatalf("snapshot %d sees tip %d, the earlier %d sees %d", c.seq, c.height, p.seq, p.height)
		}
		for w := range writers {
			if c.counts[w] < p.counts[w] {
				t.Fatalf("snapshot %d sees writer %d's counter at %d, the earlier %d at %d", c.seq, w, c.counts[w], p.seq, p.counts[w])
			}
		}
	}
	first, last := all[0], all[len(all)-1]
	if len(all) < snapshotters*perEach || first.height == last.height || first.counts[0] == last.counts[0] {
		t.Fatalf("%d snapshots from %+v to %+v: the test proves little", len(all), first, last)
	}
	t.Logf("%d snapshots, tips %d to %d, writer 0's counter %d to %d", len(all), first.height, last.height, first.counts[0], last.counts[0])
}

// HoldsBlock answers for the snapshot's chain: a block on it is held, a
// block a reorg replaced is not (while an older snapshot still holds it),
// nor a height above the tip, whatever hash is asked.
func TestHoldsBlock(t *testing.T) {
	chain, x := indexedChain(t, 11, 30, 10)
	s1, _ := snapshotAt(t, x.db)
	for _, h := range []uint32{0, 24, 27, 29} {
		if !HoldsBlock(s1, h, chain.blocks[h].Hash) {
			t.Errorf("block %d on the chain not held", h)
		}
	}
	if HoldsBlock(s1, 27, chain.blocks[26].Hash) {
		t.Error("block 26's hash held at height 27")
	}

	fork := chain.fork(24, 99) // blocks 25..29 replaced by 25..30
	for range 5 {
		if _, _, err := x.DisconnectTip(chain.refill); err != nil {
			t.Fatal(err)
		}
	}
	s2, _ := snapshotAt(t, x.db)
	if HoldsBlock(s2, 27, chain.blocks[27].Hash) {
		t.Error("a disconnected block, above the tip, is held")
	}
	for range 6 {
		if err := x.ConnectBlock(fork.next("b")); err != nil {
			t.Fatal(err)
		}
	}
	s3, _ := snapshotAt(t, x.db)
	if !HoldsBlock(s3, 24, chain.blocks[24].Hash) || !HoldsBlock(s3, 27, fork.blocks[27].Hash) {
		t.Error("a block below the fork or on the new branch not held")
	}
	if HoldsBlock(s3, 27, chain.blocks[27].Hash) {
		t.Error("a block the reorg replaced is held")
	}
	if !HoldsBlock(s1, 27, chain.blocks[27].Hash) {
		t.Error("the older snapshot no longer holds its own chain's block")
	}
	if HoldsBlock(s3, 31, fork.blocks[30].Hash) || HoldsBlock(s3, 1000, bchain.Hash{}) {
		t.Error("a height above the tip is held")
	}
}
