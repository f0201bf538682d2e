package db

import (
	"fmt"
	"runtime"
	"time"

	"github.com/openexplorer/blockbook/bchain"
)

// BulkOptions size a bulk session.
type BulkOptions struct {
	// RoundBytes is the memory of accumulated rows that ends a round.
	RoundBytes int64
	// CacheBytes bounds the UTXO cache.
	CacheBytes int64
	// Workers sort and write the column families' files in parallel.
	Workers int
	// OnCommit is called with the new tip after each round is committed.
	OnCommit func(Tip)
}

// BulkLoader connects many blocks fast: it computes each block's rows with
// the same pure step as ConnectBlock (so the result is byte-identical),
// accumulates them in memory, and writes them as sorted SST files ingested
// with the crash-safe protocol of ingest.go. Blocks must come in height
// order from one goroutine.
type BulkLoader struct {
	x     *UtxoIndex
	opts  BulkOptions
	cache *utxoCache
	src   *bulkPrevouts
	round *round

	tip, committed       Tip
	hasTip, hasCommitted bool
	stats                BulkStats
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
	FlushTime   time.Duration // sorting, writing, ingesting
}

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
	tip, ok, err := ReadTip(x.db)
	if err != nil {
		return nil, err
	}
	cache := newUTXOCache(opts.CacheBytes)
	l := &BulkLoader{x: x, opts: opts, cache: cache, tip: tip, hasTip: ok, committed: tip, hasCommitted: ok,
		src: &bulkPrevouts{cache: cache, index: newIndexPrevouts(x.db)}}
	l.newRound()
	return l, nil
}

func (l *BulkLoader) newRound() {
	from := uint32(0)
	if l.hasTip {
		from = l.tip.Height + 1
	}
	l.round = newRound(from, l.x.keep)
	// The per-block memo of the index reader must not grow for a whole round.
	l.src.index = newIndexPrevouts(l.x.db)
}

// ConnectBlock adds a block; it must extend the last one added.
func (l *BulkLoader) ConnectBlock(blk *bchain.Block) error {
	if l.hasTip && (blk.Height != l.tip.Height+1 || blk.Prev != l.tip.Hash) {
		return fmt.Errorf("%w: block %d %s (parent %s), bulk tip %d %s", ErrNotNextBlock, blk.Height, blk.Hash, blk.Prev, l.tip.Height, l.tip.Hash)
	}
	if !l.hasTip && blk.Height != 0 {
		return fmt.Errorf("%w: empty index starts at block 0, got %d", ErrNotNextBlock, blk.Height)
	}
	ib, err := l.x.resolve(l.src, blk)
	if err != nil {
		return err
	}
	l.cache.record(ib)
	l.round.add(blk.Height, blk.Hash, utxoRows(ib))
	l.tip, l.hasTip = Tip{Height: blk.Height, Hash: blk.Hash}, true
	l.stats.Blocks++
	l.stats.Txs += len(blk.Txs)
	if l.round.bytes()+l.cache.uncommittedBytes() >= l.opts.RoundBytes {
		return l.flush()
	}
	return nil
}

// Finish commits the blocks added since the last round. The loader can be
// used again afterwards.
func (l *BulkLoader) Finish() (BulkStats, error) {
	err := l.flush()
	l.stats.CacheHits, l.stats.CacheMisses = l.cache.hits, l.cache.misses
	return l.stats, err
}

// Tip returns the last committed block.
func (l *BulkLoader) Tip() (Tip, bool) { return l.committed, l.hasCommitted }

// flush ingests the current round with the crash-safe protocol.
func (l *BulkLoader) flush() error {
	r := l.round
	if r.blocks == 0 {
		return nil
	}
	start := time.Now()
	if err := r.finalRows(l.x.db, l.committed.Height, l.hasCommitted); err != nil {
		return err
	}
	files, err := r.writeFiles(l.x.db, l.opts.Workers)
	if err != nil {
		return err
	}
	br := &BulkRound{From: r.from, To: r.to, TipHash: r.toHash, Files: files}
	if err := l.x.db.commitRound(br); err != nil {
		return err
	}
	l.stats.Rounds++
	l.stats.Rows += r.rowsCount
	l.stats.FlushTime += time.Since(start)
	l.committed, l.hasCommitted = Tip{Height: r.to, Hash: r.toHash}, true
	l.x.log.Info("bulk round committed", "from", r.from, "to", r.to, "blocks", r.blocks, "rows", r.rowsCount,
		"took", time.Since(start).Round(time.Millisecond).String())
	l.cache.rotate()
	l.newRound()
	if l.opts.OnCommit != nil {
		l.opts.OnCommit(l.committed)
	}
	return nil
}
