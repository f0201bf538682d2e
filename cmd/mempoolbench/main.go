// Command mempoolbench measures mempool against a btcd regtest node whose
// mempool holds many txs (100,000 by default): the initial load (txs/s,
// with and without JSON-RPC batches), the memory it takes per tx, a full
// resync with nothing changed, and how long a block takes to reach the
// index while a load runs compared with an idle mempool. It is not part of
// CI: run it by hand (go run ./cmd/mempoolbench) and read the figures.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/wire/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/rocksdb"
	"github.com/openexplorer/blockbook/mempool"
	"github.com/openexplorer/blockbook/syncer"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
)

type options struct {
	txs         int
	fanout      int
	workers     int
	sendWorkers int
	blocks      int
	filters     bool
	verbose     bool
}

func main() {
	var o options
	flag.IntVar(&o.txs, "txs", 100_000, "transactions to put into the node's mempool")
	flag.IntVar(&o.fanout, "fanout", 2000, "outputs per funding tx")
	flag.IntVar(&o.workers, "workers", 8, "mempool workers (mempool_workers)")
	flag.IntVar(&o.sendWorkers, "sendworkers", 16, "concurrent sendrawtransaction calls while filling the node")
	flag.IntVar(&o.blocks, "blocks", 3, "blocks mined per latency measurement")
	flag.BoolVar(&o.filters, "filters", true, "build mempool filters (P 20, taproot-noordinals, zeroed key)")
	flag.BoolVar(&o.verbose, "v", false, "log the node plugin, sync worker and mempool")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "mempoolbench:", err)
		os.Exit(1)
	}
}

// bench is the running setup: a btcd node, the chain generator that fed
// it, the btc backend, and an index kept at the tip by a sync worker.
type bench struct {
	o     options
	ctx   context.Context
	log   *slog.Logger
	node  *regtest.Node
	g     *chaingen.Generator
	be    *bchain.Backend
	btc   *btc.Node
	d     *db.DB
	index *db.UtxoIndex
	reg   *prometheus.Registry

	mp       atomic.Pointer[mempool.Mempool] // receives the sync worker's events
	target   atomic.Pointer[blockWait]
	stopSync func()
}

type blockWait struct {
	hash bchain.Hash
	done chan time.Time
}

func run(o options) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	work, err := os.MkdirTemp("", "mempoolbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	level := slog.LevelWarn
	if o.verbose {
		level = slog.LevelInfo
	}
	b := &bench{o: o, ctx: ctx, log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})), reg: prometheus.NewRegistry()}
	fmt.Printf("mempoolbench: %d txs, %d mempool workers, %d CPUs, %s\n", o.txs, o.workers, runtime.NumCPU(), runtime.Version())

	// btcd limits concurrent RPC clients to 10 by default and answers 503
	// beyond; the fill and the mempool's workers need more.
	b.node, err = regtest.Start(ctx, regtest.Options{Dir: work + "/btcd", ExtraArgs: []string{
		"--rpcmaxclients=500", "--rpcmaxconcurrentreqs=500", "--rpcmaxwebsockets=50",
	}})
	if err != nil {
		return err
	}
	defer b.node.Stop()
	coins, err := b.fund()
	if err != nil {
		return err
	}
	if err := b.startIndex(work + "/index"); err != nil {
		return err
	}
	defer b.d.Close()
	defer b.stopSync()
	if err := b.fill(coins); err != nil {
		return err
	}

	idle, err := b.blockLatency(nil)
	if err != nil {
		return err
	}
	fmt.Printf("block → index tip, no mempool:           %s\n", durations(idle))

	for _, batch := range []bool{true, false} {
		if err := b.measureLoad(batch); err != nil {
			return err
		}
	}
	return nil
}

// fund builds and submits a chain whose funding txs fan coinbases out into
// one output per future mempool tx.
func (b *bench) fund() ([]chaingen.Coin, error) {
	o := b.o
	nFan := (o.txs + o.fanout - 1) / o.fanout
	params := &chaincfg.RegressionNetParams
	height := nFan + int(params.CoinbaseMaturity) + 1
	step := time.Second
	// Recent timestamps: btcd keeps a mempool only while its tip is recent.
	b.g = chaingen.New(params, "mempoolbench", chaingen.WithTimestamps(time.Now().Add(-time.Duration(height+600)*step), step))
	start := time.Now()
	for range height - 1 {
		if _, err := b.g.AddBlock(); err != nil {
			return nil, err
		}
	}
	var fans []*wire.MsgTx
	for f := range nFan {
		cb := b.g.Coins(b.g.Blocks()[f+1].Transactions[0])
		n := min(o.fanout, o.txs-f*o.fanout)
		value := (cb[0].Value - 1_000_000) / int64(n)
		outs := make([]chaingen.Output, n)
		for i := range outs {
			script, err := b.g.PkScript(chaingen.P2WPKH, uint64(1_000_000+f*o.fanout+i))
			if err != nil {
				return nil, err
			}
			outs[i] = chaingen.Output{Script: script, Value: value}
		}
		tx, err := b.g.Spend(cb, outs, 1)
		if err != nil {
			return nil, err
		}
		fans = append(fans, tx)
	}
	var coins []chaingen.Coin
	for lo := 0; lo < len(fans); lo += 10 {
		blockTxs := fans[lo:min(lo+10, len(fans))]
		if _, err := b.g.AddBlock(blockTxs...); err != nil {
			return nil, err
		}
		for _, tx := range blockTxs {
			c := b.g.Coins(tx)
			coins = append(coins, c[:len(c)-1]...) // all but the change
		}
	}
	if err := b.g.Submit(b.ctx, b.node, 1); err != nil {
		return nil, err
	}
	fmt.Printf("funding chain: %d blocks, %d funding txs, %d coins (%s)\n", b.g.Height(), nFan, len(coins), time.Since(start).Round(time.Millisecond))
	return coins[:o.txs], nil
}

// startIndex opens the index and runs a sync worker to the node's tip; its
// block events go to the current mempool and to blockLatency.
func (b *bench) startIndex(dir string) error {
	cfg, err := bchain.ParseConfig(fmt.Appendf(nil, `{"coin_name":"Regtest","rpc_url":%q,"rpc_user":%q,"rpc_pass":%q,"block_notifications":"btcd"}`,
		b.node.RPCURL, b.node.RPCUser, b.node.RPCPass))
	if err != nil {
		return err
	}
	if b.be, err = bchain.NewBackend(cfg, bchain.Env{Log: b.log}); err != nil {
		return err
	}
	b.btc = b.be.Chain.(*btc.Node)
	if b.d, err = rocksdb.Open(db.Options{Path: dir, ChainType: bchain.ChainBitcoinType, Coin: "Regtest", Network: "regtest", Log: b.log}); err != nil {
		return err
	}
	if b.index, err = db.NewUtxoIndex(b.d, b.be.Utxo, 300, db.FilterParams{}); err != nil {
		return err
	}
	w := syncer.New(b.be.Chain, b.index, syncer.Config{Workers: 2}, b.log, nil)
	w.OnBlock(func(ev syncer.BlockEvent) {
		if t := b.target.Load(); t != nil && ev.HasTip && ev.Tip.Hash == t.hash {
			select {
			case t.done <- time.Now():
			default:
			}
		}
		if m := b.mp.Load(); m != nil {
			m.OnBlock(ev)
		}
	})
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Run(ctx, b.be.Notifier) }()
	b.stopSync = func() { cancel(); <-done }
	_, hash := b.g.Tip()
	want := displayHash(hash)
	for {
		tip, ok, err := b.index.Tip()
		if err != nil {
			return err
		}
		if ok && tip.Hash == want {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// fill signs one tx per coin and submits them all to the node.
func (b *bench) fill(coins []chaingen.Coin) error {
	start := time.Now()
	dests := make([][]byte, len(coins))
	for i := range coins {
		dests[i] = coins[(i+1)%len(coins)].PkScript // every address is paid once and spent once
	}
	txs, err := b.g.SpendEach(coins, dests, 2)
	if err != nil {
		return err
	}
	signed := time.Since(start)
	start = time.Now()
	var next atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for range b.o.sendWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(txs) {
					return
				}
				if _, err := b.node.SendRawTransaction(b.ctx, txs[i]); err != nil {
					once.Do(func() { firstErr = fmt.Errorf("send tx %d: %w", i, err) })
					return
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	sent := time.Since(start)
	ids, err := b.btc.MempoolTxids(b.ctx)
	if err != nil {
		return err
	}
	if len(ids) != len(txs) {
		return fmt.Errorf("the node's mempool holds %d txs, want %d", len(ids), len(txs))
	}
	fmt.Printf("node mempool filled: %d txs signed in %s, sent in %s (%.0f tx/s)\n",
		len(txs), signed.Round(time.Millisecond), sent.Round(time.Millisecond), float64(len(txs))/sent.Seconds())
	return nil
}

// blockLatency mines o.blocks empty blocks, one at a time, and returns how
// long each took from submitblock until the index tip reached it. When
// during is set, it only mines while during() holds.
func (b *bench) blockLatency(during func() bool) ([]time.Duration, error) {
	var out []time.Duration
	for range b.o.blocks {
		if during != nil && !during() {
			break
		}
		blk, err := b.g.AddBlock()
		if err != nil {
			return nil, err
		}
		w := &blockWait{hash: displayHash(blk.BlockHash()), done: make(chan time.Time, 1)}
		b.target.Store(w)
		start := time.Now()
		if err := b.node.SubmitBlock(b.ctx, blk); err != nil {
			return nil, err
		}
		select {
		case at := <-w.done:
			out = append(out, at.Sub(start))
		case <-time.After(2 * time.Minute):
			return nil, fmt.Errorf("block %s never reached the index", w.hash)
		}
		b.target.Store(nil)
	}
	return out, nil
}

func displayHash(h [32]byte) bchain.Hash {
	var out bchain.Hash
	for i := range out {
		out[i] = h[31-i]
	}
	return out
}

// durations renders latencies with their median.
func durations(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none measured"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	var parts []string
	for _, d := range ds {
		parts = append(parts, d.Round(100*time.Microsecond).String())
	}
	return fmt.Sprintf("median %s (%v)", s[len(s)/2].Round(100*time.Microsecond), parts)
}
