package api

import (
	"container/list"
	"context"
	"runtime"
	"sync"
)

// DefaultXpubCacheMB is the account cache's default size in MB.
const DefaultXpubCacheMB = 128

// xpubCache keeps recently queried accounts (their derived addresses,
// balances and tx lists) so that a repeated query neither derives keys
// again nor re-reads whole histories: it only reads what changed since the
// tip the account was last brought up to. It is a least-recently-used list
// bounded by the bytes its accounts hold (see xpubAccount.size). An account
// is kept once whatever gap limit it was asked with: it holds the addresses
// of the largest gap asked so far, and smaller gaps read a prefix of them.
type xpubCache struct {
	mu      sync.Mutex
	max     int64 // total bytes; <= 0 disables caching
	cost    int64
	entries map[string]*list.Element // of *xpubAccount
	order   *list.List               // front: most recently used
	// derive bounds the derivations running at once over all requests, so
	// that a burst of large-gap queries queues instead of taking every core
	// (and the memory of every half-built account) at the same time; it
	// lets the smallest accounts in first (xpub_derive_gate.go).
	derive *deriveGate
}

func newXpubCache(maxBytes int64) *xpubCache {
	return &xpubCache{max: maxBytes, entries: map[string]*list.Element{}, order: list.New(),
		derive: newDeriveGate(max(1, runtime.NumCPU()/2))}
}

// startDerive waits for a derivation slot for an account chain that has
// done addresses already; the caller calls endDerive.
func (c *xpubCache) startDerive(ctx context.Context, done int) error {
	return c.derive.acquire(ctx, done)
}

func (c *xpubCache) endDerive() { c.derive.release() }

// get returns the cached account for key, or a new one made by create and
// inserted at no cost until put, so that concurrent requests for the same
// account share it. The caller locks the account while using it.
func (c *xpubCache) get(key string, create func() *xpubAccount) *xpubAccount {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*xpubAccount)
	}
	a := create()
	a.key = key
	if c.max > 0 {
		c.entries[key] = c.order.PushFront(a)
	}
	return a
}

// put records an account's size in bytes after a request updated it (inserting it
// again if it was evicted meanwhile) and evicts the least recently used
// accounts over budget. An account larger than the whole budget is not
// kept.
func (c *xpubCache) put(a *xpubAccount, cost int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.max <= 0 {
		return
	}
	e, ok := c.entries[a.key]
	switch {
	case ok && e.Value != a:
		return // evicted and replaced meanwhile: the newer one stays
	case ok:
		c.cost -= a.cachedCost
		c.order.MoveToFront(e)
	default:
		c.entries[a.key] = c.order.PushFront(a)
	}
	a.cachedCost = cost
	c.cost += cost
	if cost > c.max {
		c.remove(a)
		return
	}
	for c.cost > c.max {
		c.remove(c.order.Back().Value.(*xpubAccount))
	}
}

// remove deletes a cached account; c.mu is held.
func (c *xpubCache) remove(a *xpubAccount) {
	if e, ok := c.entries[a.key]; ok && e.Value == a {
		c.order.Remove(e)
		delete(c.entries, a.key)
		c.cost -= a.cachedCost
		a.cachedCost = 0
	}
}

// drop forgets an account (e.g. after a failed update).
func (c *xpubCache) drop(a *xpubAccount) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.remove(a)
}

// clear empties the cache.
func (c *xpubCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = map[string]*list.Element{}
	c.order.Init()
	c.cost = 0
}

// stats returns the number of cached accounts and their total bytes.
func (c *xpubCache) stats() (accounts int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries), c.cost
}
