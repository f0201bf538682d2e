package runes

import (
	"encoding/binary"

	"github.com/openexplorer/blockbook/db"
)

// holders.go: how many addresses hold each rune. The count changes only
// where an address row does (a balance going from zero or to zero), so a
// block's connect writes it beside them and its undo row restores it:
// exact after reorgs without a scan of the address rows.

// holderRows adds the holder counts the block changed (delta by rune) to
// rows; a count that reaches 0 deletes its row.
func (x *Index) holderRows(rows map[string][]byte, delta map[RuneID]int) error {
	for id, d := range delta {
		if d == 0 {
			continue
		}
		k := holdersKey(id)
		n, err := readHolders(x.get, k)
		if err != nil {
			return err
		}
		if d < 0 && uint64(-d) > n {
			return corrupt("holder count below zero")
		}
		n = uint64(int64(n) + int64(d))
		if n == 0 {
			rows[string(k)] = nil
		} else {
			rows[string(k)] = packHolders(n)
		}
	}
	return nil
}

func readHolders(get func([]byte) ([]byte, error), k []byte) (uint64, error) {
	v, err := get(k)
	if err != nil || v == nil {
		return 0, err
	}
	return unpackHolders(v)
}

func packHolders(n uint64) []byte { return binary.AppendUvarint(nil, n) }

// unpackHolders reads a count: a minimal uvarint above 0 (a count of 0
// has no row).
func unpackHolders(v []byte) (uint64, error) {
	n, m := binary.Uvarint(v)
	if m <= 0 || m != len(v) || n == 0 || len(packHolders(n)) != m {
		return 0, corrupt("holder count")
	}
	return n, nil
}

// ReadHolders returns how many addresses hold the rune (outputs without
// an address count in none).
func ReadHolders(r db.Reader, id RuneID) (uint64, error) {
	if id.Block > 0xffffffff {
		return 0, nil
	}
	return readHolders(pendingState{r: r}.get, holdersKey(id))
}
