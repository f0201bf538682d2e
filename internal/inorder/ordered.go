// Package inorder renders queued jobs on several workers and delivers
// their results in the order the jobs were queued, so that a client of a
// notification hub never hears of tx B before tx A. Queuing never blocks:
// a full queue drops the job and counts it.
package inorder

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Queue holds jobs of type J rendered to results of type R.
type Queue[J, R any] struct {
	mu      sync.Mutex
	work    chan *item[J, R] // to the workers
	order   chan *item[J, R] // to the deliverer, in queued order
	dropped atomic.Uint64
}

type item[J, R any] struct {
	job  J
	res  R
	done chan struct{}
}

// New is a queue of at most size jobs (queued or rendered, not yet
// delivered).
func New[J, R any](size int) *Queue[J, R] {
	// The deliverer may hold one item taken from order that is still in
	// work (it waits for it to be rendered, or stops with it when Run
	// ends), so work has one slot more than order.
	return &Queue[J, R]{work: make(chan *item[J, R], size+1), order: make(chan *item[J, R], size)}
}

// Add queues j; false when the queue is full and j was dropped.
func (q *Queue[J, R]) Add(j J) bool {
	it := &item[J, R]{job: j, done: make(chan struct{})}
	q.mu.Lock()
	defer q.mu.Unlock()
	// Work holds at most one item more than order (New), so room in
	// order is room in work: neither send blocks, even after Run ended.
	select {
	case q.order <- it:
		q.work <- it
		return true
	default:
		q.dropped.Add(1)
		return false
	}
}

// Dropped is how many jobs Add dropped so far.
func (q *Queue[J, R]) Dropped() uint64 { return q.dropped.Load() }

// Run renders jobs on workers goroutines and delivers each result, in
// queued order, on one goroutine, until ctx ends.
func (q *Queue[J, R]) Run(ctx context.Context, workers int, render func(context.Context, J) R, deliver func(R)) {
	var wg sync.WaitGroup
	defer wg.Wait()
	for range workers {
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case it := <-q.work:
					it.res = render(ctx, it.job)
					close(it.done)
				}
			}
		})
	}
	for {
		select {
		case <-ctx.Done():
			return
		case it := <-q.order:
			select {
			case <-ctx.Done():
				return
			case <-it.done:
				deliver(it.res)
			}
		}
	}
}

// DropLog writes one line per Every at most for a run of drops, with
// their count, instead of one line per drop (a burst would flood the log).
type DropLog struct {
	Every time.Duration // 0: a minute
	mu    sync.Mutex
	last  time.Time
	n     int
}

// Note counts a drop and logs msg with the count when a line is due.
func (d *DropLog) Note(log *slog.Logger, msg string) {
	every := d.Every
	if every <= 0 {
		every = time.Minute
	}
	d.mu.Lock()
	d.n++
	n, now := d.n, time.Now()
	due := now.Sub(d.last) >= every
	if due {
		d.last, d.n = now, 0
	}
	d.mu.Unlock()
	if due {
		log.Warn(msg, "dropped", n, "per", every)
	}
}
