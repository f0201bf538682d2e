package db

import (
	"fmt"
	"os"
	"path/filepath"
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

// A bulk session writes exactly the bytes that connecting the same blocks
// one by one writes, whatever the round size and the rollback window, and
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

// stageRound runs a bulk session over blocks but stops the last round's
// protocol after `ingests` ingests (and the BulkRound record), as if the
// process had died there. It returns the datadir (closed).
func stageRound(t *testing.T, blocks []*bchain.Block, pre int, ingests int, writeRecord bool) string {
	t.Helper()
	dir := t.TempDir()
	d, err := Open(Options{Path: dir, ChainType: bchain.ChainBitcoinType, Coin: "Test", Network: "test"})
	if err != nil {
		t.Fatal(err)
	}
	x := newTestIndex(t, d, 10, filterVariants[2].p)
	connectAll(t, x, blocks[:pre])
	l, err := x.NewBulkLoader(BulkOptions{RoundBytes: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks[pre:] {
		if err := l.ConnectBlock(b); err != nil {
			t.Fatal(err)
		}
	}
	r := l.round
	if err := r.finalRows(d, l.balances, l.committed.Height, l.hasCommitted); err != nil {
		t.Fatal(err)
	}
	files, err := r.writeFiles(d, 2)
	if err != nil {
		t.Fatal(err)
	}
	if writeRecord {
		br := &BulkRound{From: r.from, To: r.to, TipHash: r.toHash, Files: files}
		b := d.NewBatch()
		b.put(CFDefault, stateKeyBulk, packBulkRound(br))
		if err := d.syncedWrite(b); err != nil {
			t.Fatal(err)
		}
		b.Destroy()
		partial := *br
		partial.Files = files[:min(ingests, len(files))]
		if err := d.ingestStaged(&partial); err != nil {
			t.Fatal(err)
		}
	}
	d.Close()
	return dir
}

// A crash between any two steps of the ingest protocol is completed (or,
// before the BulkRound record, forgotten) when the index is reopened.
func TestBulkRecoversInterruptedRound(t *testing.T) {
	chain := newSynthChain(9)
	for i := 0; i < 50; i++ {
		chain.next("")
	}
	full := newTestIndex(t, openTestDB(t), 10, filterVariants[2].p)
	connectAll(t, full, chain.blocks)
	prefix := newTestIndex(t, openTestDB(t), 10, filterVariants[2].p)
	connectAll(t, prefix, chain.blocks[:30])

	for ingests := 0; ingests <= int(numCF); ingests++ {
		dir := stageRound(t, chain.blocks, 30, ingests, true)
		d, err := Open(Options{Path: dir, ChainType: bchain.ChainBitcoinType, Coin: "Test", Network: "test"})
		if err != nil {
			t.Fatalf("reopen after %d ingests: %v", ingests, err)
		}
		assertIdentical(t, d, full.db)
		if _, err := os.Stat(filepath.Join(dir, stagingDirName)); !os.IsNotExist(err) {
			t.Errorf("staging directory left after recovery: %v", err)
		}
		d.Close()
	}
	// Died while writing files, before the BulkRound record: the round is
	// lost, the index is at the previous tip and staging is cleaned.
	dir := stageRound(t, chain.blocks, 30, 0, false)
	d, err := Open(Options{Path: dir, ChainType: bchain.ChainBitcoinType, Coin: "Test", Network: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	assertIdentical(t, d, prefix.db)
	if _, err := os.Stat(filepath.Join(dir, stagingDirName)); !os.IsNotExist(err) {
		t.Errorf("staging garbage left: %v", err)
	}
}

func FuzzUnpackBulkRound(f *testing.F) {
	f.Add(packBulkRound(&BulkRound{From: 1, To: 9, TipHash: bchain.Hash{3}, Files: []BulkFile{{CF: CFHeight, Name: "1-9-height.sst"}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := unpackBulkRound(b)
		checkCanonical(t, b, err, func() []byte { return packBulkRound(v) })
	})
}
