package db

import (
	"hash/maphash"
	"math/bits"
)

// writtenFilter is a Bloom filter of the addresses whose balance a bulk
// session has written. A session that starts on an empty index has no
// other balances, so an address the filter has not seen has none, and a
// round's flush need not read it. Addresses seen for the first time are
// common in every round (the 20 M chain has 27 M addresses), and the read
// of an absent balance probes the Bloom filter of every level-0 file and
// of every level.
//
// It is blocked (the bits of a key lie in one 64-byte block, one cache
// miss per lookup) with 7 bits per key; at its capacity, 10 bits per key,
// about 1% of absent addresses are read anyway. A false positive costs a
// read, never a wrong balance, and a retired filter reads every absent
// address: so it retires (and frees its memory) only when about half of
// them pass, past three times its capacity of keys that set a bit (14% pass
// at twice, where it retired before; on the 20 M scale chain that turned
// the last 600,000 txs' 190,000 new addresses a round into reads:
// docs/performance.md, step 10). Then every miss of the balance cache is
// read.
type writtenFilter struct {
	blocks   [][8]uint64 // nil once retired
	seed     maphash.Seed
	n, limit int
}

const (
	filterBitsPerKey = 10
	filterHashes     = 7
	// filterRetireAt: the filter retires past this many times its capacity
	// of counted keys (about 3.5 times as many added).
	filterRetireAt = 3
)

// newWrittenFilter returns a filter of about bytes (at least one block).
func newWrittenFilter(bytes int64) *writtenFilter {
	nb := max(bytes/64, 1)
	return &writtenFilter{blocks: make([][8]uint64, nb), seed: maphash.MakeSeed(),
		limit: int(filterRetireAt * nb * 512 / filterBitsPerKey)}
}

// positions returns a key's block and the 64 bits its 7 bit positions
// (9 bits each) come from.
func (f *writtenFilter) positions(key string) (*[8]uint64, uint64) {
	h := maphash.String(f.seed, key)
	hi, _ := bits.Mul64(mix64(h), uint64(len(f.blocks)))
	return &f.blocks[hi], h
}

// add adds a key. Only keys that set a new bit count toward the limit: a
// flush puts every address its round touched, most of them seen before.
func (f *writtenFilter) add(key string) {
	if f.retired() {
		return
	}
	b, h := f.positions(key)
	added := false
	for range filterHashes {
		w, bit := &b[h>>6&7], uint64(1)<<(h&63)
		added = added || *w&bit == 0
		*w |= bit
		h >>= 9
	}
	if added {
		if f.n++; f.n > f.limit {
			f.blocks = nil // too full to tell anything apart
		}
	}
}

// mayHave is false only for a key never added (and always true once the
// filter has retired).
func (f *writtenFilter) mayHave(key string) bool {
	if f.retired() {
		return true
	}
	b, h := f.positions(key)
	for range filterHashes {
		if b[h>>6&7]&(1<<(h&63)) == 0 {
			return false
		}
		h >>= 9
	}
	return true
}

// retired tells whether the filter has passed its limit and let go of
// its bits.
func (f *writtenFilter) retired() bool { return f.blocks == nil }

// bytes is the filter's memory.
func (f *writtenFilter) bytes() int64 { return int64(len(f.blocks)) * 64 }

// mix64 is splitmix64's finalizer: it picks the block from bits
// independent of the ones that pick the positions inside it.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
