package electrum

import (
	"sync"
	"sync/atomic"
)

// Byte bounds of what the server holds for clients (docs/operations.md,
// "Electrum server"): one call's or batch's answer, the answers queued to
// one connection, and those queued to all of them.
const (
	// DefaultMaxBatch is the most calls one batch may hold.
	DefaultMaxBatch = 1000
	// DefaultMaxAnswerBytes caps what one call or one batch may produce;
	// a history of DefaultMaxHistory txs (about 9 MB) still fits.
	DefaultMaxAnswerBytes = 16 << 20
	// DefaultMaxQueueBytes caps the answers and notifications queued to
	// one connection (one answer of any size is admitted to an empty
	// queue, so a bounded answer always goes out).
	DefaultMaxQueueBytes = 4 << 20
	// DefaultMaxQueuedBytes caps the bytes queued to all connections.
	DefaultMaxQueuedBytes = 64 << 20
)

// budget counts bytes against a limit; waiters are woken when bytes are
// given back. A nil budget admits everything.
type budget struct {
	limit int64
	used  atomic.Int64
	mu    sync.Mutex
	freed chan struct{} // closed and replaced whenever bytes are given back
}

func newBudget(limit int64) *budget { return &budget{limit: limit, freed: make(chan struct{})} }

// tryTake takes n bytes if they fit, or if nothing is held by the caller
// (alone: the caller holds nothing, so one bounded frame may always pass).
func (b *budget) tryTake(n int64, alone bool) bool {
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

// wait returns a channel closed once bytes are given back.
func (b *budget) wait() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.freed
}

func (b *budget) give(n int64) {
	b.used.Add(-n)
	b.mu.Lock()
	close(b.freed)
	b.freed = make(chan struct{})
	b.mu.Unlock()
}

// Used is the bytes held now.
func (b *budget) Used() int64 { return b.used.Load() }
