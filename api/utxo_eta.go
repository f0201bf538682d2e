package api

import (
	"context"
	"math/big"
	"sort"
	"sync"
	"time"

	"github.com/openexplorer/blockbook/db"
)

// Confirmation ETAs of pending txs, computed as Blockbook's do: from the
// mempool's size, the tx's fee rate against the node's (conservative)
// estimates, and the mean block period of the last blocks.

const (
	// etaFewPending: with fewer pending txs the next block takes them all
	// (estimates say little then), so the ETA is one block.
	etaFewPending = 32
	// avgBlockPeriodSample is how many block intervals the mean spans.
	avgBlockPeriodSample = 100
	// etaFeeTTL is how long a fee estimate is reused.
	etaFeeTTL = 10 * time.Second
)

// etaFees caches the estimates the ETAs compare with, per target.
type etaFees struct {
	mu    sync.Mutex
	rates map[int]etaFee
}

type etaFee struct {
	rate int64
	at   time.Time
}

// rate returns the conservative estimate for blocks (satoshi per 1000
// vbytes), 0 when the node gives none, as Blockbook reads a failed one.
func (s *UtxoService) etaRate(ctx context.Context, blocks int) int64 {
	s.eta.mu.Lock()
	defer s.eta.mu.Unlock()
	if f, ok := s.eta.rates[blocks]; ok && time.Since(f.at) < etaFeeTTL {
		return f.rate
	}
	rate, err := s.estimateFee(ctx, s.backend.Fees, blocks, true)
	if err != nil {
		return 0
	}
	if s.eta.rates == nil {
		s.eta.rates = make(map[int]etaFee)
	}
	s.eta.rates[blocks] = etaFee{rate, time.Now()}
	return rate
}

// confirmationETA fills a pending tx's confirmationETABlocks and
// confirmationETASeconds. With few pending txs it is the next block;
// otherwise the smallest target (1 to 7, else 7 to 69 blocks, found by
// bisection as Blockbook does) whose estimate the tx's fee rate meets.
// A confirmed tx, one without a known fee, or one paying no fee gets none.
func (s *UtxoService) confirmationETA(ctx context.Context, v *view, out *Tx) {
	if out.BlockHeight >= 0 || out.Fees == nil || s.cfg.Mempool == nil || s.backend.Fees == nil {
		return
	}
	var blocks int
	if s.cfg.Mempool.Status().Size < etaFewPending {
		blocks = 1
	} else {
		size := int64(out.VSize)
		if size <= 0 {
			size = int64(out.Size)
		}
		if size <= 0 {
			return
		}
		perKB := 1000 * (*big.Int)(out.Fees).Int64() / size
		if perKB <= 0 {
			return
		}
		blocks = etaBlocks(perKB, func(b int) int64 { return s.etaRate(ctx, b) })
	}
	out.ConfirmationETABlocks = uint32(blocks)
	out.ConfirmationETASeconds = int64(blocks) * s.avgBlockPeriod(v)
}

// avgBlockPeriod is the mean interval of the last avgBlockPeriodSample
// blocks in whole seconds (Blockbook's measure), 0 on a shorter chain.
func (s *UtxoService) avgBlockPeriod(v *view) int64 {
	if !v.hasTip || v.tip.Height < avgBlockPeriodSample+1 {
		return 0
	}
	last, err := db.ReadBlockMeta(v.snap, v.tip.Height)
	if err != nil || last == nil {
		return 0
	}
	first, err := db.ReadBlockMeta(v.snap, v.tip.Height-avgBlockPeriodSample-1)
	if err != nil || first == nil || last.Time < first.Time {
		return 0
	}
	return (last.Time - first.Time) / avgBlockPeriodSample
}

// etaBlocks is the smallest target whose estimate (rate, falling with the
// target) a fee rate of perKB meets, found by bisection over 1 to 7 blocks
// when the 7-block estimate is met, else over 7 to 69 (70 when none is).
func etaBlocks(perKB int64, rate func(blocks int) int64) int {
	if rate(7) <= perKB {
		return sort.Search(7, func(i int) bool { return rate(i+1) <= perKB }) + 1
	}
	return sort.Search(63, func(i int) bool { return rate(i+7) <= perKB }) + 7
}
