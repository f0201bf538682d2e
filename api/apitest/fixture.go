package apitest

import (
	"bytes"
	"context"
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

// New builds a fixture; it fails the test on any error.
func New(tb testing.TB, o Options) *Fixture {
	tb.Helper()
	c, err := SharedChain()
	if err != nil {
		tb.Fatalf("build the test chain: %v", err)
	}
	f := &Fixture{Chain: c, Parser: btc.NewParser(c.Params), BlockFilters: BlockFilters}
	if o.NoBlockFilters {
		f.BlockFilters = db.FilterParams{}
	}
	var pending [][]byte
	for _, tx := range c.Pending {
		var buf bytes.Buffer
		if err := tx.Serialize(&buf); err != nil {
			tb.Fatal(err)
		}
		pending = append(pending, buf.Bytes())
	}
	if f.Node, err = NewNode(f.Parser, c.Raw, pending); err != nil {
		tb.Fatalf("test node: %v", err)
	}
	f.Backend = f.backend()
	f.DB = OpenStore(tb, db.Options{})
	x, err := db.NewUtxoIndex(f.DB, f.Parser, 300, f.BlockFilters)
	if err != nil {
		tb.Fatal(err)
	}
	for h, raw := range c.Raw {
		blk, err := f.Parser.ParseBlock(raw)
		if err != nil {
			tb.Fatalf("parse block %d: %v", h, err)
		}
		blk.Height = uint32(h)
		if err := x.ConnectBlock(blk); err != nil {
			tb.Fatalf("connect block %d: %v", h, err)
		}
	}
	if o.Mempool {
		f.startMempool(tb)
	}
	return f
}

// backend assembles the node capabilities as the btc plugin does for
// regtest.
func (f *Fixture) backend() *bchain.Backend {
	genesis, _ := bchain.ParseHash(f.Params.GenesisHash.String())
	return &bchain.Backend{
		Type: bchain.ChainBitcoinType,
		Params: bchain.CoinParams{Name: "Regtest", Shortcut: "rBTC", Label: "Bitcoin Regtest", Network: f.Params.Name,
			APINetwork: "rBTC", Testnet: true, Decimals: 8, Slip44: 1, Genesis: genesis},
		Chain: f.Node, Addresses: f.Parser, RawBlocks: f.Node, Txs: f.Node, Broadcast: f.Node, Fees: f.Node,
		Mempool: f.Node, Utxo: f.Parser, Xpub: btc.NewXpubParser(f.Params, btc.Magics{}, 1),
	}
}

// mempoolGuard bounds the wait for the initial mempool load (a failure
// guard, not a speed assertion).
const mempoolGuard = 30 * time.Second

func (f *Fixture) startMempool(tb testing.TB) {
	tb.Helper()
	f.Mempool = mempool.New(f.DB, f.Node, f.Parser, mempool.Config{
		Workers: 2, ResyncInterval: time.Hour, Filter: MempoolFilters, Log: Quiet(),
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = f.Mempool.Run(ctx, nil)
	}()
	// The mempool must stop before the store closes (cleanups run last
	// registered first, and OpenStore registered its own earlier).
	tb.Cleanup(func() { cancel(); <-done })
	deadline := time.Now().Add(mempoolGuard)
	for {
		st := f.Mempool.Status()
		if st.InSync && st.Size == len(f.Pending) {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the mempool did not load the %d pending txs: %+v", len(f.Pending), st)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
