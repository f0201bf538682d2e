package runes

import (
	"encoding/binary"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/optional/runes/runestone"
)

// ReadAddress returns an address's rune balances, by rune id (nil: none).
func ReadAddress(r db.Reader, desc bchain.AddrDesc) ([]Balance, error) {
	v, err := db.Get(r, db.CFRunes, addressKey(desc))
	if err != nil || v == nil {
		return nil, err
	}
	return unpackBalances(v)
}

// ReadOutput returns an output's rune balances (nil: none or spent).
func ReadOutput(r db.Reader, p Pos) ([]Balance, error) {
	v, err := db.Get(r, db.CFRunes, outputKey(p))
	if err != nil || v == nil {
		return nil, err
	}
	return unpackBalances(v)
}

// ReadEntry returns a rune's entry by id (nil: no such rune).
func ReadEntry(r db.Reader, id RuneID) (*Entry, error) {
	if id.Block > 0xffffffff {
		return nil, nil
	}
	v, err := db.Get(r, db.CFRunes, entryKey(id))
	if err != nil || v == nil {
		return nil, err
	}
	return unpackEntry(v)
}

// ReadEntryByName returns a rune's entry by its name (nil: no such rune).
func ReadEntryByName(r db.Reader, name runestone.Rune) (*Entry, error) {
	v, err := db.Get(r, db.CFRunes, nameKey(name))
	if err != nil || v == nil {
		return nil, err
	}
	id, err := unpackID(v)
	if err != nil {
		return nil, err
	}
	return ReadEntry(r, id)
}

// ReadTx returns what the outputs of the tx at (height, index) received
// and what it burned (ok false: it moved no runes).
func ReadTx(r db.Reader, height, index uint32) (outs []OutputRunes, burned []Balance, ok bool, err error) {
	v, err := db.Get(r, db.CFRunes, txKey(height, index))
	if err != nil || v == nil {
		return nil, nil, false, err
	}
	outs, burned, err = unpackTxRunes(v)
	return outs, burned, err == nil, err
}

// ReadHistory returns the txs that moved an address's runes, newest
// first, skipping skip and keeping at most limit, and how many there are.
func ReadHistory(r db.Reader, desc bchain.AddrDesc, skip, limit int) ([]db.TxPos, int, error) {
	var out []db.TxPos
	n := 0
	prefix := historyPrefix(desc)
	err := db.Iterate(r, db.CFRunes, nil, prefix, func(k, _ []byte) (bool, error) {
		if len(k) != len(prefix)+8 {
			return false, corrupt("history key length")
		}
		if n >= skip && len(out) < limit {
			h, i, err := historyPos(k)
			if err != nil {
				return false, err
			}
			out = append(out, db.TxPos{Height: h, Index: i})
		}
		n++
		return true, nil
	})
	return out, n, err
}

// SortBalances orders balances by rune id, as the rows keep them.
func SortBalances(b []Balance) { sortBalances(b) }

// ReadEntryIDs returns every rune's id, by birth.
func ReadEntryIDs(r db.Reader) ([]RuneID, error) {
	var out []RuneID
	err := db.Iterate(r, db.CFRunes, nil, []byte{kindEntry}, func(k, _ []byte) (bool, error) {
		if len(k) != 9 {
			return false, corrupt("entry key")
		}
		out = append(out, RuneID{Block: uint64(binary.BigEndian.Uint32(k[1:])), Tx: binary.BigEndian.Uint32(k[5:])})
		return true, nil
	})
	return out, err
}

// Mintable reports whether a mint in a block at height would succeed, and
// for how much.
func (e *Entry) Mintable(height uint64) (U128, bool) { return e.mintable(height) }
