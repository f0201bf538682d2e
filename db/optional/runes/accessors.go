package runes

import (
	"encoding/binary"
	"slices"

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
	return readEntry(pendingState{r: r}.get, id)
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
	n, err := scanHistory(r, desc, func(n int, pos func() (db.TxPos, error)) error {
		if n >= skip && len(out) < limit {
			p, err := pos()
			out = append(out, p)
			return err
		}
		return nil
	})
	return out, n, err
}

// ReadHistoryPage returns page (from 1) of size of the txs that moved an
// address's runes, newest first, and how many there are, in one pass
// over its rows; a page past the end is the last one (as the answers'
// paging clamps it). size 0 only counts.
func ReadHistoryPage(r db.Reader, desc bchain.AddrDesc, page, size int) ([]db.TxPos, int, error) {
	skip := (max(page, 1) - 1) * size
	var window []db.TxPos
	ring, head := make([]db.TxPos, 0, size), 0 // the last size rows seen
	n, err := scanHistory(r, desc, func(n int, pos func() (db.TxPos, error)) error {
		if size == 0 {
			return nil
		}
		p, err := pos()
		if n >= skip && len(window) < size {
			window = append(window, p)
		}
		if len(ring) < size {
			ring = append(ring, p)
		} else {
			ring[head], head = p, (head+1)%size
		}
		return err
	})
	if err != nil || size == 0 || skip < n || n == 0 {
		return window, n, err
	}
	last := n - (n-1)/size*size
	ordered := slices.Concat(ring[head:], ring[:head])
	return ordered[len(ordered)-last:], n, nil
}

// scanHistory calls fn with each history row's rank and a reader of its
// position, and returns how many rows the address has.
func scanHistory(r db.Reader, desc bchain.AddrDesc, fn func(n int, pos func() (db.TxPos, error)) error) (int, error) {
	n := 0
	prefix := historyPrefix(desc)
	err := db.Iterate(r, db.CFRunes, nil, prefix, func(k, _ []byte) (bool, error) {
		if len(k) != len(prefix)+8 {
			return false, corrupt("history key length")
		}
		err := fn(n, func() (db.TxPos, error) {
			h, i, err := historyPos(k)
			return db.TxPos{Height: h, Index: i}, err
		})
		n++
		return err == nil, err
	})
	return n, err
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

// ReadCount returns how many runes were etched (numbers 0 to count-1).
func ReadCount(r db.Reader) (uint64, error) { return runeCount(pendingState{r: r}.get) }

// ReadIDsByNumber returns the ids of the runes numbered from hi down, at
// most n of them, newest first: a seek to the page's first number row.
func ReadIDsByNumber(r db.Reader, hi uint64, n int) ([]RuneID, error) {
	if n <= 0 {
		return nil, nil
	}
	lo := uint64(0)
	if hi >= uint64(n) {
		lo = hi - uint64(n) + 1
	}
	out := make([]RuneID, 0, n)
	err := db.Iterate(r, db.CFRunes, numberKey(lo), []byte{kindNumber}, func(k, v []byte) (bool, error) {
		if len(k) != 9 {
			return false, corrupt("number key")
		}
		if binary.BigEndian.Uint64(k[1:]) > hi {
			return false, nil
		}
		id, err := unpackID(v)
		out = append(out, id)
		return err == nil, err
	})
	slices.Reverse(out)
	return out, err
}

// Mintable reports whether a mint in a block at height would succeed, and
// for how much.
func (e *Entry) Mintable(height uint64) (U128, bool) { return e.mintable(height) }
