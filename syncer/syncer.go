// Package syncer keeps the index at the node's tip: it connects new blocks,
// undoes reorganized ones, and runs the parallel initial sync. It drives the
// index through a small interface and owns no storage itself.
package syncer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// Node is what the sync worker needs from the chain node.
type Node interface {
	BestBlock(ctx context.Context) (uint32, bchain.Hash, error)
	BlockHash(ctx context.Context, height uint32) (bchain.Hash, error)
	Block(ctx context.Context, hash bchain.Hash, height uint32) (*bchain.Block, error)
}

// Index is what the sync worker needs from a chain type's index.
type Index interface {
	Tip() (db.Tip, bool, error)
	BlockHash(height uint32) (bchain.Hash, bool, error)
	ConnectBlock(*bchain.Block) error
	DisconnectTip(db.RefillFunc) (db.Tip, bool, error)
	Window() uint32
	BlockTime(height uint32) (int64, error)
}

// BulkIndex is an index that loads far-behind blocks in bulk (the
// Bitcoin-type one); an index without it connects them one by one.
type BulkIndex interface {
	// NewBulk starts a bulk session for far-behind catch-up.
	NewBulk(db.BulkOptions) (db.Bulk, error)
	// CompactInBackground tidies the storage after a bulk load.
	CompactInBackground()
}

var (
	_ BulkIndex = (*db.UtxoIndex)(nil)
	_ Index     = (*db.EthIndex)(nil)
)

// ErrReorgTooDeep stops sync: the node's chain forked from ours below the
// rollback window. Nothing has been changed when it is returned.
var ErrReorgTooDeep = errors.New("reorg deeper than the rollback window")

// Config tunes the worker.
type Config struct {
	// Workers fetch and decode blocks in parallel during catch-up (-workers).
	Workers int
	// MemoryBudget bounds the sync worker's own memory: blocks fetched
	// ahead, and in bulk mode the UTXO cache and the rows of a round.
	MemoryBudget int64
	// PollInterval is how often the node is asked for its tip without a push.
	PollInterval time.Duration
	// ParallelThreshold: catch-up uses the parallel pipeline when at least
	// this many blocks behind.
	ParallelThreshold uint32
	// BulkThreshold: catch-up loads blocks in bulk (sorted files ingested
	// per round) when at least this many blocks behind; 0 disables it. An
	// index that connects in groups (GroupIndex) does so in every parallel
	// catch-up unless it is 0.
	BulkThreshold uint32
	// ProgressEvery is the progress log interval.
	ProgressEvery time.Duration
	// OnBulk, if set, is called when a bulk session starts (true) and ends
	// (false), so that the process can move memory between the database's
	// caches and the loader.
	OnBulk func(active bool)
	// AfterSync, if set, runs on the sync worker after each pass that
	// reached the node's tip, so that it may write the index without
	// racing blocks (e.g. amending blocks whose trace failed). Its errors
	// are logged; the next pass calls it again.
	AfterSync func(ctx context.Context) error
	// CheckSpace, if set, runs before each pass; its error (db.ErrDiskFull)
	// pauses sync like a refused write, even with no block to write.
	CheckSpace func() error
}

func (c *Config) defaults() {
	if c.Workers < 1 {
		c.Workers = 1
	}
	if c.MemoryBudget <= 0 {
		c.MemoryBudget = 256 << 20
	}
	if c.PollInterval <= 0 {
		c.PollInterval = time.Second
	}
	if c.ParallelThreshold == 0 {
		c.ParallelThreshold = 16
	}
	if c.ProgressEvery <= 0 {
		c.ProgressEvery = 10 * time.Second
	}
}

// Syncer follows the node.
type Syncer struct {
	node  Node
	index Index
	cfg   Config
	log   *slog.Logger
	m     *Metrics

	mu        sync.Mutex
	state     State
	rate      syncRate // blocks connected per second, for State
	listeners []func(BlockEvent)

	// wake starts a pass at once (Wake, and the node's block signals).
	wake chan struct{}

	// lastFetchStarved is how long the last parallel catch-up waited for
	// blocks (for the bulk summary log).
	lastFetchStarved time.Duration

	// reorgBase is the tip before the first block of the current reorg was
	// disconnected. Nodes that answer RPCs half-way through a reorg (btcd
	// disconnects one block at a time) show it as a series of shallow
	// reorgs; the window limit applies to their sum. Cleared once in sync.
	reorgBase *db.Tip
}

// diskFullRetry is how often a sync paused by a full disk checks again.
const diskFullRetry = time.Second

// State is the sync status shown by the API and health checks.
type State struct {
	InitialSync bool // a catch-up from far behind is running
	InSync      bool // the last pass ended at the node's tip
	// ReachedTip latches the first InSync: the initial sync is done (a
	// fast chain may clear InSync again within milliseconds).
	ReachedTip    bool
	BestHeight    uint32 // index tip height
	BestHash      bchain.Hash
	HasTip        bool      // false while the index is empty
	NodeHeight    uint32    // node tip height at the last check
	LastBlockTime time.Time // when the last block was connected
	Err           string    // why sync is stopped or failing, if it is
	// BlocksPerSecond is the connect rate over the last minute (rate.go).
	BlocksPerSecond float64
}

// New returns a worker; call Run (or Sync) to start it.
func New(node Node, index Index, cfg Config, log *slog.Logger, m *Metrics) *Syncer {
	cfg.defaults()
	s := &Syncer{node: node, index: index, cfg: cfg, log: log.With("subsystem", "sync"), m: m.get(), wake: make(chan struct{}, 1)}
	if tip, ok, err := index.Tip(); err == nil && ok {
		s.state.BestHeight, s.state.BestHash, s.state.HasTip = tip.Height, tip.Hash, true
		// Until a block is connected, the best estimate of the last sync is
		// the tip block's own time.
		if t, err := index.BlockTime(tip.Height); err == nil {
			s.state.LastBlockTime = time.Unix(t, 0).UTC()
		}
	}
	return s
}

// Wake makes Run start a pass (and its AfterSync) at once instead of at
// the next poll; wakes before that pass collapse into it.
func (s *Syncer) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// State returns a copy of the current status.
func (s *Syncer) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state
	st.BlocksPerSecond = s.rate.perSecond(time.Now())
	return st
}

// BlockEvent tells listeners how the index tip moved.
type BlockEvent struct {
	Tip    db.Tip
	HasTip bool
	// Connected is the block just connected on its own (steady state);
	// nil when a block was disconnected or a bulk round committed.
	Connected *bchain.Block
	// Disconnected is set when the previous tip was undone (reorg or rollback).
	Disconnected bool
}

// OnBlock registers fn to be called after each connected or disconnected
// block, and after each committed bulk round. fn runs on the sync worker's
// goroutine and must not block.
func (s *Syncer) OnBlock(fn func(BlockEvent)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listeners = append(s.listeners, fn)
}

func (s *Syncer) update(f func(*State)) {
	s.mu.Lock()
	f(&s.state)
	s.mu.Unlock()
}

func (s *Syncer) tipChanged(ev BlockEvent) {
	tip, hasTip := ev.Tip, ev.HasTip
	s.mu.Lock()
	s.state.BestHeight, s.state.BestHash, s.state.HasTip = tip.Height, tip.Hash, hasTip
	s.state.LastBlockTime = time.Now()
	s.rate.add(s.state.LastBlockTime, tip.Height)
	listeners, nodeHeight := s.listeners, s.state.NodeHeight
	s.mu.Unlock()
	s.m.bestHeight.Set(float64(tip.Height))
	s.m.lag(tip.Height, hasTip, nodeHeight)
	for _, fn := range listeners {
		fn(ev)
	}
}

// Run keeps the index at the node's tip until ctx ends. Signals from
// notifier (may be nil) wake it at once; bursts collapse into one pass, and
// it polls every PollInterval anyway. Node failures are retried with
// backoff; it returns early only for a reorg deeper than the rollback window
// or a damaged index, leaving the index as it was.
func (s *Syncer) Run(ctx context.Context, notifier bchain.BlockNotifier) error {
	signal, wake := s.Wake, s.wake
	if notifier != nil {
		go func() {
			if err := notifier.Run(ctx, signal); err != nil {
				s.log.Error("block notifications stopped, polling only", "err", err)
			}
		}()
	}
	poll := time.NewTicker(s.cfg.PollInterval)
	defer poll.Stop()
	backoff := time.Second
	diskFull := false // logged once per episode
	for {
		err := s.pass(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var wait <-chan time.Time
		switch {
		case err == nil:
			if diskFull {
				s.log.Info("index writes resumed: there is space on the disk again")
				diskFull = false
			}
			backoff = time.Second
			s.update(func(st *State) { st.Err = "" })
			if s.cfg.AfterSync != nil {
				if err := s.cfg.AfterSync(ctx); err != nil && ctx.Err() == nil {
					s.log.Warn("after-sync work failed, will retry", "err", err)
				}
			}
			wait = poll.C
		case isFatal(err):
			s.update(func(st *State) { st.Err = err.Error(); st.InSync = false })
			s.log.Error("sync stopped", "err", err)
			return err
		case errors.Is(err, db.ErrDiskFull):
			// Nothing was written; reads go on. Space may come back at
			// any moment (an operator frees some), so check often.
			s.m.errors.Inc()
			s.update(func(st *State) { st.Err = err.Error(); st.InSync = false })
			if !diskFull {
				s.log.Error("index writes paused: no space left on device; reads are still served, sync resumes once there is space", "err", err)
			}
			diskFull = true
			wait = time.After(diskFullRetry)
		default:
			s.m.errors.Inc()
			s.update(func(st *State) { st.Err = err.Error(); st.InSync = false })
			s.log.Warn("sync failed, retrying", "err", err, "retry_in", backoff)
			wait = time.After(backoff)
			backoff = min(backoff*2, 10*time.Second)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		case <-wait:
		}
	}
}

// pass is one Sync, unless the disk is already known to be full.
func (s *Syncer) pass(ctx context.Context) error {
	if s.cfg.CheckSpace != nil {
		if err := s.cfg.CheckSpace(); err != nil {
			return err
		}
	}
	return s.Sync(ctx)
}

// isFatal tells errors that retrying cannot fix.
func isFatal(err error) bool {
	return errors.Is(err, ErrReorgTooDeep) || errors.Is(err, db.ErrCorrupt) || errors.Is(err, db.ErrMissingPrevout)
}

// Sync brings the index to the node's current tip, undoing any blocks the
// node no longer has on its active chain.
func (s *Syncer) Sync(ctx context.Context) error {
	for {
		nodeHeight, nodeHash, err := s.node.BestBlock(ctx)
		if err != nil {
			return fmt.Errorf("node tip: %w", err)
		}
		s.m.nodeHeight.Set(float64(nodeHeight))
		s.update(func(st *State) { st.NodeHeight = nodeHeight })
		tip, hasTip, err := s.index.Tip()
		if err != nil {
			return err
		}
		s.m.lag(tip.Height, hasTip, nodeHeight)
		if hasTip && tip.Hash == nodeHash {
			s.reorgBase = nil
			s.update(func(st *State) { st.InSync, st.ReachedTip, st.InitialSync = true, true, false })
			return nil
		}
		s.update(func(st *State) { st.InSync = false })
		if hasTip {
			onChain, err := s.onActiveChain(ctx, tip)
			if err != nil {
				return err
			}
			if !onChain {
				if nodeHeight < tip.Height {
					behind, err := s.nodeBehind(nodeHeight, nodeHash)
					if err != nil {
						return err
					}
					if behind {
						if why, err := s.nodeCatchingUp(tip, nodeHeight); err != nil || why != "" {
							if err != nil {
								return err
							}
							return fmt.Errorf("%w: node is at block %d, behind the index at %d (%s); waiting for it to catch up",
								bchain.ErrNodeUnavailable, nodeHeight, tip.Height, why)
						}
					}
					settled, err := s.nodeSettled(ctx, nodeHash)
					if err != nil {
						return err
					}
					if !settled {
						continue
					}
				}
				if err := s.unwindToFork(ctx, tip); err != nil {
					return err
				}
				continue
			}
		}
		from := uint32(0)
		if hasTip {
			from = tip.Height + 1
		}
		if from > nodeHeight {
			continue // the node moved back; the reorg check above handles it
		}
		err = s.catchUp(ctx, from, nodeHeight)
		if errors.Is(err, db.ErrNotNextBlock) {
			s.log.Info("chain changed while syncing, rechecking", "err", err)
			continue
		}
		if err != nil {
			return err
		}
	}
}

// onActiveChain reports whether the index tip is on the node's active chain.
func (s *Syncer) onActiveChain(ctx context.Context, tip db.Tip) (bool, error) {
	h, err := s.node.BlockHash(ctx, tip.Height)
	if errors.Is(err, bchain.ErrBlockNotFound) {
		return false, nil // the node's chain is now shorter than ours
	}
	if err != nil {
		return false, err
	}
	return h == tip.Hash, nil
}

// unwindToFork disconnects blocks until the index tip is on the node's
// active chain, refusing up front if the fork is below the rollback window.
func (s *Syncer) unwindToFork(ctx context.Context, tip db.Tip) error {
	if s.reorgBase == nil {
		base := tip
		s.reorgBase = &base
	}
	fork, err := s.findFork(ctx, tip)
	if err != nil {
		return err
	}
	depth := tip.Height - fork
	s.log.Warn("reorg detected", "tip", tip.Height, "fork", fork, "depth", depth)
	return s.disconnectDownTo(ctx, fork, tip)
}

// findFork returns the highest height where the index and the node agree,
// refusing forks more than the rollback window below the reorg's base.
func (s *Syncer) findFork(ctx context.Context, tip db.Tip) (uint32, error) {
	window := s.index.Window()
	base := tip.Height
	if s.reorgBase != nil && s.reorgBase.Height > base {
		base = s.reorgBase.Height
	}
	for h := tip.Height; ; h-- {
		if base-h > window {
			return 0, fmt.Errorf("%w: the node's chain differs from the index at all of the last %d blocks (index tip %d, now at %d); to roll back further use -rollback=<height> (needs the node to still hold the orphaned blocks) or resync into an empty -datadir",
				ErrReorgTooDeep, window, base, tip.Height)
		}
		ours, ok, err := s.index.BlockHash(h)
		if err != nil {
			return 0, err
		}
		if !ok {
			return 0, fmt.Errorf("%w: no indexed block at height %d below the tip", db.ErrCorrupt, h)
		}
		theirs, err := s.node.BlockHash(ctx, h)
		if err != nil && !errors.Is(err, bchain.ErrBlockNotFound) {
			return 0, err
		}
		if err == nil && theirs == ours {
			return h, nil
		}
		if h == 0 {
			return 0, fmt.Errorf("%w: the node's genesis block differs from the index's; wrong network?", ErrReorgTooDeep)
		}
	}
}

// disconnectDownTo disconnects blocks above height `to`.
func (s *Syncer) disconnectDownTo(ctx context.Context, to uint32, tip db.Tip) error {
	refill := func(height uint32, hash bchain.Hash) (*bchain.Block, error) {
		return s.node.Block(ctx, hash, height)
	}
	for tip.Height > to {
		if err := ctx.Err(); err != nil {
			return err
		}
		newTip, ok, err := s.index.DisconnectTip(refill)
		if err != nil {
			return fmt.Errorf("disconnect block %d: %w", tip.Height, err)
		}
		s.m.disconnected.Inc()
		s.log.Info("disconnected block", "height", tip.Height, "hash", tip.Hash)
		s.tipChanged(BlockEvent{Tip: newTip, HasTip: ok, Disconnected: true})
		tip = newTip
	}
	return nil
}

// Rollback disconnects blocks until height is the tip (-rollback). Unlike
// reorg handling it is not limited to the rollback window: each block leaving
// the index is replaced at the bottom of the window by the node's copy, so it
// works as deep as the node still has the blocks.
func (s *Syncer) Rollback(ctx context.Context, height uint32) error {
	tip, ok, err := s.index.Tip()
	if err != nil {
		return err
	}
	if !ok || height > tip.Height {
		return fmt.Errorf("cannot roll back to %d: the index tip is %d", height, tip.Height)
	}
	s.log.Warn("rolling back", "from", tip.Height, "to", height)
	return s.disconnectDownTo(ctx, height, tip)
}

// catchUp connects blocks from..to: in bulk when far behind, else one by
// one, fetching in parallel when worth it.
func (s *Syncer) catchUp(ctx context.Context, from, to uint32) error {
	n := to - from + 1
	prog := newProgress(s.log, from, to, s.cfg.ProgressEvery)
	defer prog.finish()
	if bi, ok := s.index.(BulkIndex); ok && s.cfg.BulkThreshold > 0 && n >= s.cfg.BulkThreshold {
		return s.bulkCatchUp(ctx, bi, from, to, prog)
	}
	if n >= s.cfg.ParallelThreshold && s.cfg.Workers > 1 {
		s.update(func(st *State) { st.InitialSync = true })
		defer s.update(func(st *State) { st.InitialSync = false })
		if gi, ok := s.index.(GroupIndex); ok && s.cfg.BulkThreshold > 0 {
			return s.groupCatchUp(ctx, gi, from, to, prog)
		}
		return s.fetchParallel(ctx, from, to, func(blk *bchain.Block) error {
			if err := s.connect(blk); err != nil {
				return err
			}
			prog.block(blk)
			return nil
		})
	}
	for h := from; h <= to; h++ {
		blk, err := s.fetchOne(ctx, h)
		if err != nil {
			return err
		}
		if err := s.connect(blk); err != nil {
			return err
		}
		prog.block(blk)
	}
	return nil
}

// Shares of MemoryBudget in bulk mode: blocks fetched ahead, the UTXO
// cache, and a round's rows (the rest is headroom for transient buffers).
const (
	bulkFetchShare = 0.10
	bulkCacheShare = 0.25
	bulkRoundShare = 0.45
)

// bulkCatchUp loads from..to with a bulk session; the tip advances at each
// committed round. Whatever ends the session (done, error, reorg noticed by
// a parent mismatch), the blocks accepted so far are committed.
func (s *Syncer) bulkCatchUp(ctx context.Context, bi BulkIndex, from, to uint32, prog *progress) error {
	budget := float64(s.cfg.MemoryBudget)
	bulk, err := bi.NewBulk(db.BulkOptions{
		RoundBytes: int64(budget * bulkRoundShare), CacheBytes: int64(budget * bulkCacheShare), Workers: s.cfg.Workers,
		OnCommit: func(t db.Tip) { s.tipChanged(BlockEvent{Tip: t, HasTip: true}) },
	})
	if err != nil {
		return err
	}
	s.update(func(st *State) { st.InitialSync = true })
	defer s.update(func(st *State) { st.InitialSync = false })
	if s.cfg.OnBulk != nil {
		s.cfg.OnBulk(true)
		defer s.cfg.OnBulk(false)
	}
	s.log.Info("bulk sync", "from", from, "to", to, "memory_budget_mb", s.cfg.MemoryBudget>>20)
	err = s.fetchParallelWithin(ctx, from, to, int64(budget*bulkFetchShare), func(blk *bchain.Block) error {
		if err := bulk.ConnectBlock(blk); err != nil {
			return err
		}
		s.m.connected.Inc()
		s.m.txs.Add(float64(blk.TxCount()))
		prog.block(blk)
		return nil
	}, nil)
	stats, ferr := bulk.Finish()
	if err == nil && ferr == nil && stats.CompactAfter() {
		bi.CompactInBackground()
	}
	s.log.Info("bulk sync finished", "rounds", stats.Rounds, "blocks", stats.Blocks, "txs", stats.Txs, "rows", stats.Rows,
		"cache_hits", stats.CacheHits, "cache_misses", stats.CacheMisses,
		"balance_hits", stats.BalanceHits, "balance_new", stats.BalanceNew, "balance_merged", stats.BalanceMerged, "flush_time", stats.FlushTime.Round(time.Millisecond).String(),
		"waited_for_flush", stats.FlushWait.Round(time.Millisecond).String(), "waited_for_blocks", s.lastFetchStarved.Round(time.Millisecond).String())
	return errors.Join(err, ferr)
}

func (s *Syncer) connect(blk *bchain.Block) error {
	if err := s.index.ConnectBlock(blk); err != nil {
		return err
	}
	s.m.connected.Inc()
	s.m.txs.Add(float64(blk.TxCount()))
	s.tipChanged(BlockEvent{Tip: db.Tip{Height: blk.Height, Hash: blk.Hash}, HasTip: true, Connected: blk})
	return nil
}
