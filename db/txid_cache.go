package db

import (
	"bytes"
	"sync"
	"sync/atomic"
)

// DefaultTxidCacheMB is the default size of the txid cache (blockbook's
// -txidcachemb).
const DefaultTxidCacheMB = 32

// txidCacheEntryBytes is what a cached row costs beyond its value: the
// map's key and slice header, with the map's slack.
const txidCacheEntryBytes = 64

// TxidCache keeps blockTxids rows in memory, shared by every query that
// turns positions into txids (FillRowsTxidsCached): an address page
// resolves its thousand positions through ~90 of these rows, a MultiGet
// that is a third of the page's work. A row of a block never changes
// while the block is on the chain, so the cache is valid for one chain:
// it is anchored at a tip, and a reader uses it only when its snapshot's
// chain holds every row the cache may hold (Bind). Snapshots are ordered
// (Snapshot.Seq): a newer one at a tip that extends the anchor moves the
// anchor up (the cached rows stay true); a newer one at any other tip (a
// reorg, a rollback to a lower tip, or a replica that caught up past
// either) empties the cache and anchors it there; an older one at another
// tip reads the index. Each emptying starts an epoch, and a reader bound
// in an earlier one neither reads nor fills the cache. This needs no hook
// in the writer, so it holds on replicas too.
//
// Its size is bounded by the bytes held, rows plus txidCacheEntryBytes
// each, in two generations of at most half the bound each: when the
// current one is full it becomes the old one and the old one is dropped;
// a row found in the old generation moves to the current one. This keeps
// recently used rows at no per-access bookkeeping beyond the map.
type TxidCache struct {
	mu         sync.Mutex
	half       int64
	cur, old   map[uint64][]byte
	curBytes   int64
	oldBytes   int64
	anchor     Tip
	anchored   bool
	seq        uint64 // of the newest snapshot bound at the anchor
	epoch      uint64 // emptyings so far
	hits, miss atomic.Uint64
	resets     atomic.Uint64
}

// NewTxidCache returns a cache holding at most maxBytes (nil, no cache,
// for maxBytes <= 0).
func NewTxidCache(maxBytes int64) *TxidCache {
	if maxBytes <= 0 {
		return nil
	}
	return &TxidCache{half: maxBytes / 2, cur: map[uint64][]byte{}, old: map[uint64][]byte{}}
}

// TxidCacheStats are a cache's counters, for metrics.
type TxidCacheStats struct {
	Bytes, Rows  int64
	Hits, Misses uint64 // rows found, rows read
	Resets       uint64 // emptied for a tip on another branch
	MaxBytes     int64
}

// Stats returns the cache's counters (zero for a nil cache).
func (c *TxidCache) Stats() TxidCacheStats {
	if c == nil {
		return TxidCacheStats{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return TxidCacheStats{Bytes: c.curBytes + c.oldBytes, Rows: int64(len(c.cur) + len(c.old)),
		Hits: c.hits.Load(), Misses: c.miss.Load(), Resets: c.resets.Load(), MaxBytes: 2 * c.half}
}

// BoundTxids is a TxidCache as one reader may use it: that of a snapshot
// whose tip is at height limit, in the cache's epoch epoch. Its methods do
// nothing once the cache was emptied since.
type BoundTxids struct {
	c     *TxidCache
	epoch uint64
	limit uint32
}

// Bind returns the cache for snapshot s, whose chain ends at tip (hasTip
// false: an empty index), or nil when s may not use it: a snapshot older
// than the anchor's at another tip, or a cache moved on meanwhile. Moving
// the anchor costs one read of a block record, once per new tip.
func (c *TxidCache) Bind(s *Snapshot, tip Tip, hasTip bool) *BoundTxids {
	if c == nil || !hasTip {
		return nil
	}
	c.mu.Lock()
	a, anchored, epoch := c.anchor, c.anchored, c.epoch
	if !anchored || a == tip {
		c.anchor, c.anchored, c.seq = tip, true, max(c.seq, s.seq)
		c.mu.Unlock()
		return &BoundTxids{c, epoch, tip.Height}
	}
	if s.seq < c.seq {
		c.mu.Unlock()
		return nil // older: a tip the chain since left, or below the anchor
	}
	c.mu.Unlock()
	// newer, at another tip: the chain grew, or it was cut back (a reorg
	// or a rollback, perhaps regrown lower than the anchor)
	extends := tip.Height > a.Height && HoldsBlock(s, a.Height, a.Hash)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.anchor != a || c.epoch != epoch {
		if c.anchor == tip {
			return &BoundTxids{c, c.epoch, tip.Height}
		}
		return nil // another reader moved it meanwhile
	}
	if !extends {
		// rows above the fork may be of blocks no longer on the chain
		c.cur, c.old, c.curBytes, c.oldBytes = map[uint64][]byte{}, map[uint64][]byte{}, 0, 0
		c.epoch++
		c.resets.Add(1)
	}
	c.anchor, c.seq = tip, s.seq
	return &BoundTxids{c, c.epoch, tip.Height}
}

// valid reports whether b may use the cache for a row at height; c.mu
// is held.
func (b *BoundTxids) valid(height uint32) bool { return b.c.epoch == b.epoch && height <= b.limit }

func txidRowKey(height, chunk uint32) uint64 { return uint64(height)<<32 | uint64(chunk) }

// row returns the cached blockTxids row (height, chunk), nil when absent.
// The slice is never modified: callers may keep it.
func (b *BoundTxids) row(height, chunk uint32) []byte {
	if b == nil {
		return nil
	}
	c, k := b.c, txidRowKey(height, chunk)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !b.valid(height) {
		return nil
	}
	if v, ok := c.cur[k]; ok {
		c.hits.Add(1)
		return v
	}
	v, ok := c.old[k]
	if !ok {
		c.miss.Add(1)
		return nil
	}
	c.hits.Add(1)
	delete(c.old, k)
	c.oldBytes -= int64(len(v)) + txidCacheEntryBytes
	c.insertLocked(k, v)
	return v
}

// keep caches a copy of the blockTxids row (height, chunk) just read.
func (b *BoundTxids) keep(height, chunk uint32, v []byte) {
	if b == nil || v == nil {
		return
	}
	v = bytes.Clone(v) // the engine's value is valid during the visit only
	c := b.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if !b.valid(height) {
		return
	}
	k := txidRowKey(height, chunk)
	_, inCur := c.cur[k]
	_, inOld := c.old[k]
	if !inCur && !inOld { // else another reader kept it meanwhile
		c.insertLocked(k, v)
	}
}

// insertLocked adds a row to the current generation, turning it into the
// old one first when it is full; c.mu is held.
func (c *TxidCache) insertLocked(k uint64, v []byte) {
	cost := int64(len(v)) + txidCacheEntryBytes
	if cost > c.half {
		return
	}
	if c.curBytes+cost > c.half {
		c.old, c.oldBytes = c.cur, c.curBytes
		c.cur, c.curBytes = make(map[uint64][]byte, len(c.old)), 0
	}
	c.cur[k] = v
	c.curBytes += cost
}
