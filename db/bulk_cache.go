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
	bytes int64
}

type cacheEntry struct {
	value  uint64
	height uint32
	// pos is the creating tx's index in its block << 1 | coinbase, one
	// word so the entry stays 40 bytes (a block has far fewer than 2^31 txs).
	pos  uint32
	desc []byte // in the generation's arena; nil for unindexed outputs
}

// cacheEntryBytes approximates the memory of one entry: the key, the entry
// and Go's map overhead.
const cacheEntryBytes = 112

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
// been ingested, then drops whole committed generations, oldest first, until
// the cache fits its budget.
func (c *utxoCache) commitOldest() {
	c.committed++
	for c.committed > 0 && c.bytes > c.maxBytes {
		c.bytes -= c.gens[0].bytes
		c.gens[0] = nil
		c.gens = c.gens[1:]
		c.committed--
	}
}

func (c *utxoCache) add(op outpoint, value uint64, height, index uint32, coinbase bool, desc []byte) {
	g := c.current()
	e := cacheEntry{value: value, height: height, pos: index << 1}
	if coinbase {
		e.pos |= 1
	}
	if len(desc) > 0 {
		start := len(g.arena)
		g.arena = append(g.arena, desc...)
		e.desc = g.arena[start:len(g.arena):len(g.arena)]
	}
	g.m[op] = e
	n := int64(cacheEntryBytes + len(desc))
	g.bytes += n
	c.bytes += n
}

// take returns and removes an output (each output is spent once).
func (c *utxoCache) take(op outpoint) (cacheEntry, bool) {
	for i := len(c.gens) - 1; i >= 0; i-- {
		g := c.gens[i]
		if e, ok := g.m[op]; ok {
			delete(g.m, op)
			n := int64(cacheEntryBytes + len(e.desc))
			g.bytes -= n
			c.bytes -= n
			c.hits++
			return e, true
		}
	}
	c.misses++
	return cacheEntry{}, false
}

// bulkPrevouts resolves inputs from the cache, then from the index.
type bulkPrevouts struct {
	cache *utxoCache
	index *indexPrevouts
}

func (p *bulkPrevouts) prevout(txid bchain.Hash, vout uint32) (IndexedInput, bool, error) {
	if e, ok := p.cache.take(outpoint{txid, vout}); ok {
		return IndexedInput{
			Prevout: Prevout{Txid: txid, Vout: vout, Height: e.height, Index: e.pos >> 1, Coinbase: e.pos&1 == 1},
			TxAddr:  TxAddr{Desc: e.desc, Value: e.value},
		}, true, nil
	}
	return p.index.prevout(txid, vout)
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
