package syncer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/openexplorer/blockbook/bchain"
)

// RangeSource is a node that fetches runs of consecutive blocks (with
// everything Block returns) in a few batched requests: the Ethereum-type
// backend, whose blocks each need a block, a receipts and a trace request.
// Catch-up then hands each worker a run of heights instead of one.
type RangeSource interface {
	// BlockRange returns the blocks at heights from..to of the node's
	// active chain, as Block would; at most rangeMaxBlocks of them.
	BlockRange(ctx context.Context, from, to uint32) ([]*bchain.Block, error)
}

const (
	// rangeMaxBlocks caps a run (the Ethereum backend takes up to 100).
	rangeMaxBlocks = 64
	// rangeMaxBytes caps the estimated bytes of a run, so that one
	// batched answer (its JSON is held while it is decoded) stays small
	// for the node, the timeout and the process's peak memory.
	rangeMaxBytes = 4 << 20
	// maxAheadBlocks bounds the heights admitted but not yet connected
	// when fetching runs (blocks of empty chains weigh next to nothing, so
	// bytes alone would let the window grow without end).
	maxAheadBlocks = 1024
)

// rangeSpan is how many heights one run takes: a share of the budget such
// that every worker's runs in flight, and as many again ready to connect,
// fit in it.
func rangeSpan(budget int64, workers int, estimate int64) uint32 {
	per := min(budget/int64(2*max(workers, 1)*inflightPerWorker), rangeMaxBytes)
	return uint32(max(1, min(per/max(estimate, 1), rangeMaxBlocks)))
}

// blockBytes estimates the memory a fetched block holds: its serialized
// size, and for Ethereum-type blocks the receipts' logs and the internal
// transfers that come beside it.
func blockBytes(blk *bchain.Block) int64 {
	n := int64(blk.Size)
	if blk.Eth != nil {
		for i := range blk.Eth.Txs {
			tx := &blk.Eth.Txs[i]
			// The tx, receipt and trace: Go structs, and the JSON text of
			// the batched answer they were decoded from.
			n += 1024
			if tx.Receipt != nil {
				for _, l := range tx.Receipt.Logs {
					n += int64(len(l.Data)) + 32*int64(len(l.Topics)) + 64
				}
			}
			if tx.Internal != nil {
				n += 128 * int64(len(tx.Internal.Transfers)+len(tx.Internal.Contracts))
			}
		}
	}
	return n * decodedFactor
}

// fetchRange fetches and prepares the blocks from..to. A failed batch is
// retried block by block (a node may refuse large batches or time out on
// one), so a bad answer costs time, not the pass.
func (s *Syncer) fetchRange(ctx context.Context, rs RangeSource, from, to uint32) ([]*bchain.Block, error) {
	blks, err := rs.BlockRange(ctx, from, to)
	if err == nil && len(blks) != int(to-from+1) {
		err = fmt.Errorf("%w: asked for blocks %d..%d, got %d", bchain.ErrInvalidData, from, to, len(blks))
	}
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, bchain.ErrBlockNotFound) {
			return nil, err // cancelled, or the node's tip moved back: the pass rechecks
		}
		s.log.Warn("batched block fetch failed, fetching the blocks one by one", "from", from, "to", to, "err", err)
		s.m.errors.Inc()
		blks = make([]*bchain.Block, 0, to-from+1)
		for h := from; h <= to; h++ {
			blk, err := s.fetchBlock(ctx, h)
			if err != nil {
				return nil, err
			}
			blks = append(blks, blk)
		}
		return blks, nil
	}
	if p, ok := s.index.(BlockPreparer); ok {
		for _, blk := range blks {
			if err := p.PrepareBlock(ctx, blk); err != nil {
				return nil, err
			}
		}
	}
	return blks, nil
}

// fetchOne fetches and prepares the block at height: as a run of one from
// a RangeSource (two batched requests rather than four calls, which is
// what following a fast chain's tip costs), else block by block.
func (s *Syncer) fetchOne(ctx context.Context, height uint32) (*bchain.Block, error) {
	if rs, ok := s.node.(RangeSource); ok {
		blks, err := s.fetchRange(ctx, rs, height, height)
		if err != nil {
			return nil, err
		}
		return blks[0], nil
	}
	return s.fetchBlock(ctx, height)
}

// FetchOnly runs the catch-up's fetch pipeline over from..to (the same
// workers, runs, window and fallbacks as a sync with cfg) and hands each
// block to fn in height order, indexing nothing: the lower bound a sync
// is measured against (cmd/ethbench).
func FetchOnly(ctx context.Context, node Node, from, to uint32, cfg Config, log *slog.Logger, fn func(*bchain.Block) error) error {
	cfg.defaults()
	s := &Syncer{node: node, cfg: cfg, log: log, m: (*Metrics)(nil).get()}
	return s.fetchParallel(ctx, from, to, fn)
}
