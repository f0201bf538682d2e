package syncer_test

// The sync worker asks the node for contract metadata in its fetch step,
// never while the index writes: a node that fails or hangs there leaves
// the index exactly at the tip before the block, sequential and parallel
// catch-up alike.

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/big"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/memdb"
	"github.com/openexplorer/blockbook/syncer"
)

// fakeEthNode serves a deterministic Ethereum-type chain up to height;
// every block moves tokens of a contract first seen in it, so each one
// needs metadata from the node. Block returns a new copy each time, as a
// node does.
type fakeEthNode struct{ height atomic.Uint32 }

func fakeEthHash(h uint32) bchain.Hash {
	return sha256.Sum256(fmt.Appendf(nil, "fake eth block %d", h))
}

func (n *fakeEthNode) BestBlock(context.Context) (uint32, bchain.Hash, error) {
	h := n.height.Load()
	return h, fakeEthHash(h), nil
}

func (n *fakeEthNode) BlockHash(_ context.Context, h uint32) (bchain.Hash, error) {
	if h > n.height.Load() {
		return bchain.Hash{}, bchain.ErrBlockNotFound
	}
	return fakeEthHash(h), nil
}

func (n *fakeEthNode) Block(_ context.Context, hash bchain.Hash, h uint32) (*bchain.Block, error) {
	if h > n.height.Load() || hash != fakeEthHash(h) {
		return nil, bchain.ErrBlockNotFound
	}
	blk := &bchain.Block{BlockHeader: bchain.BlockHeader{Height: h, Hash: hash, Time: 1700000000 + int64(h)*12, Size: 500}}
	if h > 0 {
		blk.Prev = fakeEthHash(h - 1)
	}
	from, to := bchain.EthAddress{0xa1, byte(h % 3)}, bchain.EthAddress{0xb2, byte(h % 5)}
	contract := bchain.EthAddress{0xc0, byte(h)}
	tx := bchain.EthTx{Hash: sha256.Sum256(fmt.Appendf(nil, "fake eth tx %d", h)), From: from, To: &contract, Value: new(big.Int),
		Receipt: &bchain.EthReceipt{Status: bchain.EthStatusSuccess},
		Transfers: []bchain.TokenTransfer{
			{Standard: bchain.TokenERC20, Contract: contract, From: from, To: to, Value: big.NewInt(int64(h) + 1)},
			{Standard: bchain.TokenERC20, Contract: bchain.EthAddress{0xc0, byte(h / 2)}, From: to, To: from, Value: big.NewInt(1)},
		}}
	blk.Eth = &bchain.EthBlock{Txs: []bchain.EthTx{tx}}
	return blk, nil
}

// metaKey marks the contexts of the test's sync passes: a metadata fetch
// whose context lacks it did not come from the worker's fetch step.
type metaKey struct{}

// nodeMeta answers, fails or hangs (until its context ends) for the
// contracts of blocks at and above failFrom.
type nodeMeta struct {
	t        *testing.T
	failFrom atomic.Uint32
	hang     atomic.Bool
	// inConnect is set while the index connects a block (sequential sync
	// only: in parallel catch-up the fetch step runs meanwhile, by design).
	inConnect atomic.Bool
}

var errNodeDown = errors.New("node down")

func (m *nodeMeta) source(ctx context.Context, c bchain.AddrDesc) (*bchain.EthContractInfo, error) {
	if ctx.Value(metaKey{}) == nil {
		m.t.Errorf("metadata of %x asked outside the sync worker's fetch step", []byte(c))
	}
	if m.inConnect.Load() {
		m.t.Errorf("metadata of %x asked while the index writes", []byte(c))
	}
	if uint32(c[1]) >= m.failFrom.Load() {
		if m.hang.Load() {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return nil, errNodeDown
	}
	return &bchain.EthContractInfo{Name: fmt.Sprintf("Token %d", c[1]), Symbol: "T", Decimals: 6}, nil
}

// watchedIndex flags its connects for nodeMeta.
type watchedIndex struct {
	*db.EthIndex
	m     *nodeMeta
	watch bool
}

func (w *watchedIndex) ConnectBlock(blk *bchain.Block) error {
	if w.watch {
		w.m.inConnect.Store(true)
		defer w.m.inConnect.Store(false)
	}
	return w.EthIndex.ConnectBlock(blk)
}

func openFakeEthIndex(t *testing.T, src db.ContractSource) (*db.DB, *db.EthIndex) {
	t.Helper()
	d, err := memdb.Open(db.Options{Path: t.TempDir(), ChainType: bchain.ChainEthereumType, Coin: "Test", Network: "test", Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d, db.NewEthIndex(d, 300, src)
}

// syncFresh is an index synced with a healthy node to height.
func syncFresh(t *testing.T, height uint32) *db.DB {
	t.Helper()
	m := &nodeMeta{t: t}
	m.failFrom.Store(^uint32(0))
	d, x := openFakeEthIndex(t, m.source)
	node := &fakeEthNode{}
	node.height.Store(height)
	ctx := context.WithValue(context.Background(), metaKey{}, true)
	if err := syncer.New(node, x, syncer.Config{}, quiet, nil).Sync(ctx); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestEthSyncNodeFailureDuringPrepareLeavesTip(t *testing.T) {
	for _, workers := range []int{1, 3} {
		for _, hang := range []bool{false, true} {
			t.Run(fmt.Sprintf("workers=%d/hang=%v", workers, hang), func(t *testing.T) {
				testPrepareFailure(t, workers, hang)
			})
		}
	}
}

func testPrepareFailure(t *testing.T, workers int, hang bool) {
	const (
		start    = 4  // synced before the node fails
		failFrom = 9  // the first block whose metadata fetch fails or hangs
		nodeTip  = 14 // where the node is meanwhile
	)
	m := &nodeMeta{t: t}
	m.failFrom.Store(^uint32(0))
	d, x := openFakeEthIndex(t, m.source)
	idx := &watchedIndex{EthIndex: x, m: m, watch: workers == 1}
	node := &fakeEthNode{}
	node.height.Store(start)
	s := syncer.New(node, idx, syncer.Config{Workers: workers, ParallelThreshold: 2}, quiet, nil)
	base := context.WithValue(context.Background(), metaKey{}, true)
	if err := s.Sync(base); err != nil {
		t.Fatal(err)
	}

	node.height.Store(nodeTip)
	m.failFrom.Store(failFrom)
	m.hang.Store(hang)
	ctx, cancel := context.WithTimeout(base, 2*time.Second)
	err := s.Sync(ctx)
	cancel()
	want := errNodeDown
	if hang {
		want = context.DeadlineExceeded
	}
	if !errors.Is(err, want) {
		t.Fatalf("sync with the node failing: %v, want %v", err, want)
	}
	tip, ok, err := x.Tip()
	if err != nil || !ok || tip.Height != failFrom-1 || tip.Hash != fakeEthHash(failFrom-1) {
		t.Fatalf("tip %d %s (%v, %v), want block %d", tip.Height, tip.Hash, ok, err, failFrom-1)
	}
	if diffs, err := db.Diff(d, syncFresh(t, failFrom-1), db.ColumnFamilies(bchain.ChainEthereumType), 10); err != nil || len(diffs) > 0 {
		t.Fatalf("index after the failure differs from a sync to %d: %v %v", failFrom-1, diffs, err)
	}

	m.failFrom.Store(^uint32(0))
	if err := s.Sync(base); err != nil {
		t.Fatalf("sync once the node answers: %v", err)
	}
	if diffs, err := db.Diff(d, syncFresh(t, nodeTip), db.ColumnFamilies(bchain.ChainEthereumType), 10); err != nil || len(diffs) > 0 {
		t.Fatalf("index after recovery differs from a fresh sync: %v %v", diffs, err)
	}
}
