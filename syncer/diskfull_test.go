package syncer

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// chainNode serves a fixed chain of empty blocks.
type chainNode struct{ hashes []bchain.Hash }

func (n *chainNode) BestBlock(context.Context) (uint32, bchain.Hash, error) {
	return uint32(len(n.hashes) - 1), n.hashes[len(n.hashes)-1], nil
}

func (n *chainNode) BlockHash(_ context.Context, h uint32) (bchain.Hash, error) {
	if int(h) >= len(n.hashes) {
		return bchain.Hash{}, bchain.ErrBlockNotFound
	}
	return n.hashes[h], nil
}

func (n *chainNode) Block(_ context.Context, hash bchain.Hash, h uint32) (*bchain.Block, error) {
	b := &bchain.Block{}
	b.Height, b.Hash = h, hash
	if h > 0 {
		b.Prev = n.hashes[h-1]
	}
	return b, nil
}

// fullIndex is an index whose writes fail with the full-disk error while
// full is set, as db's free-space check makes them.
type fullIndex struct {
	mu     sync.Mutex
	hashes []bchain.Hash
	full   *atomic.Bool
}

func (x *fullIndex) Tip() (db.Tip, bool, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.hashes) == 0 {
		return db.Tip{}, false, nil
	}
	return db.Tip{Height: uint32(len(x.hashes) - 1), Hash: x.hashes[len(x.hashes)-1]}, true, nil
}

func (x *fullIndex) BlockHash(h uint32) (bchain.Hash, bool, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if int(h) >= len(x.hashes) {
		return bchain.Hash{}, false, nil
	}
	return x.hashes[h], true, nil
}

func (x *fullIndex) ConnectBlock(b *bchain.Block) error {
	if x.full.Load() {
		return fmt.Errorf("db: %w: the datadir /data has 1.0 MiB free", db.ErrDiskFull)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if int(b.Height) != len(x.hashes) {
		return db.ErrNotNextBlock
	}
	x.hashes = append(x.hashes, b.Hash)
	return nil
}

func (x *fullIndex) DisconnectTip(db.RefillFunc) (db.Tip, bool, error) {
	return db.Tip{}, false, fmt.Errorf("not used")
}
func (x *fullIndex) Window() uint32                  { return 10 }
func (x *fullIndex) BlockTime(uint32) (int64, error) { return 0, nil }

// A full disk pauses sync with the error in the status (not a fatal stop),
// also before any block is due (CheckSpace), and sync resumes by itself
// once there is space.
func TestDiskFullPausesAndResumes(t *testing.T) {
	node := &chainNode{}
	for i := range 20 {
		node.hashes = append(node.hashes, bchain.Hash{byte(i + 1)})
	}
	var full atomic.Bool
	full.Store(true)
	x := &fullIndex{full: &full}
	s := New(node, x, Config{PollInterval: 10 * time.Millisecond, CheckSpace: func() error {
		if full.Load() {
			return fmt.Errorf("db: %w: below the reserve", db.ErrDiskFull)
		}
		return nil
	}}, slog.New(slog.DiscardHandler), nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, nil) }()
	waitState(t, s, func(st State) bool { return strings.Contains(st.Err, "no space left on device") })
	time.Sleep(1500 * time.Millisecond) // a retry or two
	if st := s.State(); st.HasTip || !strings.Contains(st.Err, "no space left on device") {
		t.Fatalf("wrote while full or lost the reason: %+v", st)
	}
	full.Store(false)
	waitState(t, s, func(st State) bool { return st.InSync && st.BestHeight == 19 && st.Err == "" })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func waitState(t *testing.T, s *Syncer, ok func(State) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok(s.State()) {
		if time.Now().After(deadline) {
			t.Fatalf("state never reached: %+v", s.State())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
