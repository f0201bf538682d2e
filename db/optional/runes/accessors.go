package runes

import (
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
