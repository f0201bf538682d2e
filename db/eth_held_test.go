package db

import (
	"sync/atomic"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// The held addressContracts rows never get ahead of the store: a block
// whose write is refused (disk full), retried, and blocks disconnected and
// connected again end byte-identical to a fresh sync, and to an index
// that holds no rows (a restarted process).
func TestEthHeldRowsFollowWrites(t *testing.T) {
	chain := newEthSynth(11)
	for range 60 {
		chain.next("")
	}
	ref := newEthTestIndex(t, 300, chain.blocks)

	var free atomic.Int64
	free.Store(1 << 30)
	d, err := Open(Options{Path: t.TempDir(), ChainType: bchain.ChainEthereumType, Coin: "Test", Network: "test",
		MinFreeBytes: 1 << 20, FreeSpace: func(string) (int64, error) { return free.Load(), nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	x := NewEthIndex(d, 300, testContractSource)
	for _, b := range chain.blocks[:30] {
		connectEth(t, x, b)
	}
	free.Store(1<<20 + 10)
	for range 3 {
		if err := x.ConnectBlock(chain.blocks[30]); err == nil {
			t.Fatal("a write was accepted on a full disk")
		}
	}
	free.Store(1 << 30)
	for _, b := range chain.blocks[30:] {
		connectEth(t, x, b)
	}
	for range 10 {
		if _, _, err := x.DisconnectTip(chain.refill); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range chain.blocks[50:55] {
		connectEth(t, x, b)
	}
	// A restarted process holds nothing and goes on from the store.
	fresh := NewEthIndex(d, 300, testContractSource)
	for _, b := range chain.blocks[55:] {
		connectEth(t, fresh, b)
	}
	diffs, err := Diff(d, ref.db, ColumnFamilies(bchain.ChainEthereumType), 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, df := range diffs {
		t.Error(df)
	}
}
