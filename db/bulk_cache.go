package db

import (
	"github.com/openexplorer/blockbook/bchain"
)

// utxoCache holds the outputs created during a bulk session that are not
// spent yet, so that inputs rarely need a database read. It is split into
// generations, one per bulk round: only generations whose round has been
// ingested may be evicted (their outputs can then be read back from
// txAddresses), so the cache never loses an output the index cannot supply.
type utxoCache struct {
	gens      []*cacheGen // oldest first; the last one is the current round's
	committed int         // the first `committed` generations belong to ingested rounds
	maxBytes  int64
	bytes     int64
	hits      int64
	misses    int64
}

type cacheGen struct {
	m     map[outpoint]cacheEntry
	arena []byte // descriptors of the entries
	added int    // entries put since the generation was (re)built
	bytes int64  // memory held: see genBytes
}

type cacheEntry struct {
	value  uint64
	height uint32
	// pos is the creating tx's index in its block << 1 | coinbase, one
	// word (a block has far fewer than 2^31 txs).
	pos uint32
	// The descriptor is arena[descAt:descAt+descLen] of its generation
	// (empty for unindexed outputs): offsets keep the entry at 24 bytes,
	// where a slice would take 40.
	descAt, descLen uint32
}

// cacheSlotBytes bounds the memory of one map entry: Go's maps keep 7/16 to
// 7/8 of their 65-byte slots (36-byte key, padding, 24-byte entry, control
// byte) in use, so 74 to 149 bytes per entry, and up to 151 measured with
// the tables' own overhead (TestUTXOCacheAccountsItsHeap). The bound, not
// the average, keeps the heap within the plan.
const cacheSlotBytes = 156

func (g *cacheGen) desc(e cacheEntry) []byte {
	if e.descLen == 0 {
		return nil
	}
	return g.arena[e.descAt : e.descAt+e.descLen : e.descAt+e.descLen]
}

// store appends a descriptor to the arena and points e at it.
func (g *cacheGen) store(e *cacheEntry, desc []byte) {
	e.descAt, e.descLen = uint32(len(g.arena)), uint32(len(desc))
	g.arena = append(g.arena, desc...)
}

// genBytes is what a generation holds. Taking an entry frees nothing (a Go
// map does not shrink, the arena is append-only), so every entry added
// counts until the generation is rebuilt or dropped.
func (g *cacheGen) genBytes() int64 {
	return int64(g.added)*cacheSlotBytes + int64(cap(g.arena))
}

func newUTXOCache(maxBytes int64) *utxoCache {
	c := &utxoCache{maxBytes: maxBytes}
	c.rotate()
	return c
}

func (c *utxoCache) current() *cacheGen { return c.gens[len(c.gens)-1] }

// rotate starts a new generation for the next round.
func (c *utxoCache) rotate() {
	c.gens = append(c.gens, &cacheGen{m: make(map[outpoint]cacheEntry)})
}

// commitOldest records that the oldest uncommitted generation's round has
// been ingested, rebuilds committed generations that are mostly spent, then
// drops whole committed generations, oldest first, until the cache fits its
// budget.
func (c *utxoCache) commitOldest() {
	c.committed++
	for _, g := range c.gens[:c.committed] {
		if len(g.m) < g.added/2 {
			c.rebuild(g)
		}
	}
	for c.committed > 0 && c.bytes > c.maxBytes {
		c.bytes -= c.gens[0].bytes
		c.gens[0] = nil
		c.gens = c.gens[1:]
		c.committed--
	}
}

// rebuild copies a generation's unspent entries into a map and an arena of
// their own size, giving back what its spent entries held.
func (c *utxoCache) rebuild(g *cacheGen) {
	arena := 0
	for _, e := range g.m {
		arena += int(e.descLen)
	}
	ng := cacheGen{m: make(map[outpoint]cacheEntry, len(g.m)), arena: make([]byte, 0, arena), added: len(g.m)}
	for op, e := range g.m {
		ng.store(&e, g.desc(e))
		ng.m[op] = e
	}
	ng.bytes = ng.genBytes()
	c.bytes += ng.bytes - g.bytes
	*g = ng
}

func (c *utxoCache) add(op outpoint, value uint64, height, index uint32, coinbase bool, desc []byte) {
	g := c.current()
	e := cacheEntry{value: value, height: height, pos: index << 1}
	if coinbase {
		e.pos |= 1
	}
	g.store(&e, desc)
	g.m[op] = e
	g.added++
	n := g.genBytes()
	c.bytes += n - g.bytes
	g.bytes = n
}

// take returns and removes an output (each output is spent once) and its
// descriptor, which stays valid after the generation is rebuilt.
func (c *utxoCache) take(op outpoint) (cacheEntry, []byte, bool) {
	for i := len(c.gens) - 1; i >= 0; i-- {
		g := c.gens[i]
		if e, ok := g.m[op]; ok {
			delete(g.m, op)
			c.hits++
			return e, g.desc(e), true
		}
	}
	c.misses++
	return cacheEntry{}, nil, false
}

// prevout takes the output txid:vout from the cache (false when it does
// not hold it, or c is nil: the per-block connect has no cache).
func (c *utxoCache) prevout(txid bchain.Hash, vout uint32) (IndexedInput, bool) {
	if c == nil {
		return IndexedInput{}, false
	}
	e, desc, ok := c.take(outpoint{txid, vout})
	if !ok {
		return IndexedInput{}, false
	}
	return IndexedInput{
		Prevout: Prevout{Txid: txid, Vout: vout, Height: e.height, Index: e.pos >> 1, Coinbase: e.pos&1 == 1},
		TxAddr:  TxAddr{Desc: desc, Value: e.value},
	}, true
}

// record updates the cache with a resolved block: its outputs become
// available, except those spent within the block itself (inputs resolved
// from the cache were already taken out of it).
func (c *utxoCache) record(ib *IndexedBlock) {
	spentHere := make(map[outpoint]bool)
	for i := range ib.Txs {
		tx := &ib.Txs[i]
		if tx.Coinbase {
			continue
		}
		for j := range tx.Inputs {
			if in := &tx.Inputs[j]; in.Height == ib.Height {
				spentHere[outpoint{in.Txid, in.Vout}] = true
			}
		}
	}
	for i := range ib.Txs {
		tx := &ib.Txs[i]
		for n := range tx.Outputs {
			out := &tx.Outputs[n]
			// Data carriers (no descriptor, no value) are never spent; the
			// rare spendable one is still found in txAddresses on a miss.
			if len(out.Desc) == 0 && out.Value == 0 {
				continue
			}
			op := outpoint{tx.Txid, uint32(n)}
			if !spentHere[op] {
				c.add(op, out.Value, ib.Height, uint32(i), tx.Coinbase, out.Desc)
			}
		}
	}
}
