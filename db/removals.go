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
// the volatile ones (stateKeyCreated) and the removal log's.
func IsVolatileStateKey(k []byte) bool {
	return string(k) == string(stateKeyCreated) || isRemovalKey(k)
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

// ReadRemovals returns every logged removal, oldest first. Reorgs are
// rare, so the log stays short.
func ReadRemovals(r Reader) ([]Removal, error) {
	var out []Removal
	err := r.iterate(CFDefault, nil, stateKeyRemoved, func(k, v []byte) (bool, error) {
		if !isRemovalKey(k) || binary.BigEndian.Uint32(k[len(stateKeyRemoved):]) != uint32(len(out)) || len(v) != 4+len(bchain.Hash{}) {
			return false, fmt.Errorf("%w: removal log row %x = %x", ErrCorrupt, k, v)
		}
		rm := Removal{Height: binary.BigEndian.Uint32(v)}
		copy(rm.Hash[:], v[4:])
		out = append(out, rm)
		return true, nil
	})
	return out, err
}

// logRemoval adds to b the removal of the block at height h, the next
// after n logged ones.
func logRemoval(b Writer, n int, h uint32, hash bchain.Hash) {
	v := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(hash)), h)
	b.put(CFDefault, removalKey(uint32(n)), append(v, hash[:]...))
}
