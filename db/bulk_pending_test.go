package db

import (
	"errors"
	"sync/atomic"
	"testing"
)

var errIngestFails = errors.New("ingest fails (test)")

// failingIngest fails the next ingest once armed, as a full disk would
// after the round's record was written.
type failingIngest struct {
	Engine
	armed atomic.Bool
}

func (e *failingIngest) IngestRun(cf CF, name string) (bool, error) {
	if e.armed.CompareAndSwap(true, false) {
		return false, errIngestFails
	}
	return e.Engine.IngestRun(cf, name)
}

// pendingAfterFailedIngest connects blocks 0..19 one by one, then 20..29
// in one bulk round whose record is written but whose ingest fails: the
// round is pending, and the stored tip still says 19.
func pendingAfterFailedIngest(t *testing.T, chain *synthChain) *UtxoIndex {
	t.Helper()
	eng := &failingIngest{}
	x := indexOver(t, func(e Engine) Engine { eng.Engine = e; return eng })
	connectAll(t, x, chain.blocks[:20])
	l, err := x.NewBulkLoader(BulkOptions{RoundBytes: 1 << 30, CacheBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range chain.blocks[20:30] {
		if err := l.ConnectBlock(b); err != nil {
			t.Fatal(err)
		}
	}
	eng.armed.Store(true)
	if _, err := l.Finish(); !errors.Is(err, errIngestFails) {
		t.Fatalf("the round ended with %v, want the injected ingest failure", err)
	}
	if !x.db.pendingRound.Load() {
		t.Fatal("no round pending after a failed ingest")
	}
	if tip, _, _ := ReadTip(x.db); tip.Height != 19 {
		t.Fatalf("tip %d before the pending round is finished, want 19", tip.Height)
	}
	return x
}

func wantTip(t *testing.T, x *UtxoIndex, h uint32) {
	t.Helper()
	if tip, ok, err := ReadTip(x.db); err != nil || !ok || tip.Height != h {
		t.Fatalf("tip %d (ok %v, err %v), want %d", tip.Height, ok, err, h)
	}
}

// A per-block write after a bulk round whose ingest failed (the syncer's
// next step when the gap is below its bulk threshold) first finishes the
// round, before it reads the tip: a block computed against the old tip
// must not land over the round's rows.
func TestPerBlockWriteAfterPendingRound(t *testing.T) {
	chain := newSynthChain(21)
	for range 40 {
		chain.next("")
	}
	ref := func(n int) *UtxoIndex {
		r := newTestIndex(t, openTestDB(t), 7, filterVariants[1].p)
		connectAll(t, r, chain.blocks[:n])
		return r
	}
	t.Run("connect", func(t *testing.T) {
		x := pendingAfterFailedIngest(t, chain)
		// The stored tip says 19, so the syncer offers block 20.
		if err := x.ConnectBlock(chain.blocks[20]); !errors.Is(err, ErrNotNextBlock) {
			t.Fatalf("connecting block 20 over the pending round 20..29: %v, want ErrNotNextBlock", err)
		}
		wantTip(t, x, 29)
		assertIdentical(t, x.db, ref(30).db)
		connectAll(t, x, chain.blocks[30:])
		assertIdentical(t, x.db, ref(40).db)
	})
	t.Run("disconnect", func(t *testing.T) {
		x := pendingAfterFailedIngest(t, chain)
		if tip, ok, err := x.DisconnectTip(chain.refill); err != nil || !ok || tip.Height != 28 {
			t.Fatalf("disconnect over the pending round: tip %d ok %v err %v, want 28", tip.Height, ok, err)
		}
		wantTip(t, x, 28)
		assertIdentical(t, x.db, ref(29).db)
	})
}
