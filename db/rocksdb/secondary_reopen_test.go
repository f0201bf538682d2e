package rocksdb

import (
	"os"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// A reopen of the idle instance that fails (its directory is a file)
// leaves the current instance serving its view; a later catch-up opens it
// again and reads the primary's rows.
func TestReplicaReopenFailureKeepsServing(t *testing.T) {
	dir := t.TempDir()
	blocks := testChain(30)
	p := openFlushPrimary(t, testOptions(dir))
	connect(t, p.x, blocks[:10])
	r := openFlushReplica(t, dir)
	catchUp(t, "first catch-up", p, r)
	idle := 1 - r.cur.Load()
	connect(t, p.x, blocks[10:20])
	p.flushEach(t) // the MANIFEST changes: the next update of idle is an open
	if err := os.RemoveAll(r.dirs[idle]); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.dirs[idle], nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.CatchUp(); err == nil {
		t.Fatal("a catch-up whose open cannot succeed returned no error")
	}
	if r.cur.Load() == idle {
		t.Fatal("the failed instance was made current")
	}
	tip, ok, err := db.EngineTip(r)
	if err != nil || !ok || tip.Height != 9 {
		t.Fatalf("after the failed catch-up the replica reads tip %d (%v, %v); want the previous view's 9", tip.Height, ok, err)
	}
	if err := os.Remove(r.dirs[idle]); err != nil {
		t.Fatal(err)
	}
	catchUp(t, "after the directory is back", p, r)
	connect(t, p.x, blocks[20:])
	catchUp(t, "after more blocks", p, r)
	catchUp(t, "again", p, r)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
}

// A rollback on the primary lowers the tip: the replica follows it (any
// check that an updated instance is not behind the current one must
// accept it).
func TestReplicaFollowsRollback(t *testing.T) {
	dir := t.TempDir()
	blocks := testChain(20)
	p := openFlushPrimary(t, testOptions(dir))
	connect(t, p.x, blocks)
	r := openFlushReplica(t, dir)
	catchUp(t, "at the tip", p, r)
	catchUp(t, "both instances at the tip", p, r)
	refill := func(h uint32, _ bchain.Hash) (*bchain.Block, error) { return blocks[h], nil }
	for range 3 {
		if _, _, err := p.x.DisconnectTip(refill); err != nil {
			t.Fatal(err)
		}
	}
	catchUp(t, "after the rollback", p, r)
	p.flushEach(t)
	catchUp(t, "after the rollback and a flush", p, r)
	if tip, ok, err := db.EngineTip(r); err != nil || !ok || tip.Height != 16 {
		t.Fatalf("the replica reads tip %d (%v, %v); want 16", tip.Height, ok, err)
	}
}
