package syncer_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/syncer"
)

// failingBlocks is a fakeNode whose blocks can be made unavailable.
type failingBlocks struct {
	*fakeNode
	fail atomic.Bool
}

func (n *failingBlocks) Block(ctx context.Context, hash bchain.Hash, h uint32) (*bchain.Block, error) {
	if n.fail.Load() {
		return nil, bchain.ErrNodeUnavailable
	}
	return n.fakeNode.Block(ctx, hash, h)
}

// ReachedTip latches the first time the index reaches the node's tip:
// InSync is cleared again as soon as the node is ahead (on a fast chain
// within milliseconds), but what waits for the initial sync (the
// Ethereum mempool follower) must not wait again.
func TestReachedTipLatches(t *testing.T) {
	chain := chainBlocks(20, time.Now().Add(-time.Hour), 0)
	x := &fakeIndex{blocks: append([]*bchain.Block(nil), chain[:5]...), window: 10}
	node := &failingBlocks{fakeNode: &fakeNode{chain: chain, height: 10}}
	s := syncer.New(node, x, syncer.Config{}, quiet, nil)
	if st := s.State(); st.ReachedTip {
		t.Fatalf("ReachedTip before any sync: %+v", st)
	}
	if err := s.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := s.State(); !st.InSync || !st.ReachedTip {
		t.Fatalf("at the node's tip: %+v", st)
	}
	node.mu.Lock()
	node.height = 15
	node.mu.Unlock()
	node.fail.Store(true)
	if err := s.Sync(context.Background()); err == nil {
		t.Fatal("a sync whose blocks cannot be read succeeded")
	}
	if st := s.State(); st.InSync || !st.ReachedTip {
		t.Fatalf("behind the node after reaching its tip once: %+v (want InSync false, ReachedTip true)", st)
	}
}
