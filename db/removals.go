package db

import (
	"encoding/binary"
	"fmt"

	"github.com/openexplorer/blockbook/bchain"
)

// The removal log: one row of the default family per block a disconnect
// removed, in the order of the removals, written in the disconnect's
// batch. With the active chain it gives the whole stream of blocks added
// and removed (Mesh's /events/blocks) from the index alone, so the stream
// is the same after a restart and on a replica. It is history, not state
// (a fresh sync of the same chain has none), so dump comparisons leave it
// out. Rows: "removed" ‖ u32be(i) → u32be(height) ‖ hash.
var stateKeyRemoved = []byte("removed")

// IsVolatileStateKey reports the state keys dump comparisons leave out:
// the volatile ones (stateKeyCreated), the removal log's and operators'
// contract fixes (contract_fix.go): none is derived from the chain.
func IsVolatileStateKey(k []byte) bool {
	return string(k) == string(stateKeyCreated) || isRemovalKey(k) || isContractFixKey(k)
}

// Removal is a block a disconnect removed from the tip.
type Removal struct {
	Height uint32
	Hash   bchain.Hash
}

func removalKey(i uint32) []byte {
	return binary.BigEndian.AppendUint32(append([]byte(nil), stateKeyRemoved...), i)
}

func isRemovalKey(k []byte) bool {
	return len(k) == len(stateKeyRemoved)+4 && string(k[:len(stateKeyRemoved)]) == string(stateKeyRemoved)
}

// ReadRemovals returns every logged removal, oldest first (tests and
// tools; the serving paths read the log in bounded parts, below).
func ReadRemovals(r Reader) ([]Removal, error) {
	var out []Removal
	err := ScanRemovals(r, 0, func(_ int, rm Removal) (bool, error) {
		out = append(out, rm)
		return true, nil
	})
	return out, err
}

// ScanRemovals visits the logged removals from index from on, oldest
// first, until fn returns false: one seek, then the rows in order.
func ScanRemovals(r Reader, from int, fn func(i int, rm Removal) (bool, error)) error {
	i := from
	return r.iterate(CFDefault, removalKey(uint32(from)), stateKeyRemoved, func(k, v []byte) (bool, error) {
		rm, err := decodeRemoval(k, v, i)
		if err != nil {
			return false, err
		}
		ok, err := fn(i, rm)
		i++
		return ok, err
	})
}

// ReadRemoval returns removal i (ok false past the end of the log).
func ReadRemoval(r Reader, i int) (Removal, bool, error) {
	v, err := r.get(CFDefault, removalKey(uint32(i)))
	if err != nil || v == nil {
		return Removal{}, false, err
	}
	rm, err := decodeRemoval(removalKey(uint32(i)), v, i)
	return rm, err == nil, err
}

// CountRemovals returns how many removals are logged. The rows are
// numbered from 0 without gaps, so the count is found with about 2·log2(n)
// point reads (doubling, then bisecting), however long the log grows.
func CountRemovals(r Reader) (int, error) {
	has := func(i int) (bool, error) {
		v, err := r.get(CFDefault, removalKey(uint32(i)))
		return v != nil, err
	}
	// lo is a present row (or -1), hi an absent one.
	lo, hi := -1, 1
	for {
		ok, err := has(hi - 1)
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		lo, hi = hi-1, 2*hi
		if hi > 1<<31 {
			return 0, fmt.Errorf("%w: removal log longer than 2^31 rows", ErrCorrupt)
		}
	}
	hi-- // absent
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ok, err := has(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo + 1, nil
}

func decodeRemoval(k, v []byte, want int) (Removal, error) {
	if !isRemovalKey(k) || binary.BigEndian.Uint32(k[len(stateKeyRemoved):]) != uint32(want) || len(v) != 4+len(bchain.Hash{}) {
		return Removal{}, fmt.Errorf("%w: removal log row %x = %x (row %d expected)", ErrCorrupt, k, v, want)
	}
	rm := Removal{Height: binary.BigEndian.Uint32(v)}
	copy(rm.Hash[:], v[4:])
	return rm, nil
}

// logRemoval adds to b the removal of the block at height h, the next
// after n logged ones.
func logRemoval(b Writer, n int, h uint32, hash bchain.Hash) {
	v := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(hash)), h)
	b.put(CFDefault, removalKey(uint32(n)), append(v, hash[:]...))
}
