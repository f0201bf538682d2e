package api

import (
	"context"
	"sync"
	"time"

	"github.com/openexplorer/blockbook/bchain"
)

// feeCacheMaxAge bounds how long an estimate is reused while the node's tip
// stays at one height (a stalled chain still gets fresh estimates).
const feeCacheMaxAge = 10 * time.Second

// feeCache answers repeated fee estimates from memory until the node's tip
// moves or feeCacheMaxAge passes, and joins concurrent calls for the same
// target into one node call. A node's estimator changes only when a block
// arrives, so the answers are the node's; without this, a burst of wallets
// asking for fees floods the node (the soak campaign saw btcd miss its
// liveness probe at about a hundred estimates a second). Errors are not
// kept: the next call asks the node again.
type feeCache struct {
	est bchain.FeeEstimator
	tip func() uint32 // the node's best height as the liveness probe last saw it
	now func() time.Time

	mu      sync.Mutex
	entries map[feeKey]*feeEntry // bounded: targets are checked before (CheckFeeTargets)
}

type feeKey struct {
	blocks       int
	conservative bool
}

// feeEntry is one node call; its fields are set before done is closed.
type feeEntry struct {
	done   chan struct{}
	rate   int64
	err    error
	height uint32
	at     time.Time
}

func newFeeCache(est bchain.FeeEstimator, tip func() uint32) *feeCache {
	return &feeCache{est: est, tip: tip, now: time.Now, entries: map[feeKey]*feeEntry{}}
}

func (c *feeCache) EstimateFee(ctx context.Context, blocks int, conservative bool) (int64, error) {
	k := feeKey{blocks, conservative}
	height := c.tip()
	c.mu.Lock()
	e := c.entries[k]
	if e != nil && !c.usable(e, height) {
		e = nil
	}
	if e == nil {
		e = &feeEntry{done: make(chan struct{}), height: height}
		c.entries[k] = e
		c.mu.Unlock()
		// The call serves every waiter, so one waiter's cancel must not end
		// it; the node client's own timeout bounds it.
		e.rate, e.err = c.est.EstimateFee(context.WithoutCancel(ctx), blocks, conservative)
		e.at = c.now()
		close(e.done)
		return e.rate, e.err
	}
	c.mu.Unlock()
	select {
	case <-e.done:
		return e.rate, e.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// usable tells whether e may answer at the node's current height: still in
// flight (join it), or done without error at this height and recent enough.
func (c *feeCache) usable(e *feeEntry, height uint32) bool {
	select {
	case <-e.done:
		return e.err == nil && e.height == height && c.now().Sub(e.at) <= feeCacheMaxAge
	default:
		return true
	}
}
