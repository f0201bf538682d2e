package db

// The node is asked for contract metadata only in PrepareBlock, before any
// write: connect, disconnect and the amend of RetryTraces build their rows
// from the index alone, and a node that fails or hangs leaves the index
// exactly at its previous tip.

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/bchain"
)

// nodeMeta is a ContractSource whose behaviour a test switches: answer,
// fail, or hang until its context ends; and which fails the test when
// called while forbidden is set (a write is under way).
type nodeMeta struct {
	t         *testing.T
	mode      atomic.Int32 // metaOK, metaFail, metaHang
	forbidden atomic.Bool
	calls     atomic.Int32
	entered   chan struct{} // receives once per hanging call
}

const (
	metaOK int32 = iota
	metaFail
	metaHang
)

var errNodeDown = errors.New("node down")

func newNodeMeta(t *testing.T) *nodeMeta {
	return &nodeMeta{t: t, entered: make(chan struct{}, 16)}
}

func (m *nodeMeta) source(ctx context.Context, c bchain.AddrDesc) (*bchain.EthContractInfo, error) {
	m.calls.Add(1)
	if m.forbidden.Load() {
		m.t.Errorf("node asked for contract %x while the index writes", []byte(c))
	}
	switch m.mode.Load() {
	case metaFail:
		return nil, errNodeDown
	case metaHang:
		m.entered <- struct{}{}
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return testContractSource(ctx, c)
}

// writeOnly runs f, a write, with node calls forbidden.
func (m *nodeMeta) writeOnly(f func() error) error {
	m.forbidden.Store(true)
	defer m.forbidden.Store(false)
	return f()
}

// newContractAt returns the first height >= from whose block creates a
// contract (so that preparing it asks the node).
func newContractAt(t *testing.T, chain *ethSynth, from int) uint32 {
	t.Helper()
	for _, b := range chain.blocks[from:] {
		for _, tx := range b.Eth.Txs {
			if tx.Receipt != nil && tx.Receipt.ContractAddress != nil && tx.Receipt.Status != bchain.EthStatusFailure {
				return b.Height
			}
		}
	}
	t.Fatal("the synthetic chain creates no contract")
	return 0
}

func dumpIndex(t *testing.T, x *EthIndex) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Dump(x.db, ColumnFamilies(bchain.ChainEthereumType), &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func newEthSynthChain(seed int64, n int) *ethSynth {
	chain := newEthSynth(seed)
	for range n {
		chain.next("")
	}
	return chain
}

// Connect, disconnect and the amend write make no node call; preparing
// asks for each new contract once.
func TestEthWritesAskNodeNothing(t *testing.T) {
	chain := newEthSynthChain(21, 40)
	for _, b := range chain.blocks {
		if b.Height%5 == 2 {
			*b = *degrade(b)
		}
	}
	m := newNodeMeta(t)
	x := NewEthIndex(openEthTestDB(t), 5, m.source)
	for _, b := range chain.blocks {
		if err := x.PrepareBlock(context.Background(), b); err != nil {
			t.Fatal(err)
		}
		if err := m.writeOnly(func() error { return x.ConnectBlock(b) }); err != nil {
			t.Fatalf("connect %d: %v", b.Height, err)
		}
	}
	if m.calls.Load() == 0 {
		t.Fatal("no contract metadata was fetched")
	}
	contracts := 0
	if err := x.db.iterate(CFContracts, nil, nil, func(_, _ []byte) (bool, error) { contracts++; return true, nil }); err != nil {
		t.Fatal(err)
	}
	if int(m.calls.Load()) != contracts {
		t.Errorf("%d metadata fetches for %d contracts rows", m.calls.Load(), contracts)
	}
	// The amend: the full traces name contracts created by internal calls.
	full := newEthSynthChain(21, 40)
	hs, err := x.TraceErrors()
	if err != nil || len(hs) == 0 {
		t.Fatalf("trace errors %v, %v", hs, err)
	}
	before := m.calls.Load()
	for _, h := range hs {
		blk := full.blocks[h]
		if err := x.PrepareBlock(context.Background(), blk); err != nil {
			t.Fatal(err)
		}
		if err := m.writeOnly(func() error { return x.amendTraces(h, blk) }); err != nil {
			t.Fatalf("amend %d: %v", h, err)
		}
	}
	if m.calls.Load() == before {
		t.Error("the amend fetched no metadata for the contracts its traces reveal")
	}
	for range 12 {
		if err := m.writeOnly(func() error { _, _, err := x.DisconnectTip(full.refill); return err }); err != nil {
			t.Fatal(err)
		}
	}
}

// A block that names a contract new to the index and comes without its
// metadata fails and writes nothing; prepared, it connects.
func TestEthConnectUnpreparedWritesNothing(t *testing.T) {
	chain := newEthSynthChain(23, 30)
	h := newContractAt(t, chain, 3)
	x := newEthTestIndex(t, 300, chain.blocks[:h])
	was := dumpIndex(t, x)
	if err := x.ConnectBlock(chain.blocks[h]); !errors.Is(err, ErrNotPrepared) {
		t.Fatalf("unprepared block %d: %v, want ErrNotPrepared", h, err)
	}
	if !bytes.Equal(dumpIndex(t, x), was) {
		t.Fatal("a failed connect changed the index")
	}
	connectEth(t, x, chain.blocks[h])
}

// A node that fails or hangs while a block is prepared leaves the index
// untouched at its tip, and a hanging one does not hold up the write of
// the block before (as when the sync worker fetches ahead).
func TestEthPrepareNodeFailureLeavesTip(t *testing.T) {
	chain := newEthSynthChain(25, 30)
	h := newContractAt(t, chain, 4)
	m := newNodeMeta(t)
	x := NewEthIndex(openEthTestDB(t), 300, m.source)
	for _, b := range chain.blocks[:h-1] {
		connectEth(t, x, b)
	}
	prev := chain.blocks[h-1]
	if err := x.PrepareBlock(context.Background(), prev); err != nil {
		t.Fatal(err)
	}

	m.mode.Store(metaFail)
	if err := x.PrepareBlock(context.Background(), chain.blocks[h]); !errors.Is(err, errNodeDown) {
		t.Fatalf("prepare with the node down: %v", err)
	}

	m.mode.Store(metaHang)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var hangErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		hangErr = x.PrepareBlock(ctx, chain.blocks[h])
	}()
	select {
	case <-m.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the prepare never asked the node")
	}
	// The node hangs for block h; block h-1 is written meanwhile.
	if err := m.writeOnly(func() error { return x.ConnectBlock(prev) }); err != nil {
		t.Fatalf("connect %d while the node hangs: %v", prev.Height, err)
	}
	cancel()
	wg.Wait()
	if !errors.Is(hangErr, context.Canceled) {
		t.Fatalf("prepare with a hanging node: %v", hangErr)
	}
	if err := x.ConnectBlock(chain.blocks[h]); !errors.Is(err, ErrNotPrepared) {
		t.Fatalf("connect after failed prepares: %v", err)
	}
	tip, _, err := x.Tip()
	if err != nil || tip.Height != h-1 {
		t.Fatalf("tip %d, %v; want %d", tip.Height, err, h-1)
	}
	fresh := newEthTestIndex(t, 300, newEthSynthChain(25, 30).blocks[:h])
	if diffs, err := Diff(x.db, fresh.db, ColumnFamilies(bchain.ChainEthereumType), 10); err != nil || len(diffs) > 0 {
		t.Fatalf("index after node failures differs from a sync to %d: %v %v", h-1, diffs, err)
	}
	m.mode.Store(metaOK)
	connectEth(t, x, chain.blocks[h])
}

// A failing or hanging node during RetryTraces leaves the degraded block
// as it was; a working one then amends it.
func TestEthRetryTracesNodeFailureLeavesBlock(t *testing.T) {
	chain := newEthSynthChain(27, 30)
	h := internalCreateAt(t, chain)
	blocks := slices.Clone(chain.blocks)
	blocks[h] = degrade(blocks[h])
	m := newNodeMeta(t)
	x := NewEthIndex(openEthTestDB(t), 300, m.source)
	for _, b := range blocks {
		connectEth(t, x, b)
	}
	was := dumpIndex(t, x)
	for _, mode := range []int32{metaFail, metaHang} {
		m.mode.Store(mode)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		n, err := x.RetryTraces(ctx, newEthSynthChain(27, 30).refill)
		cancel()
		if n != 0 || err == nil {
			t.Fatalf("mode %d: amended %d, %v", mode, n, err)
		}
		if !bytes.Equal(dumpIndex(t, x), was) {
			t.Fatalf("mode %d: a failed amend changed the index", mode)
		}
	}
	m.mode.Store(metaOK)
	if n, err := x.RetryTraces(context.Background(), newEthSynthChain(27, 30).refill); err != nil || n != 1 {
		t.Fatalf("amended %d, %v", n, err)
	}
	fresh := newEthTestIndex(t, 300, newEthSynthChain(27, 30).blocks)
	if diffs, err := Diff(x.db, fresh.db, ColumnFamilies(bchain.ChainEthereumType), 10); err != nil || len(diffs) > 0 {
		t.Fatalf("amended index differs from a fresh sync: %v %v", diffs, err)
	}
}

// internalCreateAt returns the first height whose block creates a contract
// by an internal call: its amend needs the node's metadata.
func internalCreateAt(t *testing.T, chain *ethSynth) uint32 {
	t.Helper()
	for _, b := range chain.blocks {
		for _, tx := range b.Eth.Txs {
			for _, it := range tx.Internal.Transfers {
				if it.Type == bchain.EthInternalCreate {
					return b.Height
				}
			}
		}
	}
	t.Fatal("the synthetic chain has no internal creation")
	return 0
}
