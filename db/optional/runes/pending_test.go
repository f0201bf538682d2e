package runes

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/tools/optindex"
)

var errIngest = errors.New("ingest fails (test)")

// failingIngest fails the next ingest once armed, as a full disk would
// after a bulk round's record was written.
type failingIngest struct {
	db.Engine
	armed atomic.Bool
}

func (e *failingIngest) IngestRun(cf db.CF, name string) (bool, error) {
	if e.armed.CompareAndSwap(true, false) {
		return false, errIngest
	}
	return e.Engine.IngestRun(cf, name)
}

// A per-block connect after a bulk round whose ingest failed (rounds of
// runes rows the overlay still holds) finishes the round first: the block
// the stored tip invites is refused as not next, the runes read the
// round's rows, and a later reorg is exact.
func TestConnectAfterPendingRound(t *testing.T) {
	g, f, _ := scenario()
	eng := &failingIngest{}
	x, _ := newIndexOver(t, func(e db.Engine) db.Engine { eng.Engine = e; return eng })
	d := x.DB()
	connectAll(t, x, g.blocks[:6])
	l, err := x.NewBulkLoader(db.BulkOptions{RoundBytes: 1 << 30, CacheBytes: 1 << 20, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range g.blocks[6:] {
		if err := l.ConnectBlock(b); err != nil {
			t.Fatal(err)
		}
	}
	eng.armed.Store(true)
	if _, err := l.Finish(); !errors.Is(err, errIngest) {
		t.Fatalf("the round ended with %v, want the injected failure", err)
	}
	if tip, _, _ := db.ReadTip(d); tip.Height != 5 {
		t.Fatalf("tip %d with the round 6..9 pending, want 5", tip.Height)
	}
	if err := x.ConnectBlock(g.blocks[6]); !errors.Is(err, db.ErrNotNextBlock) {
		t.Fatalf("connecting block 6 over the pending round: %v, want ErrNotNextBlock", err)
	}
	checkLedger(t, x, g)
	want := newIndex(t)
	connectAll(t, want, g.blocks)
	optindex.RequireIdentical(t, x, want)

	for range 2 {
		if _, _, err := x.DisconnectTip(nil); err != nil {
			t.Fatal(err)
		}
	}
	connectAll(t, x, f.blocks[8:])
	checkLedger(t, x, f)
	fresh := newIndex(t)
	connectAll(t, fresh, f.blocks)
	optindex.RequireIdentical(t, x, fresh)
}
