package syncer_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/rocksdb"
	"github.com/openexplorer/blockbook/syncer"
)

// plainNode hides the backend's BlockRange: blocks one by one.
type plainNode struct{ syncer.Node }

// faultyNode answers BlockRange from the backend, but fails every third
// batched fetch (as a batch that timed out), and every fetch of a block
// at or above brokenFrom, when set (a node that is down from there on).
type faultyNode struct {
	syncer.Node
	rs         syncer.RangeSource
	calls      atomic.Int32
	brokenFrom atomic.Uint32 // 0: not broken
}

var errBatchTimeout = fmt.Errorf("%w: batch: context deadline exceeded", bchain.ErrNodeUnavailable)

func (n *faultyNode) broken(h uint32) bool {
	b := n.brokenFrom.Load()
	return b != 0 && h >= b
}

func (n *faultyNode) BlockRange(ctx context.Context, from, to uint32) ([]*bchain.Block, error) {
	if n.calls.Add(1)%3 == 0 || n.broken(to) {
		return nil, errBatchTimeout
	}
	return n.rs.BlockRange(ctx, from, to)
}

func (n *faultyNode) Block(ctx context.Context, hash bchain.Hash, h uint32) (*bchain.Block, error) {
	if n.broken(h) {
		return nil, errBatchTimeout
	}
	return n.Node.Block(ctx, hash, h)
}

func (st *ethStack) openIndex(t *testing.T) (*db.DB, *db.EthIndex) {
	t.Helper()
	d, err := rocksdb.Open(db.Options{Path: t.TempDir(), ChainType: bchain.ChainEthereumType, Coin: "Ethereum Regtest", Network: "regtest", Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d, db.NewEthIndex(d, 300, st.backend.Eth.ContractInfo)
}

// syncWith syncs x; bulk > 0 connects the catch-up in groups.
func syncWith(node syncer.Node, x *db.EthIndex, workers int, bulk uint32) error {
	// A small budget makes runs short, so a sync takes many of them.
	s := syncer.New(node, x, syncer.Config{Workers: workers, MemoryBudget: 64 << 10, BulkThreshold: bulk}, quiet, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return s.Sync(ctx)
}

func sameIndex(t *testing.T, what string, a, b *db.DB) {
	t.Helper()
	diffs, err := db.Diff(a, b, db.ColumnFamilies(bchain.ChainEthereumType), 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, df := range diffs {
		t.Errorf("%s: %s", what, df)
	}
}

// TestEthRangeSyncIdenticalToBlockByBlock: a catch-up by batched runs,
// connected one by one or in groups (with batches failing on the way, and
// the node going down mid-sync), writes exactly the index a block-by-block
// sync writes.
func TestEthRangeSyncIdenticalToBlockByBlock(t *testing.T) {
	st, _ := startEthStack(t)
	for range 40 { // far enough behind for the parallel catch-up
		if _, err := st.dev.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	ref, refX := st.openIndex(t)
	if err := syncWith(plainNode{st.backend.Chain}, refX, 1, 0); err != nil {
		t.Fatal(err)
	}
	rs, ok := st.backend.Chain.(syncer.RangeSource)
	if !ok {
		t.Fatal("the Ethereum backend fetches no block ranges")
	}
	d, x := st.openIndex(t)
	if err := syncWith(st.backend.Chain, x, 2, 0); err != nil {
		t.Fatal(err)
	}
	sameIndex(t, "batched runs", d, ref)
	dg, xg := st.openIndex(t)
	if err := syncWith(st.backend.Chain, xg, 2, 1); err != nil {
		t.Fatal(err)
	}
	sameIndex(t, "batched runs in groups", dg, ref)

	// In groups, every third batch fails (retried block by block); then
	// the node is down above height 20: the sync stops with whole blocks
	// only (the groups before the failure written), and a later sync ends
	// identical.
	node := &faultyNode{Node: st.backend.Chain, rs: rs}
	node.brokenFrom.Store(20)
	d2, x2 := st.openIndex(t)
	if err := syncWith(node, x2, 2, 1); err == nil {
		t.Fatal("sync through a node that is down succeeded")
	}
	tip, ok, err := x2.Tip()
	if err != nil || !ok || tip.Height >= 20 {
		t.Fatalf("index tip %d (%v, %v) after the node went down at 20", tip.Height, ok, err)
	}
	node.brokenFrom.Store(0)
	if err := syncWith(node, x2, 2, 1); err != nil {
		t.Fatal(err)
	}
	if node.calls.Load() < 3 {
		t.Errorf("only %d batched fetches: the failing ones were not exercised", node.calls.Load())
	}
	sameIndex(t, "failing batches", d2, ref)
}
