// Package bytebudget counts the bytes a server holds for its clients
// against a limit shared by many of them (the Electrum server's queued
// answers, the mempool.space websocket's send queues).
package bytebudget

import (
	"sync"
	"sync/atomic"
)

// Budget counts bytes against a limit; waiters are woken when bytes are
// given back. A nil Budget admits everything.
type Budget struct {
	limit int64
	used  atomic.Int64
	mu    sync.Mutex
	freed chan struct{} // closed and replaced whenever bytes are given back
}

// New is a budget of limit bytes.
func New(limit int64) *Budget { return &Budget{limit: limit, freed: make(chan struct{})} }

// TryTake takes n bytes if they fit, or if alone (the caller holds
// nothing of this budget, so one bounded message may always pass).
func (b *Budget) TryTake(n int64, alone bool) bool {
	if b == nil {
		return true
	}
	for {
		u := b.used.Load()
		if u+n > b.limit && !alone {
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

// Wait returns a channel closed once bytes are given back.
func (b *Budget) Wait() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.freed
}

// Give gives back n bytes taken before.
func (b *Budget) Give(n int64) {
	if b == nil || n == 0 {
		return
	}
	b.used.Add(-n)
	b.mu.Lock()
	close(b.freed)
	b.freed = make(chan struct{})
	b.mu.Unlock()
}

// Used is the bytes held now.
func (b *Budget) Used() int64 {
	if b == nil {
		return 0
	}
	return b.used.Load()
}

// Limit is the budget's size.
func (b *Budget) Limit() int64 { return b.limit }
