package db

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

func bulkConnect(t *testing.T, x *UtxoIndex, blocks []*bchain.Block, opts BulkOptions) BulkStats {
	t.Helper()
	l, err := x.NewBulkLoader(opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks {
		if err := l.ConnectBlock(b); err != nil {
			t.Fatalf("bulk connect %d: %v", b.Height, err)
		}
	}
	st, err := l.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// A bulk session leaves an index that reads exactly as connecting the same
// blocks one by one does, whatever the round size and the rollback window, and
// mixes with per-block connects before and after.
func TestBulkEqualsPerBlock(t *testing.T) {
	chain := newSynthChain(5)
	for i := 0; i < 80; i++ {
		chain.next("")
	}
	for _, fv := range filterVariants {
		keeps := []int{7}
		if fv.p.Scripts == FilterScriptsTaprootNoOrdinals {
			keeps = []int{1, 7, 300} // the production selection gets every window
		}
		for _, keep := range keeps {
			ref := newTestIndex(t, openTestDB(t), keep, fv.p)
			connectAll(t, ref, chain.blocks)
			for _, c := range []struct {
				name       string
				roundBytes int64
				cacheBytes int64
			}{
				{"round per block", 1, 1},
				{"small rounds, tiny cache", 8 << 10, 1},
				{"one round", 1 << 30, 1 << 30},
			} {
				t.Run(fmt.Sprintf("%s/keep=%d/%s", fv.name, keep, c.name), func(t *testing.T) {
					testBulkEqualsPerBlock(t, chain, ref, keep, fv.p, BulkOptions{RoundBytes: c.roundBytes, CacheBytes: c.cacheBytes})
				})
			}
		}
	}
}

func testBulkEqualsPerBlock(t *testing.T, chain *synthChain, ref *UtxoIndex, keep int, f FilterParams, opts BulkOptions) {
	x := newTestIndex(t, openTestDB(t), keep, f)
	st := bulkConnect(t, x, chain.blocks, opts)
	if st.Blocks != 80 || st.Rounds < 1 {
		t.Fatalf("stats %+v", st)
	}
	if n := countRows(t, x.db, CFBlockFilter); f.Enabled() != (n > 0) {
		t.Fatalf("%d filter rows with filters enabled=%v", n, f.Enabled())
	}
	assertIdentical(t, x.db, ref.db)

	mixed := newTestIndex(t, openTestDB(t), keep, f)
	connectAll(t, mixed, chain.blocks[:20])
	bulkConnect(t, mixed, chain.blocks[20:55], opts)
	connectAll(t, mixed, chain.blocks[55:])
	assertIdentical(t, mixed.db, ref.db)
	// And disconnecting after a bulk load is exact too.
	for i := 0; i < min(keep, 15); i++ {
		if _, _, err := mixed.DisconnectTip(chain.refill); err != nil {
			t.Fatal(err)
		}
	}
	short := newTestIndex(t, openTestDB(t), keep, f)
	connectAll(t, short, chain.blocks[:80-min(keep, 15)])
	assertIdentical(t, mixed.db, short.db)
}

func FuzzUnpackBulkRound(f *testing.F) {
	f.Add(packBulkRound(&BulkRound{From: 1, To: 9, TipHash: bchain.Hash{3}, Files: []BulkFile{{CF: CFHeight, Name: "1-9-height.sst"}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := unpackBulkRound(b)
		checkCanonical(t, b, err, func() []byte { return packBulkRound(v) })
	})
}

// indexOver opens a test index whose engine is wrap(the test engine).
func indexOver(t *testing.T, wrap func(Engine) Engine) *UtxoIndex {
	t.Helper()
	d := openTestDB(t)
	d.eng = wrap(d.eng)
	return newTestIndex(t, d, 7, filterVariants[1].p)
}

// tuningRecorder records which families' compaction is deferred, which
// compress their last level for a load and which get small blocks.
type tuningRecorder struct {
	Engine
	mu       sync.Mutex
	deferred map[CF]bool
	load     map[CF]bool
	small    map[CF]bool
}

func (r *tuningRecorder) TuneForLoad(cf CF, t LoadTuning) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deferred[cf], r.load[cf], r.small[cf] = t.DeferCompaction, t.Compression, t.SmallBlocks
	return r.Engine.TuneForLoad(cf, t)
}

// now returns the families deferred, those with load compression and those
// with small blocks.
func (r *tuningRecorder) now() (deferred, load, small []CF) {
	r.mu.Lock()
	defer r.mu.Unlock()
	on := func(m map[CF]bool) []CF {
		var out []CF
		for cf, on := range m {
			if on {
				out = append(out, cf)
			}
		}
		slices.Sort(out)
		return out
	}
	return on(r.deferred), on(r.load), on(r.small)
}

// A bulk session defers the compaction of the families it only writes and
// compresses every family's last level for the load while its rounds are
// ingested, gives txAddresses small blocks from the second round on (the
// first round's runs may be the lasting files), and restores all three
// when it finishes.
func TestBulkTunesTheIndexForTheLoad(t *testing.T) {
	chain := newSynthChain(3)
	for range 20 {
		chain.next("")
	}
	rec := &tuningRecorder{deferred: map[CF]bool{}, load: map[CF]bool{}, small: map[CF]bool{}}
	x := indexOver(t, func(e Engine) Engine { rec.Engine = e; return rec })
	// An enabled optional index's families are deferred with the core's,
	// unless the index reads them while connecting.
	if on, err := x.EnableAddressPrefix(true, testNamer{}); err != nil || !on {
		t.Fatalf("enable: %v %v", on, err)
	}
	if on, err := x.EnableOptional(ownRowsOptional{}, true); err != nil || !on {
		t.Fatalf("enable: %v %v", on, err)
	}
	wantDeferred := []CF{CFAddresses, CFAddressBalance, CFAddressUtxos, CFSpends, CFBlockTxs, CFBlockFilter, CFAddressPrefix}
	wantLoad := slices.Sorted(slices.Values(x.db.cfs))
	wantSmall := []CF{CFTxAddresses}
	type tuning struct{ deferred, load, small []CF }
	var during []tuning
	l, err := x.NewBulkLoader(BulkOptions{RoundBytes: 1, CacheBytes: 1, OnCommit: func(Tip) {
		deferred, load, small := rec.now()
		during = append(during, tuning{deferred, load, small})
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range chain.blocks {
		if err := l.ConnectBlock(b); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Finish(); err != nil {
		t.Fatal(err)
	}
	if len(during) != len(chain.blocks) {
		t.Fatalf("%d rounds committed, want one per block (%d)", len(during), len(chain.blocks))
	}
	for i, got := range during {
		if !slices.Equal(got.deferred, wantDeferred) {
			t.Fatalf("round %d ingested with %v deferred, want %v", i, got.deferred, wantDeferred)
		}
		if !slices.Equal(got.load, wantLoad) {
			t.Fatalf("round %d ingested with load compression for %v, want %v", i, got.load, wantLoad)
		}
		want := wantSmall
		if i == 0 {
			want = nil
		}
		if !slices.Equal(got.small, want) {
			t.Fatalf("round %d ingested with small blocks for %v, want %v", i, got.small, want)
		}
	}
	if deferred, load, small := rec.now(); len(deferred)+len(load)+len(small) != 0 {
		t.Fatalf("still tuned for the load after Finish: deferred %v, load compression %v, small blocks %v", deferred, load, small)
	}
}

// ownRowsOptional is testOptional saying that it reads its own rows
// (pushdata) while connecting.
type ownRowsOptional struct{ testOptional }

func (ownRowsOptional) ReadsOwnRows() bool { return true }

// readRecorder counts the reads of many keys, by family and by whether
// they may fill the block cache (memdb has neither MultiGet nor a cache:
// both read key by key).
type readRecorder struct {
	Engine
	mu               sync.Mutex
	cached, uncached map[CF]int
}

func (r *readRecorder) count(m map[CF]int, cf CF, keys [][]byte) ([][]byte, error) {
	r.mu.Lock()
	m[cf] += len(keys)
	r.mu.Unlock()
	return engineGetMany(r.Engine, cf, keys, false)
}

func (r *readRecorder) GetMany(cf CF, keys [][]byte) ([][]byte, error) {
	return r.count(r.cached, cf, keys)
}

func (r *readRecorder) GetManyUncached(cf CF, keys [][]byte) ([][]byte, error) {
	return r.count(r.uncached, cf, keys)
}

// A bulk load reads the prevouts its UTXO cache lacks without filling the
// block cache, reads no balance (the changes of those its balance cache
// lacks are merge operands), and makes no other reads of many keys.
func TestBulkReadsLeaveTheBlockCacheAlone(t *testing.T) {
	chain := newSynthChain(5)
	for range 40 {
		chain.next("")
	}
	rec := &readRecorder{cached: map[CF]int{}, uncached: map[CF]int{}}
	x := indexOver(t, func(e Engine) Engine { rec.Engine = e; return rec })
	// Half the chain block by block, then the rest in a session of one
	// block a round and caches of one byte: its prevouts from before it
	// or from an earlier round are read from the index, and the balances
	// stored before it are unknown to it.
	half := len(chain.blocks) / 2
	for _, b := range chain.blocks[:half] {
		if err := x.ConnectBlock(b); err != nil {
			t.Fatal(err)
		}
	}
	clear(rec.cached) // the per-block connects' own prevout reads
	clear(rec.uncached)
	st := bulkConnect(t, x, chain.blocks[half:], BulkOptions{RoundBytes: 1, CacheBytes: 1})
	if rec.uncached[CFTxAddresses] == 0 || len(rec.uncached) != 1 {
		t.Fatalf("uncached reads %v: want prevouts (txAddresses) only", rec.uncached)
	}
	if len(rec.cached) != 0 {
		t.Fatalf("reads that fill the cache: %v", rec.cached)
	}
	if st.BalanceMerged == 0 {
		t.Fatalf("no balance merged: %+v", st)
	}
}

// A session whose only round is flushed by Finish is not tuned for a load
// (its runs are written as they stay, and it is not compacted after); one
// whose first round was flushed for want of memory is, and is compacted
// after even if no block followed, since its runs were written for that
// compaction to rewrite (LoadTuning.Compression).
func TestBulkOneRoundSessionIsNotTuned(t *testing.T) {
	chain := newSynthChain(4)
	for range 6 {
		chain.next("")
	}
	for _, c := range []struct {
		name       string
		blocks     int
		roundBytes int64
		tuned      bool
	}{
		{"one round at Finish", 6, 64 << 20, false},
		{"one round for want of memory", 1, 1, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := &tuningRecorder{deferred: map[CF]bool{}, load: map[CF]bool{}, small: map[CF]bool{}}
			x := indexOver(t, func(e Engine) Engine { rec.Engine = e; return rec })
			var load []CF
			st := bulkConnect(t, x, chain.blocks[:c.blocks], BulkOptions{RoundBytes: c.roundBytes, CacheBytes: 1 << 20,
				OnCommit: func(Tip) { _, load, _ = rec.now() }})
			if st.Rounds != 1 {
				t.Fatalf("%d rounds, want 1", st.Rounds)
			}
			if st.Tuned != c.tuned || st.CompactAfter() != c.tuned || (len(load) > 0) != c.tuned {
				t.Fatalf("tuned %v, compact after %v, load compression during the round for %v; want tuned %v",
					st.Tuned, st.CompactAfter(), load, c.tuned)
			}
		})
	}
}
