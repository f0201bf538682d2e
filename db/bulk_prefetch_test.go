package db

import (
	"testing"
)

// An output the UTXO cache held when the block spending it was held, and
// lost before that block was indexed (an ingested round's generation is
// evicted meanwhile), is read then: what hold reads ahead only saves reads.
func TestBulkReadsWhatTheCacheLostAfterHold(t *testing.T) {
	chain := newSynthChain(11)
	for i := 0; i < 60; i++ {
		chain.next("")
	}
	f := filterVariants[1].p
	ref := newTestIndex(t, openTestDB(t), 7, f)
	connectAll(t, ref, chain.blocks)

	x := newTestIndex(t, openTestDB(t), 7, f)
	l, err := x.NewBulkLoader(BulkOptions{RoundBytes: 1 << 30, CacheBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range chain.blocks[:30] {
		if err := l.ConnectBlock(b); err != nil {
			t.Fatal(err)
		}
	}
	// Commit the first 30 blocks; the large cache keeps their outputs.
	if err := l.indexHeld(); err != nil {
		t.Fatal(err)
	}
	if err := l.startFlush(); err != nil {
		t.Fatal(err)
	}
	if err := l.waitFlush(); err != nil {
		t.Fatal(err)
	}
	lost := 0
	for _, b := range chain.blocks[30:] {
		if err := l.ConnectBlock(b); err != nil { // holds b: checks the cache now
			t.Fatal(err)
		}
		// The ingested generation loses what b spends before b is indexed.
		for i := range b.Txs {
			for _, in := range b.Txs[i].Vin {
				op := outpoint{in.PrevTxid, in.PrevVout}
				for _, g := range l.cache.gens[:l.cache.committed] {
					if _, ok := g.m[op]; ok {
						delete(g.m, op)
						lost++
					}
				}
			}
		}
	}
	st, err := l.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if lost == 0 {
		t.Fatal("no block spent a cached output of the first round: the test checks nothing")
	}
	if st.ReadAhead != 0 {
		t.Fatalf("%d inputs read ahead, want none (every output was cached when held)", st.ReadAhead)
	}
	assertIdentical(t, x.db, ref.db)
}
