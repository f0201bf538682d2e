package syncer_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/syncer"
)

// A node whose active chain is a prefix of the index's: the index rolls
// back to the node's tip when the node is current (its tip is recent, the
// index's last blocks were invalidated), and waits, unchanged, when the
// node is catching up (an old tip) or is further behind than the rollback
// window.

// chainBlocks makes n linked blocks, block h stamped start + h minutes.
func chainBlocks(n int, start time.Time, salt byte) []*bchain.Block {
	out := make([]*bchain.Block, n)
	for h := range n {
		b := &bchain.Block{}
		b.Height = uint32(h)
		b.Hash = bchain.Hash{byte(h), byte(h >> 8), salt, 1}
		if h > 0 {
			b.Prev = out[h-1].Hash
		}
		b.Time = start.Add(time.Duration(h) * time.Minute).Unix()
		out[h] = b
	}
	return out
}

// fakeNode serves the first `height+1` blocks of chain.
type fakeNode struct {
	mu     sync.Mutex
	chain  []*bchain.Block
	height uint32
}

func (n *fakeNode) BestBlock(context.Context) (uint32, bchain.Hash, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.height, n.chain[n.height].Hash, nil
}

func (n *fakeNode) BlockHash(_ context.Context, h uint32) (bchain.Hash, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if h > n.height {
		return bchain.Hash{}, bchain.ErrBlockNotFound
	}
	return n.chain[h].Hash, nil
}

func (n *fakeNode) Block(_ context.Context, hash bchain.Hash, h uint32) (*bchain.Block, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if int(h) >= len(n.chain) || n.chain[h].Hash != hash {
		return nil, bchain.ErrBlockNotFound
	}
	return n.chain[h], nil
}

// fakeIndex holds connected blocks in a slice.
type fakeIndex struct {
	blocks []*bchain.Block
	window uint32
}

func (x *fakeIndex) Tip() (db.Tip, bool, error) {
	if len(x.blocks) == 0 {
		return db.Tip{}, false, nil
	}
	b := x.blocks[len(x.blocks)-1]
	return db.Tip{Height: b.Height, Hash: b.Hash}, true, nil
}

func (x *fakeIndex) BlockHash(h uint32) (bchain.Hash, bool, error) {
	if int(h) >= len(x.blocks) {
		return bchain.Hash{}, false, nil
	}
	return x.blocks[h].Hash, true, nil
}

func (x *fakeIndex) ConnectBlock(b *bchain.Block) error {
	if int(b.Height) != len(x.blocks) || (b.Height > 0 && b.Prev != x.blocks[b.Height-1].Hash) {
		return db.ErrNotNextBlock
	}
	x.blocks = append(x.blocks, b)
	return nil
}

func (x *fakeIndex) DisconnectTip(db.RefillFunc) (db.Tip, bool, error) {
	x.blocks = x.blocks[:len(x.blocks)-1]
	tip, ok, err := x.Tip()
	return tip, ok, err
}

func (x *fakeIndex) Window() uint32 { return x.window }

func (x *fakeIndex) BlockTime(h uint32) (int64, error) {
	if int(h) >= len(x.blocks) {
		return 0, errors.New("no such block")
	}
	return x.blocks[h].Time, nil
}

func TestNodePrefixOfIndex(t *testing.T) {
	for _, c := range []struct {
		name       string
		start      time.Time
		window     uint32
		nodeHeight uint32 // the index holds blocks 0..19
		rollback   bool
	}{
		{"current node, invalidated tip", time.Now().Add(-30 * time.Minute), 10, 18, true},
		{"current node, depth equal to the window", time.Now().Add(-30 * time.Minute), 5, 14, true},
		{"deeper than the window", time.Now().Add(-30 * time.Minute), 5, 13, false},
		{"node with an old tip", time.Now().Add(-48 * time.Hour), 10, 18, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			chain := chainBlocks(20, c.start, 0)
			x := &fakeIndex{blocks: append([]*bchain.Block(nil), chain...), window: c.window}
			node := &fakeNode{chain: chain, height: c.nodeHeight}
			s := syncer.New(node, x, syncer.Config{}, quiet, nil)
			var events []syncer.BlockEvent
			s.OnBlock(func(ev syncer.BlockEvent) { events = append(events, ev) })
			err := s.Sync(context.Background())
			tip, _, _ := x.Tip()
			if !c.rollback {
				if !errors.Is(err, bchain.ErrNodeUnavailable) || tip.Height != 19 || len(events) != 0 {
					t.Fatalf("waiting for the node: err %v, tip %d, %d events", err, tip.Height, len(events))
				}
				return
			}
			if err != nil || tip.Height != c.nodeHeight || tip.Hash != chain[c.nodeHeight].Hash {
				t.Fatalf("rolling back: err %v, tip %d", err, tip.Height)
			}
			if n := 19 - int(c.nodeHeight); len(events) != n || !events[n-1].Disconnected {
				t.Fatalf("%d block events %+v, want %d disconnections", len(events), events, n)
			}
			if st := s.State(); !st.InSync || st.BestHeight != c.nodeHeight {
				t.Fatalf("state after the rollback: %+v", st)
			}
		})
	}
}
