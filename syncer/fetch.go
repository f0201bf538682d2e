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
	w := newFetchWindow(budget)
	jobs := make(chan uint32)
	var wg sync.WaitGroup
	for n := 0; n < s.cfg.Workers*inflightPerWorker; n++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for h := range jobs {
				blk, err := s.fetchBlock(ctx, h)
				w.fetched(h, blk, err)
			}
		}()
	}
	go w.admit(ctx, from, to, jobs)
	// Wake waiters when ctx ends so nothing sleeps forever on cond.
	stop := context.AfterFunc(ctx, w.wake)
	defer stop()

	var err error
	var starved time.Duration
	for h := from; ; h++ {
		r, ok, waited := w.next(ctx, h)
		starved += waited
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
		w.connected(h)
		if h == to {
			break
		}
	}
	s.lastFetchStarved = starved
	cancel()
	wg.Wait()
	return err
}

// fetchResult is one fetched block or why it could not be fetched.
type fetchResult struct {
	blk *bchain.Block
	err error
}

// fetchWindow is the bounded set of blocks between admission and connect:
// heights are admitted in order while the accounted bytes are under budget,
// fetched in any order, and connected in order.
type fetchWindow struct {
	mu       sync.Mutex
	cond     *sync.Cond
	budget   int64
	ready    map[uint32]fetchResult
	admitted map[uint32]int64 // bytes accounted for each admitted height
	inflight int64            // accounted bytes of admitted, unconnected blocks
	estimate int64            // running estimate of the next block's bytes
}

func newFetchWindow(budget int64) *fetchWindow {
	w := &fetchWindow{budget: budget, ready: map[uint32]fetchResult{}, admitted: map[uint32]int64{}, estimate: 1 << 20}
	w.cond = sync.NewCond(&w.mu)
	return w
}

// admit dispatches heights from..to in order while under budget.
func (w *fetchWindow) admit(ctx context.Context, from, to uint32, jobs chan<- uint32) {
	defer close(jobs)
	for h := from; h <= to; h++ {
		w.mu.Lock()
		for w.inflight >= w.budget && w.inflight > 0 && ctx.Err() == nil {
			w.cond.Wait()
		}
		w.inflight += w.estimate
		w.admitted[h] = w.estimate
		w.mu.Unlock()
		select {
		case jobs <- h:
		case <-ctx.Done():
			return
		}
		if h == to {
			return
		}
	}
}

// fetched records a worker's result, accounting the block's real size in
// place of the estimate it was admitted with.
func (w *fetchWindow) fetched(h uint32, blk *bchain.Block, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if blk != nil {
		actual := int64(blk.Size) * decodedFactor
		w.inflight += actual - w.admitted[h]
		w.admitted[h] = actual
		w.estimate = (w.estimate*7 + actual) / 8
	}
	w.ready[h] = fetchResult{blk: blk, err: err}
	w.cond.Broadcast()
}

// next waits for height h's result; ok is false when ctx ended first.
// waited is how long the connect side starved.
func (w *fetchWindow) next(ctx context.Context, h uint32) (r fetchResult, ok bool, waited time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r, ok = w.ready[h]
	if !ok {
		t0 := time.Now()
		for !ok && ctx.Err() == nil {
			w.cond.Wait()
			r, ok = w.ready[h]
		}
		waited = time.Since(t0)
	}
	delete(w.ready, h)
	return r, ok, waited
}

// connected releases height h's bytes for admission.
func (w *fetchWindow) connected(h uint32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.inflight -= w.admitted[h]
	delete(w.admitted, h)
	w.cond.Broadcast()
}

func (w *fetchWindow) wake() {
	w.mu.Lock()
	w.cond.Broadcast()
	w.mu.Unlock()
}
