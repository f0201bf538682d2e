package db

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// openSpaceDB opens a test index whose filesystem has *free bytes free and
// which keeps a 1 MiB reserve.
func openSpaceDB(t *testing.T, free *atomic.Int64) *DB {
	t.Helper()
	d, err := Open(Options{Path: t.TempDir(), ChainType: bchain.ChainBitcoinType, Coin: "Test", Network: "test",
		MinFreeBytes: 1 << 20, FreeSpace: func(string) (int64, error) { return free.Load(), nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d
}

func assertDiskFull(t *testing.T, err error, d *DB) {
	t.Helper()
	if !errors.Is(err, ErrDiskFull) || !strings.Contains(err.Error(), "no space left on device") || !strings.Contains(err.Error(), d.Path()) {
		t.Fatalf("want a full-disk error naming the datadir, got %v", err)
	}
}

// A block write that would leave less than the reserve is refused whole,
// the tip stays, and once there is space the same block connects and the
// index equals one that never ran out of space.
func TestDiskFullPerBlock(t *testing.T) {
	chain := newSynthChain(7)
	for i := 0; i < 30; i++ {
		chain.next("")
	}
	ref := newTestIndex(t, openTestDB(t), 10, FilterParams{})
	connectAll(t, ref, chain.blocks)

	var free atomic.Int64
	free.Store(1 << 30)
	d := openSpaceDB(t, &free)
	x := newTestIndex(t, d, 10, FilterParams{})
	connectAll(t, x, chain.blocks[:12])
	free.Store(1<<20 + 10) // below the reserve plus any block's rows
	for range 3 {
		assertDiskFull(t, x.ConnectBlock(chain.blocks[12]), d)
	}
	if tip, _, err := ReadTip(d); err != nil || tip.Height != 11 {
		t.Fatalf("tip %d, %v after refused writes", tip.Height, err)
	}
	free.Store(1 << 30)
	connectAll(t, x, chain.blocks[12:])
	assertIdentical(t, d, ref.db)
}

// A bulk round that does not fit ends the session with the full-disk error
// before anything of it is staged; the committed rounds stay, and a new
// session once there is space ends identical to a run with space.
func TestDiskFullBulk(t *testing.T) {
	chain := newSynthChain(8)
	for i := 0; i < 40; i++ {
		chain.next("")
	}
	ref := newTestIndex(t, openTestDB(t), 10, FilterParams{})
	connectAll(t, ref, chain.blocks)

	var free atomic.Int64
	free.Store(1 << 30)
	d := openSpaceDB(t, &free)
	x := newTestIndex(t, d, 10, FilterParams{})
	l, err := x.NewBulkLoader(BulkOptions{RoundBytes: 1, CacheBytes: 1}) // a round per block
	if err != nil {
		t.Fatal(err)
	}
	var failed error
	for _, b := range chain.blocks {
		if b.Height == 15 {
			free.Store(1 << 20) // the reserve exactly: no round fits
		}
		if failed = l.ConnectBlock(b); failed != nil {
			break
		}
	}
	if _, err := l.Finish(); failed == nil {
		failed = err
	}
	assertDiskFull(t, failed, d)
	tip, ok, err := ReadTip(d)
	if err != nil || !ok || tip.Height >= 15 {
		t.Fatalf("tip %d (%v, %v) after the refused round", tip.Height, ok, err)
	}
	free.Store(1 << 30)
	bulkConnect(t, x, chain.blocks[tip.Height+1:], BulkOptions{RoundBytes: 1, CacheBytes: 1})
	assertIdentical(t, d, ref.db)
}

// With no reserve the check is off.
func TestDiskReserveOff(t *testing.T) {
	d, err := Open(Options{Path: t.TempDir(), ChainType: bchain.ChainBitcoinType, Coin: "Test", Network: "test",
		FreeSpace: func(string) (int64, error) { return 0, nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.checkSpace(1 << 40); err != nil {
		t.Fatal(err)
	}
}
