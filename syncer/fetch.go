package syncer

import (
	"context"
	"sync"
	"time"

	"github.com/openexplorer/blockbook/bchain"
)

// inflightPerWorker is how many blocks each worker has requested from the
// node at a time: a worker decoding one block keeps the node busy with the
// next, so that neither waits for the other.
const inflightPerWorker = 2

// decodedFactor estimates the memory of a decoded block from its serialized
// size (Go structs, slices and the raw bytes they alias).
const decodedFactor = 3

// fetchParallel fetches and decodes blocks from..to with cfg.Workers workers
// and hands them to connect strictly in height order. Blocks waiting to be
// connected are bounded by cfg.MemoryBudget: heights are admitted in order
// only while the accounted bytes are under budget, and a worker never waits
// for budget after admission, so the lowest block always completes.
func (s *Syncer) fetchParallel(ctx context.Context, from, to uint32, connect func(*bchain.Block) error) error {
	return s.fetchParallelWithin(ctx, from, to, s.cfg.MemoryBudget, connect)
}

// fetchParallelWithin is fetchParallel with an explicit budget for blocks
// waiting to be connected.
func (s *Syncer) fetchParallelWithin(ctx context.Context, from, to uint32, budget int64, connect func(*bchain.Block) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	type result struct {
		blk *bchain.Block
		err error
	}
	var (
		mu       sync.Mutex
		cond     = sync.NewCond(&mu)
		ready    = map[uint32]result{}
		admitted = map[uint32]int64{}           // bytes accounted for each admitted height
		inflight int64                          // accounted bytes of admitted, unconnected blocks
		estimate int64                = 1 << 20 // running estimate of the next block's bytes
	)
	jobs := make(chan uint32)
	var wg sync.WaitGroup
	for w := 0; w < s.cfg.Workers*inflightPerWorker; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for h := range jobs {
				var r result
				r.blk, r.err = s.fetchBlock(ctx, h)
				mu.Lock()
				if r.blk != nil {
					actual := int64(r.blk.Size) * decodedFactor
					inflight += actual - admitted[h]
					admitted[h] = actual
					estimate = (estimate*7 + actual) / 8
				}
				ready[h] = r
				cond.Broadcast()
				mu.Unlock()
			}
		}()
	}
	// Admission: dispatch heights in order while under budget.
	go func() {
		defer close(jobs)
		for h := from; h <= to; h++ {
			mu.Lock()
			for inflight >= budget && inflight > 0 && ctx.Err() == nil {
				cond.Wait()
			}
			inflight += estimate
			admitted[h] = estimate
			mu.Unlock()
			select {
			case jobs <- h:
			case <-ctx.Done():
				return
			}
			if h == to {
				return
			}
		}
	}()
	// Wake waiters when ctx ends so nothing sleeps forever on cond.
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		cond.Broadcast()
		mu.Unlock()
	})
	defer stop()

	var err error
	var starved time.Duration
	defer func() { s.lastFetchStarved = starved }()
	for h := from; ; h++ {
		mu.Lock()
		r, ok := ready[h]
		if !ok {
			t0 := time.Now()
			for !ok && ctx.Err() == nil {
				cond.Wait()
				r, ok = ready[h]
			}
			starved += time.Since(t0)
		}
		delete(ready, h)
		mu.Unlock()
		if !ok {
			err = ctx.Err()
			break
		}
		if r.err != nil {
			err = r.err
			break
		}
		if err = connect(r.blk); err != nil {
			break
		}
		mu.Lock()
		inflight -= admitted[h]
		delete(admitted, h)
		cond.Broadcast()
		mu.Unlock()
		if h == to {
			break
		}
	}
	cancel()
	wg.Wait()
	return err
}
