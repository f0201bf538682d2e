package runes

import (
	"github.com/openexplorer/blockbook/db/optional/runes/runestone"
)

// artifact applies a runestone's or cenotaph's mint and etching, and a
// runestone's premine and edicts.
func (b *block) artifact(tx *Tx, art *runestone.Artifact, unallocated map[RuneID]U128, allocated []map[RuneID]U128) error {
	if id := art.MintID(); id != nil {
		amount, ok, err := b.mint(*id)
		if err != nil {
			return err
		}
		if ok {
			if err := add(unallocated, *id, amount); err != nil {
				return err
			}
		}
	}
	etched, name, err := b.etched(tx, art)
	if err != nil {
		return err
	}
	if r := art.Runestone; r != nil {
		if etched != nil && r.Etching.Premine != nil {
			if err := add(unallocated, *etched, *r.Etching.Premine); err != nil {
				return err
			}
		}
		for _, e := range r.Edicts {
			id := e.ID
			if id == (RuneID{}) {
				if etched == nil {
					continue
				}
				id = *etched
			}
			if _, ok := unallocated[id]; !ok {
				continue
			}
			allocateEdict(tx.Outputs, unallocated, allocated, id, e)
		}
	}
	if etched != nil {
		b.etch(tx, art, *etched, name)
	}
	return nil
}

// allocateEdict moves an edict's runes from unallocated to outputs: to
// one output, or (output = the output count) over every non-OP_RETURN
// output, an amount of 0 splitting all that is left evenly.
func allocateEdict(outs [][]byte, unallocated map[RuneID]U128, allocated []map[RuneID]U128, id RuneID, e runestone.Edict) {
	give := func(amount U128, vout int) {
		if amount.IsZero() {
			return
		}
		unallocated[id], _ = unallocated[id].Sub(amount)
		allocated[vout][id], _ = allocated[vout][id].Add(amount) // bounded by the inputs' sum
	}
	minLeft := func(a U128) U128 {
		if left := unallocated[id]; a.Cmp(left) > 0 {
			return left
		}
		return a
	}
	if int(e.Output) != len(outs) {
		amount := e.Amount
		if amount.IsZero() {
			amount = unallocated[id]
		}
		give(minLeft(amount), int(e.Output))
		return
	}
	var dest []int
	for i, s := range outs {
		if !runestone.IsOpReturn(s) {
			dest = append(dest, i)
		}
	}
	if len(dest) == 0 {
		return
	}
	if !e.Amount.IsZero() {
		for _, vout := range dest {
			give(minLeft(e.Amount), vout)
		}
		return
	}
	each, rem := unallocated[id].DivMod64(uint64(len(dest)))
	for i, vout := range dest {
		a := each
		if uint64(i) < rem {
			a, _ = a.Add(runestone.U64(1))
		}
		give(a, vout)
	}
}

// mint counts a mint of id if its terms allow one now, and returns the
// amount minted.
func (b *block) mint(id RuneID) (U128, bool, error) {
	e, err := b.entry(id)
	if err != nil || e == nil {
		return U128{}, false, err
	}
	amount, ok := e.mintable(uint64(b.height))
	if !ok {
		return U128{}, false, nil
	}
	ne := *e
	ne.Mints, _ = ne.Mints.Add(runestone.U64(1)) // below the cap, a U128
	b.update(e, &ne)
	return amount, true, nil
}

// etched decides whether the artifact etches a rune: a named one must be
// at least the height's minimum, not reserved, not taken and committed to
// by an input; an unnamed runestone etching gets the reserved name of its
// position.
func (b *block) etched(tx *Tx, art *runestone.Artifact) (*RuneID, runestone.Rune, error) {
	var name *runestone.Rune
	switch {
	case art.Runestone != nil:
		if art.Runestone.Etching == nil {
			return nil, runestone.Rune{}, nil
		}
		name = art.Runestone.Etching.Rune
	case art.Cenotaph.Etching != nil:
		name = art.Cenotaph.Etching
	default:
		return nil, runestone.Rune{}, nil
	}
	id := RuneID{Block: uint64(b.height), Tx: tx.Index}
	if name == nil {
		return &id, runestone.ReservedRune(id.Block, id.Tx), nil
	}
	r := *name
	if runestone.U128(r).Cmp(runestone.U128(runestone.MinimumAtHeight(b.net, b.height))) < 0 || r.IsReserved() {
		return nil, r, nil
	}
	if _, ok := b.names[r]; ok {
		return nil, r, nil
	}
	if _, ok, err := b.base.IDByRune(r); err != nil || ok {
		return nil, r, err
	}
	if !commits(tx, r, b.height) {
		return nil, r, nil
	}
	return &id, r, nil
}

// etch creates the entry: a cenotaph's has no supply, terms or symbol.
func (b *block) etch(tx *Tx, art *runestone.Artifact, id RuneID, name runestone.Rune) {
	e := &Entry{ID: id, Etching: tx.Txid, Number: b.count, Rune: name, Timestamp: b.time}
	if r := art.Runestone; r != nil {
		et := r.Etching
		if et.Divisibility != nil {
			e.Divisibility = *et.Divisibility
		}
		if et.Premine != nil {
			e.Premine = *et.Premine
		}
		if et.Spacers != nil {
			e.Spacers = *et.Spacers
		}
		e.Symbol, e.Terms, e.Turbo = et.Symbol, et.Terms, et.Turbo
	}
	b.count++
	b.names[name] = id
	b.update(nil, e)
}
