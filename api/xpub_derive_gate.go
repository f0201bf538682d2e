package api

import (
	"container/heap"
	"context"
	"sync"
)

// deriveChunk is the most addresses one derivation slot is held for: a
// gap-10,000 scan takes the slot about 40 times, letting smaller accounts
// in between.
const deriveChunk = 256

// deriveGate hands out the derivation slots, least attained service
// first: a waiter whose account already has fewer derived addresses goes
// before one with more, arrival order breaking ties. So a new gap-20
// account never waits behind another client's large scans more than the
// chunks already running (it waited 13.8 s behind 30 of them, issue 47).
type deriveGate struct {
	mu      sync.Mutex
	free    int
	seq     uint64
	waiting deriveQueue
}

func newDeriveGate(slots int) *deriveGate { return &deriveGate{free: slots} }

type deriveWaiter struct {
	done  int    // addresses the account already has: the priority
	seq   uint64 // arrival
	ready chan struct{}
	index int // in the heap; -1 once granted
}

// acquire waits for a slot; done is how many addresses the account has.
func (g *deriveGate) acquire(ctx context.Context, done int) error {
	g.mu.Lock()
	if g.free > 0 && g.waiting.Len() == 0 {
		g.free--
		g.mu.Unlock()
		return nil
	}
	g.seq++
	w := &deriveWaiter{done: done, seq: g.seq, ready: make(chan struct{})}
	heap.Push(&g.waiting, w)
	g.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		g.mu.Lock()
		defer g.mu.Unlock()
		if w.index < 0 { // granted meanwhile: pass it on
			g.releaseLocked()
		} else {
			heap.Remove(&g.waiting, w.index)
		}
		return ctx.Err()
	}
}

func (g *deriveGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.releaseLocked()
}

func (g *deriveGate) releaseLocked() {
	if g.waiting.Len() == 0 {
		g.free++
		return
	}
	w := heap.Pop(&g.waiting).(*deriveWaiter)
	w.index = -1
	close(w.ready)
}

// waiters is the number of requests waiting for a slot.
func (g *deriveGate) waiters() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.waiting.Len()
}

// deriveQueue is a heap of waiters, fewest derived addresses first.
type deriveQueue []*deriveWaiter

func (q deriveQueue) Len() int { return len(q) }
func (q deriveQueue) Less(i, j int) bool {
	if q[i].done != q[j].done {
		return q[i].done < q[j].done
	}
	return q[i].seq < q[j].seq
}
func (q deriveQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}
func (q *deriveQueue) Push(x any) {
	w := x.(*deriveWaiter)
	w.index = len(*q)
	*q = append(*q, w)
}
func (q *deriveQueue) Pop() any {
	old := *q
	w := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	return w
}
