package db

import (
	"fmt"
	"runtime"
	"slices"
	"time"

	"github.com/openexplorer/blockbook/bchain"
)

// BulkOptions size a bulk session.
type BulkOptions struct {
	// RoundBytes is the memory of accumulated rows that ends a round.
	RoundBytes int64
	// CacheBytes bounds the caches: 3/4 for unspent outputs, 1/4 for the
	// balances written by the session (of which a quarter, on an empty
	// index, for a filter of the addresses written).
	CacheBytes int64
	// Workers sort and write the column families' files in parallel.
	Workers int
	// OnCommit is called with the new tip after each round is committed.
	OnCommit func(Tip)
}

// bulkWriteOnly are the families with overlapping keys that a bulk load
// writes but never reads (it reads txAddresses for prevouts; balances it
// does not know it writes as merge operands). Their compaction waits until
// the load ends: compacting them during it rewrote each family's lower
// level every few rounds, and the compaction after the load
// (CompactInBackground) rewrites them once more anyway.
// The enabled optional indexes' families join them (writeOnly), except
// those an index reads while connecting (OwnRowsReader).
var bulkWriteOnly = []CF{CFAddresses, CFAddressBalance, CFAddressUtxos, CFSpends, CFBlockTxs, CFBlockFilter}

// bulkReadAtRandom are the families a bulk load reads a row at a time at
// random places: txAddresses, for the prevouts the UTXO cache lacks. Their
// new files get small blocks while the load runs, from its second round
// (LoadTuning.SmallBlocks).
var bulkReadAtRandom = []CF{CFTxAddresses}

// BulkLoader connects many blocks fast: it computes each block's rows with
// the same pure step as ConnectBlock (so the index reads byte-identical;
// balances it does not know are merge operands until compacted),
// accumulates them in memory, and writes them as sorted runs (SST files on
// RocksDB) ingested with the crash-safe protocol of ingest.go. While one
// round is sorted, written and ingested in the background, the next is
// built; rounds are committed strictly in order. Blocks must come in height
// order from one goroutine.
type BulkLoader struct {
	x        *UtxoIndex
	opts     BulkOptions
	cache    *utxoCache
	balances *balanceCache // used by the flushes only
	round    *round

	tip, committed       Tip
	hasTip, hasCommitted bool
	stats                BulkStats

	// tuned: the index is tuned for the load (DB.tuneForLoad) until Finish;
	// smallBlocks: bulkReadAtRandom have small blocks (LoadTuning.SmallBlocks).
	tuned, smallBlocks bool

	flushing  chan flushResult // the round being flushed, nil if none
	flushErr  error            // a failed flush stops the session
	flushRows int
}

type flushResult struct {
	tip  Tip
	took time.Duration
	err  error
}

// Bulk is a bulk session as the sync worker drives it.
type Bulk interface {
	ConnectBlock(*bchain.Block) error
	Finish() (BulkStats, error)
}

var _ Bulk = (*BulkLoader)(nil)

// NewBulk starts a bulk session (see NewBulkLoader).
func (x *UtxoIndex) NewBulk(opts BulkOptions) (Bulk, error) { return x.NewBulkLoader(opts) }

// BulkStats describe a finished bulk session.
type BulkStats struct {
	Rounds      int
	Blocks, Txs int
	Rows        int
	CacheHits   int64
	CacheMisses int64
	FlushTime   time.Duration // sorting, writing, ingesting (in the background)
	FlushWait   time.Duration // time block building waited for a flush to finish
	// The balances of the rounds: found in the balance cache, known to be
	// new (the filter of written addresses), or unknown and written as
	// merge operands.
	BalanceHits, BalanceNew, BalanceMerged int64
	// Tuned: a round was flushed with the index tuned for a load
	// (DB.tuneForLoad), whose runs and compactions the compaction after
	// the session must rewrite. A session of one round is not tuned.
	Tuned bool
}

// CompactAfter reports whether the index needs a compaction once a session
// of these stats is over (DB.CompactInBackground): one of a single round
// wrote each family's rows as one sorted file (in the last level, for an
// empty family), and the loader gives no family small blocks until its
// second round (startFlush). A session tuned for a load wrote files to be
// rewritten, even if its first round, flushed for want of memory, was its
// last one after all. Every session of more than one round is tuned (its
// first round was not its last), so Tuned says it all.
func (s BulkStats) CompactAfter() bool { return s.Tuned }

// NewBulkLoader starts a bulk session at the index's current tip.
func (x *UtxoIndex) NewBulkLoader(opts BulkOptions) (*BulkLoader, error) {
	if opts.RoundBytes <= 0 {
		opts.RoundBytes = 128 << 20
	}
	if opts.CacheBytes <= 0 {
		opts.CacheBytes = 128 << 20
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	if err := x.db.resumePending(); err != nil {
		return nil, err
	}
	tip, ok, err := ReadTip(x.db)
	if err != nil {
		return nil, err
	}
	cache := newUTXOCache(opts.CacheBytes * 3 / 4)
	l := &BulkLoader{x: x, opts: opts, cache: cache, balances: newBalanceCache(opts.CacheBytes/4, !ok),
		tip: tip, hasTip: ok, committed: tip, hasCommitted: ok}
	l.newRound()
	return l, nil
}

func (l *BulkLoader) newRound() {
	from := uint32(0)
	if l.hasTip {
		from = l.tip.Height + 1
	}
	l.round = newRound(from, l.x.keep, l.round)
	l.round.opt = &l.x.opt
}

// retune tunes the index as l.tuned and l.smallBlocks say: while tuned,
// the write-only families defer their compaction and every family gets
// the load's compression, and with smallBlocks bulkReadAtRandom get small
// blocks; untuned, every family its usual options. One engine call a
// family, which changes only what differs (each RocksDB SetOptions
// rewrites the OPTIONS file).
func (l *BulkLoader) retune() {
	writeOnly := l.writeOnly()
	l.x.db.tuneForLoad(func(cf CF) LoadTuning {
		if !l.tuned {
			return LoadTuning{}
		}
		return LoadTuning{DeferCompaction: slices.Contains(writeOnly, cf), Compression: true,
			SmallBlocks: l.smallBlocks && slices.Contains(bulkReadAtRandom, cf)}
	})
}

// writeOnly lists the families the load writes but never reads: the
// core's and those of the enabled optional indexes that do not read their
// own rows.
func (l *BulkLoader) writeOnly() []CF {
	return append(slices.Clone(bulkWriteOnly), l.x.opt.writeOnlyCFs()...)
}

// ConnectBlock adds a block; it must extend the last one added.
func (l *BulkLoader) ConnectBlock(blk *bchain.Block) error {
	if l.hasTip && (blk.Height != l.tip.Height+1 || blk.Prev != l.tip.Hash) {
		return fmt.Errorf("%w: block %d %s (parent %s), bulk tip %d %s", ErrNotNextBlock, blk.Height, blk.Hash, blk.Prev, l.tip.Height, l.tip.Hash)
	}
	if !l.hasTip && blk.Height != 0 {
		return fmt.Errorf("%w: empty index starts at block 0, got %d", ErrNotNextBlock, blk.Height)
	}
	ib, err := l.x.index(l.cache, blk)
	if err != nil {
		return err
	}
	l.cache.record(ib)
	rows := utxoRows(ib)
	if err := l.x.opt.connect(rows, blk, ib); err != nil {
		return err
	}
	l.round.add(blk.Height, blk.Hash, rows)
	l.tip, l.hasTip = Tip{Height: blk.Height, Hash: blk.Hash}, true
	l.stats.Blocks++
	l.stats.Txs += len(blk.Txs)
	// Two rounds can be in memory (one building, one flushing), so each
	// gets half of the budget; an optional index's memory for the round's
	// blocks (MemoryUser) counts with it.
	if l.round.bytes()+l.cache.current().bytes+l.x.opt.pendingBytes(l.round.from) >= l.opts.RoundBytes/2 {
		return l.startFlush(false)
	}
	return nil
}

// Finish commits the blocks added since the last round and waits until
// every round is ingested. The loader can be used again afterwards.
func (l *BulkLoader) Finish() (BulkStats, error) {
	err := l.startFlush(true)
	if werr := l.waitFlush(); err == nil {
		err = werr
	}
	if l.tuned || l.smallBlocks {
		l.tuned, l.smallBlocks = false, false
		l.retune()
	}
	l.stats.CacheHits, l.stats.CacheMisses = l.cache.hits, l.cache.misses
	l.stats.BalanceHits, l.stats.BalanceNew, l.stats.BalanceMerged = l.balances.hits, l.balances.skipped, l.balances.merged
	return l.stats, err
}

// Tip returns the last committed block.
func (l *BulkLoader) Tip() (Tip, bool) { return l.committed, l.hasCommitted }

// startFlush hands the current round to a background flush, after the
// previous one has finished (rounds commit in order, and a round's balances
// merge with the previous round's stored ones). last: no block follows in
// this session.
func (l *BulkLoader) startFlush(last bool) error {
	if err := l.waitFlush(); err != nil {
		return err
	}
	r := l.round
	if r.blocks == 0 {
		return nil
	}
	// A session whose first round is its last is not tuned: it has one
	// round, whose runs are written as they stay (CompactAfter).
	retune := false
	if !l.tuned && (!last || l.stats.Rounds > 0) {
		l.tuned, l.stats.Tuned, retune = true, true, true
	}
	// Small blocks from the second round on, in a session tuned (and so
	// compacted after it) by then: the first round's runs, which land in
	// the last level of empty families, share the family's table options,
	// which SetOptions changes in place. (A fresh load's first round reads
	// nothing from the index anyway.)
	if !l.smallBlocks && l.stats.Rounds > 0 {
		l.smallBlocks, retune = true, true
	}
	if retune {
		l.retune()
	}
	prev, hadPrev := l.committed, l.hasCommitted
	l.flushRows = r.rowsCount
	l.cache.rotate()
	l.newRound()
	done := make(chan flushResult, 1)
	l.flushing = done
	go func() {
		start := time.Now()
		tip, err := l.flush(r, prev, hadPrev)
		done <- flushResult{tip: tip, took: time.Since(start), err: err}
	}()
	return nil
}

// waitFlush waits for the background flush, if any, and takes its result.
func (l *BulkLoader) waitFlush() error {
	if l.flushErr != nil || l.flushing == nil {
		return l.flushErr
	}
	start := time.Now()
	res := <-l.flushing
	l.stats.FlushWait += time.Since(start)
	l.flushing = nil
	if res.err != nil {
		l.flushErr = res.err
		return res.err
	}
	l.committed, l.hasCommitted = res.tip, true
	l.cache.commitOldest()
	l.x.db.releaseFreeMemory()
	l.stats.Rounds++
	l.stats.Rows += l.flushRows
	l.stats.FlushTime += res.took
	return nil
}

// flush ingests a round with the crash-safe protocol; it runs in the
// background and touches only the round and the database.
func (l *BulkLoader) flush(r *round, prev Tip, hadPrev bool) (Tip, error) {
	start := time.Now()
	if err := r.finalRows(l.balances, prev.Height, hadPrev); err != nil {
		return Tip{}, err
	}
	if n, ok := l.balances.filterRetired(); ok {
		l.x.log.Info("the filter of written addresses is full: from now on a round reads every balance its cache lacks (a larger -syncmemory keeps the filter longer)",
			"addresses", n, "height", r.to)
	}
	// The rows' memory bounds the size of the staged runs from above.
	if err := l.x.db.checkSpace(r.bytes()); err != nil {
		return Tip{}, err
	}
	files, err := r.writeFiles(l.x.db, l.opts.Workers)
	if err != nil {
		// Partial runs would hold the space a retry needs.
		if cerr := l.x.db.clearRuns(); cerr != nil {
			l.x.log.Warn("clearing the staged runs of a failed round", "err", cerr)
		}
		return Tip{}, err
	}
	br := &BulkRound{From: r.from, To: r.to, TipHash: r.toHash, Files: files}
	if err := l.x.db.commitRound(br); err != nil {
		return Tip{}, err
	}
	tip := Tip{Height: r.to, Hash: r.toHash}
	l.x.log.Info("bulk round committed", "from", r.from, "to", r.to, "blocks", r.blocks, "rows", r.rowsCount,
		"took", time.Since(start).Round(time.Millisecond).String())
	if l.opts.OnCommit != nil {
		l.opts.OnCommit(tip)
	}
	return tip, nil
}
