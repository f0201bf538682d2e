package apitest

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/mempool"
)

// Filter parameters of the fixture: Trezor's (taproot scripts without
// ordinals, zeroed key), for blocks and for the mempool.
var (
	BlockFilters   = db.FilterParams{P: 20, Scripts: db.FilterScriptsTaprootNoOrdinals, ZeroedKey: true}
	MempoolFilters = db.FilterParams{P: 20, Scripts: db.FilterScriptsTaprootNoOrdinals, ZeroedKey: true}
)

// Options choose the parts of a fixture.
type Options struct {
	// Mempool starts the real mempool over the node's pending txs and
	// waits until it holds them all.
	Mempool bool
	// NoBlockFilters indexes without block filters.
	NoBlockFilters bool
}

// Fixture is the chain indexed into a fresh store, with the node and, if
// asked for, the mempool: everything a query service is built from.
type Fixture struct {
	*Chain
	DB      *db.DB
	Node    *Node
	Parser  *btc.Parser
	Backend *bchain.Backend
	// BlockFilters are the parameters the store was indexed with.
	BlockFilters db.FilterParams
	// Mempool is nil unless Options.Mempool.
	Mempool *mempool.Mempool
}

// New builds a fixture of one test's own, closed when the test ends.
func New(tb testing.TB, o Options) *Fixture {
	tb.Helper()
	return NewRewritten(tb, o, nil)
}

// NewRewritten is New with an index of the chain as rewrite changes each
// parsed block before it is connected (the node keeps the original
// blocks): for chains the generator cannot make, such as a repeated
// coinbase txid. nil rewrites nothing.
func NewRewritten(tb testing.TB, o Options, rewrite func(height int, blk *bchain.Block)) *Fixture {
	tb.Helper()
	f, closeFn, err := build(o, tb.TempDir(), rewrite)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(closeFn)
	return f
}

// shared holds the fixtures built once per test binary.
var shared struct {
	mu       sync.Mutex
	fixtures map[Options]*Fixture
	closers  []func()
}

// Shared returns a fixture built once per test binary for o, for tests
// that only read (the tx cache and the node's sent txs are shared too).
// Opening a store is what costs; TestMain calls CloseShared after the
// tests.
func Shared(tb testing.TB, o Options) *Fixture {
	tb.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if f := shared.fixtures[o]; f != nil {
		return f
	}
	f, closeFn, err := build(o, "apitest-shared", nil)
	if err != nil {
		tb.Fatal(err)
	}
	if shared.fixtures == nil {
		shared.fixtures = map[Options]*Fixture{}
	}
	shared.fixtures[o], shared.closers = f, append(shared.closers, closeFn)
	return f
}

// CloseShared closes the shared fixtures.
func CloseShared() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	for _, c := range shared.closers {
		c()
	}
	shared.fixtures, shared.closers = nil, nil
}

// build indexes the chain into a new in-memory store (dir names it) and starts the parts o
// asks for; closeFn stops them and closes the store.
func build(o Options, dir string, rewrite func(int, *bchain.Block)) (f *Fixture, closeFn func(), err error) {
	c, err := SharedChain()
	if err != nil {
		return nil, nil, fmt.Errorf("build the test chain: %w", err)
	}
	f = &Fixture{Chain: c, Parser: btc.NewParser(c.Params), BlockFilters: BlockFilters}
	if o.NoBlockFilters {
		f.BlockFilters = db.FilterParams{}
	}
	var pending [][]byte
	for _, tx := range c.Pending {
		var buf bytes.Buffer
		if err := tx.Serialize(&buf); err != nil {
			return nil, nil, err
		}
		pending = append(pending, buf.Bytes())
	}
	if f.Node, err = NewNode(f.Parser, c.Raw, pending); err != nil {
		return nil, nil, fmt.Errorf("test node: %w", err)
	}
	f.Backend = f.backend()
	if f.DB, err = openStore(db.Options{Path: dir}); err != nil {
		return nil, nil, err
	}
	if err := f.index(rewrite); err != nil {
		f.DB.Close()
		return nil, nil, err
	}
	if !o.Mempool {
		return f, f.DB.Close, nil
	}
	stop, err := f.startMempool()
	if err != nil {
		f.DB.Close()
		return nil, nil, err
	}
	// The mempool must stop before the store closes.
	return f, func() { stop(); f.DB.Close() }, nil
}

// index connects every block through the real index code.
func (f *Fixture) index(rewrite func(int, *bchain.Block)) error {
	x, err := db.NewUtxoIndex(f.DB, f.Parser, 300, f.BlockFilters)
	if err != nil {
		return err
	}
	for h, raw := range f.Raw {
		blk, err := f.Parser.ParseBlock(raw)
		if err != nil {
			return fmt.Errorf("parse block %d: %w", h, err)
		}
		blk.Height = uint32(h)
		if rewrite != nil {
			rewrite(h, blk)
		}
		if err := x.ConnectBlock(blk); err != nil {
			return fmt.Errorf("connect block %d: %w", h, err)
		}
	}
	return nil
}

// backend assembles the node capabilities as the btc plugin does for
// regtest.
func (f *Fixture) backend() *bchain.Backend {
	genesis, _ := bchain.ParseHash(f.Params.GenesisHash.String())
	return &bchain.Backend{
		Type: bchain.ChainBitcoinType,
		Params: bchain.CoinParams{Name: "Regtest", Shortcut: "rBTC", Label: "Bitcoin Regtest", Network: f.Params.Name,
			APINetwork: "rBTC", Testnet: true, Decimals: 8, Slip44: 1, Genesis: genesis,
			RetargetBlocks: uint32(f.Params.TargetTimespan / f.Params.TargetTimePerBlock),
			TargetSpacing:  int64(f.Params.TargetTimePerBlock / time.Second)},
		Chain: f.Node, Addresses: f.Parser, RawBlocks: f.Node, Txs: f.Node, Broadcast: f.Node, Fees: f.Node,
		Mempool: f.Node, Utxo: f.Parser, Xpub: btc.NewXpubParser(f.Params, btc.Magics{}, 1),
	}
}

// mempoolGuard bounds the wait for the initial mempool load (a failure
// guard, not a speed assertion).
const mempoolGuard = 30 * time.Second

// startMempool runs the real mempool over the node until it holds every
// pending tx; stop ends it.
func (f *Fixture) startMempool() (stop func(), err error) {
	f.Mempool = mempool.New(f.DB, f.Node, f.Parser, mempool.Config{
		Workers: 2, ResyncInterval: time.Hour, Filter: MempoolFilters, Log: Quiet(),
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = f.Mempool.Run(ctx, nil)
	}()
	stop = func() { cancel(); <-done }
	deadline := time.Now().Add(mempoolGuard)
	for {
		st := f.Mempool.Status()
		if st.InSync && st.Size == len(f.Pending) {
			return stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("apitest: the mempool did not load the pending txs: %+v", st)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
