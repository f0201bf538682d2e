package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/rocksdb"
	"github.com/openexplorer/blockbook/fiat"
	"github.com/openexplorer/blockbook/syncer"
)

// A replica (-replica) is an API-only process over the index a primary
// process (the one with -sync) writes on the same host: it opens the
// datadir as RocksDB secondary instances, never writes, runs no sync
// worker, and catches up with the primary every replicaInterval. It learns
// of new blocks from the index after each catch-up (a tip whose hash
// changed at a height it had is a reorg) and fetches their txs from the
// node for the websocket's address subscriptions; it follows the node's
// mempool itself. So it needs nothing from the primary but its files, and
// either process may crash or restart without the other noticing more
// than a pause in new blocks.

// replicaInterval is how often a replica catches up with the primary.
const replicaInterval = 200 * time.Millisecond

// replicaWarnEvery spaces the warnings while catch-ups keep failing.
const replicaWarnEvery = time.Minute

// replicaNotifyMax is the most blocks announced one by one after a
// catch-up; beyond it (the primary is loading in bulk) only the new tip is
// announced, as the primary does after a bulk round.
const replicaNotifyMax = 50

// bulkTip marks, between moves and deliver, a tip announced without
// fetching its block.
var bulkTip = &bchain.Block{}

// replicaWindow is how many recent block hashes a replica remembers to
// find where a reorg forked.
const replicaWindow = 100

// replicaOptions are the replica's flags.
type replicaOptions struct {
	On bool
	// Dir holds the secondary instances' own files (default: a new
	// directory under the system temp dir, removed at exit).
	Dir string
	// MaxLag: /health fails when the last successful catch-up is older.
	MaxLag time.Duration
	// MaxBlocks: /health fails when the replica's tip is more blocks below
	// the node's.
	MaxBlocks uint
}

func declareReplicaFlags(fs *flag.FlagSet, r *replicaOptions) {
	fs.BoolVar(&r.On, "replica", false, "serve the API from the index of a primary process (the one with -sync) on the same -datadir, read-only, following it")
	fs.StringVar(&r.Dir, "replicadir", "", "with -replica: directory for the replica's own RocksDB files (default: a new directory under the system temp dir, removed at exit)")
	fs.DurationVar(&r.MaxLag, "replicamaxlag", 5*time.Second, "with -replica: /health fails when the replica has not caught up with the primary for this long")
	fs.UintVar(&r.MaxBlocks, "replicamaxblocks", 2, "with -replica: /health fails when the replica's tip is more than this many blocks below the node's")
}

func (o *Options) validateReplica() error {
	if !o.Replica.On {
		return nil
	}
	switch {
	case o.Sync:
		return errors.New("-replica serves the index another process syncs: it cannot be combined with -sync")
	case o.Rollback >= 0 || o.Repair || o.ComputeDBStats:
		return errors.New("-replica cannot be combined with -rollback, -repair, -fixutxo, -forcerepair or -computedbstats (run them on the primary)")
	case o.Replica.MaxLag < time.Second:
		return errors.New("-replicamaxlag must be at least 1s")
	}
	return nil
}

// openReplicaStore opens the primary's index as a replica; cleanup
// removes a replica directory it made.
func openReplicaStore(o *Options, cfg *bchain.Config, b *bchain.Backend, log *slog.Logger, reg prometheus.Registerer) (*db.DB, func(), error) {
	dir, cleanup := o.Replica.Dir, func() {}
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "blockbook-replica-"); err != nil {
			return nil, nil, fmt.Errorf("replica directory: %w", err)
		}
		cleanup = func() { _ = os.RemoveAll(dir) }
	}
	d, err := rocksdb.OpenSecondary(db.Options{
		Path: o.DataDir, ChainType: b.Type, Coin: cfg.CoinName, Network: b.Params.Network,
		CacheBytes: o.DBCache, MaxOpenFiles: -1, Log: log,
	}, dir)
	if err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("replica of %s: %w", o.DataDir, err)
	}
	log.Info("replica: serving the index of the primary read-only", "datadir", o.DataDir, "replicadir", dir)
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "blockbook_db_size_bytes", Help: "Size of the index database."},
		func() float64 { return float64(d.Size()) }))
	return d, cleanup, nil
}

// replica follows the primary's index: it is the replica's SyncStatus and
// the source of its block events.
type replica struct {
	d      *db.DB
	node   bchain.BlockChain
	live   *bchain.Liveness
	o      replicaOptions
	log    *slog.Logger
	caught prometheus.Counter

	mu        sync.Mutex
	tip       db.Tip
	hasTip    bool
	hashes    map[uint32]bchain.Hash // recent heights of the tip's chain
	lastOK    time.Time              // last successful catch-up
	lastErr   string
	lastBlock time.Time // when the tip last moved
	warned    time.Time // last failure warning since the last success (Run's goroutine only)
	listeners []func(syncer.BlockEvent)
}

var _ api.ReplicaStatus = (*replica)(nil)

func newReplica(d *db.DB, node bchain.BlockChain, live *bchain.Liveness, o replicaOptions, log *slog.Logger, reg prometheus.Registerer) (*replica, error) {
	r := &replica{d: d, node: node, live: live, o: o, log: log.With("subsystem", "replica"), hashes: map[uint32]bchain.Hash{},
		lastOK: time.Now(), caught: prometheus.NewCounter(prometheus.CounterOpts{Name: "blockbook_replica_catchups_total",
			Help: "Successful catch-ups of the replica with the primary's index"})}
	reg.MustRegister(r.caught, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "blockbook_replica_lag_seconds",
		Help: "Seconds since the replica last caught up with the primary's index"},
		func() float64 { return r.ReplicaState().SecondsSinceCatchUp }))
	snap, err := d.Snapshot()
	if err != nil {
		return nil, err
	}
	defer snap.Release()
	if r.tip, r.hasTip, err = db.ReadTip(snap); err != nil {
		return nil, fmt.Errorf("replica: read the tip: %w", err)
	}
	if r.hasTip {
		if err := r.remember(snap, r.tip.Height); err != nil {
			return nil, err
		}
		if t, err := db.ReadBlockMeta(snap, r.tip.Height); err == nil && t != nil {
			r.lastBlock = time.Unix(t.Time, 0).UTC()
		}
	}
	return r, nil
}

// remember records the hashes of the heights up to tip from the index.
func (r *replica) remember(snap *db.Snapshot, tip uint32) error {
	low := uint32(0)
	if tip >= replicaWindow {
		low = tip - replicaWindow + 1
	}
	for h := range r.hashes {
		if h < low || h > tip {
			delete(r.hashes, h)
		}
	}
	for h := low; h <= tip; h++ {
		if _, ok := r.hashes[h]; ok {
			continue
		}
		m, err := db.ReadBlockMeta(snap, h)
		if err != nil {
			return fmt.Errorf("replica: read block %d: %w", h, err)
		}
		if m != nil {
			r.hashes[h] = m.Hash
		}
	}
	return nil
}

// OnBlock registers fn for the block events (as syncer.Syncer.OnBlock).
func (r *replica) OnBlock(fn func(syncer.BlockEvent)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.listeners = append(r.listeners, fn)
}

// State is the replica's sync state: its tip, the node's height from the
// liveness probe, and an error while it lags the primary too long.
func (r *replica) State() api.SyncState {
	rs := r.ReplicaState()
	r.mu.Lock()
	defer r.mu.Unlock()
	st := api.SyncState{BestHeight: r.tip.Height, BestHash: r.tip.Hash, HasTip: r.hasTip, LastBlockTime: r.lastBlock,
		NodeHeight: r.live.State().Height}
	st.InSync = r.hasTip && st.NodeHeight <= st.BestHeight
	if rs.SecondsSinceCatchUp > r.o.MaxLag.Seconds() {
		st.Err = fmt.Sprintf("replica has not caught up with the primary for %.1f s", rs.SecondsSinceCatchUp)
		if r.lastErr != "" {
			st.Err += " (" + r.lastErr + ")"
		}
	}
	return st
}

// ReplicaState is the replica part of the status.
func (r *replica) ReplicaState() api.ReplicaInfo {
	node := r.live.State().Height
	r.mu.Lock()
	defer r.mu.Unlock()
	ri := api.ReplicaInfo{LastCatchUp: r.lastOK.UTC(), SecondsSinceCatchUp: time.Since(r.lastOK).Seconds(), Error: r.lastErr}
	if node > r.tip.Height {
		ri.BlocksBehindNode = node - r.tip.Height
	}
	return ri
}

// Run catches up every replicaInterval until ctx ends.
func (r *replica) Run(ctx context.Context) {
	t := time.NewTicker(replicaInterval)
	defer t.Stop()
	var lastNode uint32
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		events, err := r.step()
		if err != nil {
			r.failed(err, time.Now())
			continue
		}
		r.warned = time.Time{}
		if node := r.live.State().Height; len(events) == 0 && node != lastNode && lastNode != 0 {
			// The node moved but the index did not (the primary is down
			// or behind): the mempool still resyncs, as the node drops
			// the txs its new blocks mined or conflict with.
			events = []syncer.BlockEvent{{}}
		}
		lastNode = r.live.State().Height
		r.deliver(ctx, events)
	}
}

// failed records a failed catch-up. Whatever the error (queries that
// postpone it, a primary that keeps changing its table files, a real
// failure), it is logged, naming the latest error, once catch-ups have
// failed for longer than the max lag, then at most every
// replicaWarnEvery while they still fail.
func (r *replica) failed(err error, now time.Time) {
	r.mu.Lock()
	r.lastErr = err.Error()
	since := now.Sub(r.lastOK)
	r.mu.Unlock()
	if since > r.o.MaxLag && now.Sub(r.warned) >= replicaWarnEvery {
		r.warned = now
		r.log.Warn("replica: catch-ups with the primary have failed for longer than -replicamaxlag",
			"for", since.Round(time.Second), "err", err)
	}
}

// step catches up and works out how the tip moved since the last step.
func (r *replica) step() ([]syncer.BlockEvent, error) {
	if err := r.d.CatchUp(); err != nil {
		return nil, err
	}
	r.caught.Inc()
	snap, err := r.d.Snapshot()
	if err != nil {
		return nil, err
	}
	defer snap.Release()
	tip, ok, err := db.ReadTip(snap)
	if err != nil {
		return nil, fmt.Errorf("replica: read the tip: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastOK, r.lastErr = time.Now(), ""
	if ok == r.hasTip && tip == r.tip {
		return nil, nil
	}
	events, err := r.moves(snap, tip, ok)
	if err != nil {
		return nil, err
	}
	r.tip, r.hasTip, r.lastBlock = tip, ok, time.Now()
	if ok {
		if err := r.remember(snap, tip.Height); err != nil {
			return nil, err
		}
	} else {
		clear(r.hashes)
	}
	return events, nil
}

// moves lists the events from the previous tip to tip: the blocks of the
// old chain above the fork disconnected, newest first, then the new ones
// (Connected is filled in by deliver). Called with r.mu held.
func (r *replica) moves(snap *db.Snapshot, tip db.Tip, ok bool) ([]syncer.BlockEvent, error) {
	fork := int64(-1) // the highest height both chains share
	if r.hasTip && ok {
		for h := int64(min(r.tip.Height, tip.Height)); h >= 0; h-- {
			known, have := r.hashes[uint32(h)]
			if !have { // below what we remember: taken as shared
				fork = h
				break
			}
			m, err := db.ReadBlockMeta(snap, uint32(h))
			if err != nil {
				return nil, fmt.Errorf("replica: read block %d: %w", h, err)
			}
			if m != nil && m.Hash == known {
				fork = h
				break
			}
		}
	}
	var events []syncer.BlockEvent
	if r.hasTip {
		for h := int64(r.tip.Height); h > fork; h-- {
			ev := syncer.BlockEvent{Disconnected: true, HasTip: h > 0}
			if h > 0 {
				ev.Tip = db.Tip{Height: uint32(h - 1), Hash: r.hashes[uint32(h-1)]}
			}
			events = append(events, ev)
		}
	}
	if !ok {
		return events, nil
	}
	if int64(tip.Height)-fork > replicaNotifyMax {
		// Like a bulk round on the primary: the tip alone, without txs.
		return append(events, syncer.BlockEvent{Tip: tip, HasTip: true, Connected: bulkTip}), nil
	}
	for h := fork + 1; h <= int64(tip.Height); h++ {
		m, err := db.ReadBlockMeta(snap, uint32(h))
		if err != nil || m == nil {
			return nil, fmt.Errorf("replica: read block %d of the new tip: %v", h, err)
		}
		events = append(events, syncer.BlockEvent{Tip: db.Tip{Height: uint32(h), Hash: m.Hash}, HasTip: true})
	}
	return events, nil
}

// deliver fetches each connected block from the node (for the txs the
// websocket's address subscriptions match) and tells the listeners. A
// block the node cannot give is announced without its txs.
func (r *replica) deliver(ctx context.Context, events []syncer.BlockEvent) {
	if len(events) == 0 {
		return
	}
	r.mu.Lock()
	listeners := r.listeners
	r.mu.Unlock()
	// A node that does not answer is not waited for block by block: the
	// catch-ups (and /health) must go on.
	fetch := r.live.Check() == nil
	for _, ev := range events {
		if ev.Connected == bulkTip {
			ev.Connected = nil
		} else if !ev.Disconnected && ev.HasTip && fetch {
			fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			blk, err := r.node.Block(fctx, ev.Tip.Hash, ev.Tip.Height)
			cancel()
			if err != nil {
				r.log.Warn("cannot fetch a new block's txs for the notifications", "height", ev.Tip.Height, "err", err)
				fetch = false
			} else {
				ev.Connected = blk
			}
		}
		for _, fn := range listeners {
			fn(ev)
		}
	}
}

// runReplica serves the API over the primary's index until ctx ends.
// env is the process's environment without the store, which this opens.
func runReplica(ctx context.Context, o *Options, cfg *bchain.Config, backend *bchain.Backend, env stackEnv, fiatCfg *fiat.Config) error {
	log, reg := env.log, env.reg
	d, cleanup, err := openReplicaStore(o, cfg, backend, log, reg)
	if err != nil {
		return err
	}
	defer cleanup()
	defer d.Close()
	env.d = d
	stack, err := newChainStack(ctx, env)
	if err != nil {
		return err
	}
	live := newLiveness(ctx, env)
	r, err := newReplica(d, backend.Chain, live, o.Replica, log, reg)
	if err != nil {
		return err
	}
	run := func(ctx context.Context, wg *sync.WaitGroup) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.Run(ctx)
		}()
	}
	return serve(ctx, env, stack, tipSource{r, r.OnBlock, run, live, uint32(o.Replica.MaxBlocks)}, fiatCfg)
}
