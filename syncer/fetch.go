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
	return s.fetchParallelWithin(ctx, from, to, s.cfg.MemoryBudget, connect, nil)
}

// fetchParallelWithin is fetchParallel with an explicit budget for blocks
// waiting to be connected; idle, if set, runs whenever the next block is
// not fetched yet, before the connect side waits for it.
func (s *Syncer) fetchParallelWithin(ctx context.Context, from, to uint32, budget int64, connect func(*bchain.Block) error, idle func() error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := newFetchWindow(budget)
	rs, ranges := s.node.(RangeSource)
	if ranges {
		// Runs of blocks come in batched requests; the window is bounded
		// by count as well as bytes.
		w.maxAhead = int64(maxAheadBlocks)
		w.span = func(estimate int64) uint32 { return rangeSpan(budget, s.cfg.Workers, estimate) }
	}
	jobs := make(chan fetchJob)
	var wg sync.WaitGroup
	for n := 0; n < s.cfg.Workers*inflightPerWorker; n++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				if !ranges {
					blk, err := s.fetchBlock(ctx, j.from)
					w.fetched(j.from, blk, err)
					continue
				}
				blks, err := s.fetchRange(ctx, rs, j.from, j.to)
				if err != nil {
					w.fetched(j.from, nil, err) // the connect loop stops there
					continue
				}
				for i, blk := range blks {
					w.fetched(j.from+uint32(i), blk, nil)
				}
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
		if idle != nil && !w.has(h) {
			if err = idle(); err != nil {
				break
			}
		}
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

// fetchJob is a run of heights one worker fetches (from == to without a
// RangeSource).
type fetchJob struct{ from, to uint32 }

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
	maxAhead int64 // admitted, unconnected heights at most (0: no count bound)
	// span, if set, is how many heights one job takes given the running
	// estimate of a block's bytes (nil: one).
	span     func(estimate int64) uint32
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

// admit dispatches heights from..to in order, in jobs of span heights,
// while under budget (and under maxAhead heights when set).
func (w *fetchWindow) admit(ctx context.Context, from, to uint32, jobs chan<- fetchJob) {
	defer close(jobs)
	for h := from; ; {
		w.mu.Lock()
		n := uint32(1)
		if w.span != nil {
			n = max(1, min(w.span(w.estimate), to-h+1))
			if w.maxAhead > 0 {
				n = uint32(min(int64(n), w.maxAhead))
			}
		}
		for w.full(int64(n)) && ctx.Err() == nil {
			w.cond.Wait()
		}
		for i := range n {
			w.inflight += w.estimate
			w.admitted[h+i] = w.estimate
		}
		w.mu.Unlock()
		select {
		case jobs <- fetchJob{from: h, to: h + n - 1}:
		case <-ctx.Done():
			return
		}
		if h+n-1 >= to {
			return
		}
		h += n
	}
}

// full reports whether admitting n more heights must wait; an empty window
// always admits, so the lowest block can always be fetched.
func (w *fetchWindow) full(n int64) bool {
	if len(w.admitted) == 0 {
		return false
	}
	return w.inflight >= w.budget || w.maxAhead > 0 && int64(len(w.admitted))+n > w.maxAhead
}

// fetched records a worker's result, accounting the block's real size in
// place of the estimate it was admitted with.
func (w *fetchWindow) fetched(h uint32, blk *bchain.Block, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if blk != nil {
		actual := blockBytes(blk)
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

// has reports whether height h's result is there.
func (w *fetchWindow) has(h uint32) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.ready[h]
	return ok
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
