// Package runes is the Runes index of Bitcoin-type chains: rune balances
// per output (under the output's compact position, its birth pointer),
// per rune (its entry, keyed by its etching's position) and per address.
// ledger.go applies runestones to balances as ord does; the decoding is
// package runestone's.
package runes

import (
	"bytes"
	"sort"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db/optional/runes/runestone"
	"github.com/openexplorer/blockbook/internal/bip352"
)

type (
	U128   = runestone.U128
	RuneID = runestone.RuneID
)

// Pos is an output's compact position: the block height and tx index of
// the tx that created it, and its vout.
type Pos struct{ Height, Index, Vout uint32 }

// Balance is an amount of one rune.
type Balance struct {
	ID     RuneID
	Amount U128
}

// Entry is a rune: its etching's fields, and its mints and burns so far.
type Entry struct {
	ID           RuneID
	Etching      bchain.Hash // the etching tx
	Number       uint64      // etching order, from 0
	Rune         runestone.Rune
	Spacers      uint32
	Divisibility uint8
	Symbol       *rune
	Premine      U128
	Terms        *runestone.Terms
	Turbo        bool
	Mints        U128
	Burned       U128
	Timestamp    int64
}

// Supply is premine + mints × amount (it fits: the etching's cap bounds it).
func (e *Entry) Supply() U128 {
	s := e.Premine
	if e.Terms != nil && e.Terms.Amount != nil {
		m, _ := e.Mints.Mul(*e.Terms.Amount)
		s, _ = s.Add(m)
	}
	return s
}

// mintable is the amount a mint at height gets, if the terms allow one.
func (e *Entry) mintable(height uint64) (U128, bool) {
	t := e.Terms
	if t == nil {
		return U128{}, false
	}
	if start, ok := bound(e.ID.Block, t.OffsetStart, t.HeightStart, false); ok && height < start {
		return U128{}, false
	}
	if end, ok := bound(e.ID.Block, t.OffsetEnd, t.HeightEnd, true); ok && height >= end {
		return U128{}, false
	}
	var capv U128
	if t.Cap != nil {
		capv = *t.Cap
	}
	if e.Mints.Cmp(capv) >= 0 {
		return U128{}, false
	}
	if t.Amount == nil {
		return U128{}, true
	}
	return *t.Amount, true
}

// bound combines a relative (offset from the etching block) and an
// absolute height: the later of the two starts, the earlier of the ends.
func bound(block uint64, offset, absolute *uint64, end bool) (uint64, bool) {
	var rel uint64
	if offset != nil {
		rel = block + *offset
		if rel < block {
			rel = ^uint64(0) // saturates
		}
	}
	switch {
	case offset != nil && absolute != nil:
		if (rel < *absolute) == end {
			return rel, true
		}
		return *absolute, true
	case offset != nil:
		return rel, true
	case absolute != nil:
		return *absolute, true
	}
	return 0, false
}

// State is what applying a tx reads: the runes of the outputs it spends,
// the entries it mints or names, and the count of runes so far.
type State interface {
	Balances(p Pos) ([]Balance, error)
	Entry(id RuneID) (*Entry, error)
	IDByRune(r runestone.Rune) (RuneID, bool, error)
	RuneCount() (uint64, error)
}

// Input is a tx input as the ledger sees it.
type Input struct {
	Prev       Pos
	PrevScript []byte // the spent output's script
	Witness    [][]byte
	Coinbase   bool
}

// Tx is a tx of a block being connected.
type Tx struct {
	Txid    bchain.Hash
	Index   uint32
	Inputs  []Input
	Outputs [][]byte
}

// commits reports whether an input reveals a tapscript pushing the name's
// commitment while spending a taproot output at least
// CommitConfirmations deep (the etching's block counted as the first).
func commits(tx *Tx, r runestone.Rune, height uint32) bool {
	c := r.Commitment()
	for _, in := range tx.Inputs {
		ts := runestone.Tapscript(in.Witness)
		if ts == nil {
			continue
		}
		found := false
		runestone.ScriptPushes(ts, func(p []byte) bool {
			found = bytes.Equal(p, c)
			return !found
		})
		if found && bip352.IsP2TR(in.PrevScript) && !in.Coinbase && in.Prev.Height <= height &&
			height-in.Prev.Height+1 >= runestone.CommitConfirmations {
			return true
		}
	}
	return false
}

// sortBalances orders balances by rune id, the stored order.
func sortBalances(b []Balance) {
	sort.Slice(b, func(i, j int) bool {
		return b[i].ID.Block < b[j].ID.Block || (b[i].ID.Block == b[j].ID.Block && b[i].ID.Tx < b[j].ID.Tx)
	})
}
