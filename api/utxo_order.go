package api

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// outputRef is what ordering needs of an unspent output.
type outputRef struct {
	height uint32
	vout   uint32
	txid   *bchain.Hash
}

// blockPlaces returns each output's place in its block among desc's txs
// there (0 for the first): the key that orders a block's UTXOs as
// Blockbook and Electrum list them, where the index keys them by txid.
// outs lists outputs grouped by height (each height's in one run, as the
// index lists them). Only blocks with outputs of more than one tx need
// places, which are read for all of them at once, and only for the txs
// paying desc an output at an index one of the block's outputs has
// (db.AddrPayingTxs); the others' places are 0. (Reading the outputs' own
// txs' rows instead, for their positions, took twice as long: a point
// read per tx in a large family.)
func blockPlaces(v *view, desc bchain.AddrDesc, outs []outputRef) ([]int32, error) {
	places := make([]int32, len(outs))
	type run struct {
		start, end int
		low        uint64 // the set of the run's vouts below 64
		high       bool   // some vout is 64 or more: look at the run
	}
	var runs []run
	var heights []uint32
	for i := 0; i < len(outs); {
		j, mixed := i+1, false
		for ; j < len(outs) && outs[j].height == outs[i].height; j++ {
			mixed = mixed || *outs[j].txid != *outs[i].txid
		}
		if mixed {
			r := run{start: i, end: j}
			for _, o := range outs[i:j] {
				if o.vout < 64 {
					r.low |= 1 << o.vout
				} else {
					r.high = true
				}
			}
			runs, heights = append(runs, r), append(heights, outs[i].height)
		}
		i = j
	}
	if len(runs) == 0 {
		return places, nil
	}
	pays := func(i int, vout uint32) bool {
		r := &runs[i]
		if vout < 64 {
			return r.low&(1<<vout) != 0
		}
		return r.high && slices.ContainsFunc(outs[r.start:r.end], func(o outputRef) bool { return o.vout == vout })
	}
	paying, err := db.AddrPayingTxs(v.snap, desc, heights, pays)
	if err != nil {
		return nil, err
	}
	byTxid := func(a, b db.PayingTx) int { return bytes.Compare(a.Txid[:], b.Txid[:]) }
	outByTxid := func(a, b outputRef) int { return bytes.Compare(a.txid[:], b.txid[:]) }
	for k, r := range runs {
		run := outs[r.start:r.end]
		if !slices.IsSortedFunc(run, outByTxid) {
			// Not as the index lists them: look each output's tx up.
			txs := paying[k]
			slices.SortFunc(txs, byTxid)
			for i := range run {
				if at, ok := slices.BinarySearchFunc(txs, *run[i].txid, func(t db.PayingTx, h bchain.Hash) int {
					return bytes.Compare(t.Txid[:], h[:])
				}); ok {
					places[r.start+i] = txs[at].Place
				}
			}
			continue
		}
		// As the index lists them, by txid: look each paying tx's outputs
		// up, the run being the shorter list and already sorted.
		for _, t := range paying[k] {
			at, ok := slices.BinarySearchFunc(run, t.Txid, func(o outputRef, h bchain.Hash) int {
				return bytes.Compare(o.txid[:], h[:])
			})
			for ; ok && at < len(run) && *run[at].txid == t.Txid; at++ {
				places[r.start+at] = t.Place
			}
		}
	}
	return places, nil
}

// placed is an output with its place (blockPlaces).
type placed[T any] struct {
	place int32
	u     T
}

// placeAll pairs each of us with its place (blockPlaces of ref of each).
func placeAll[T any](v *view, desc bchain.AddrDesc, us []T, ref func(*T) outputRef) ([]placed[T], error) {
	refs := make([]outputRef, len(us))
	for i := range us {
		refs[i] = ref(&us[i])
	}
	places, err := blockPlaces(v, desc, refs)
	if err != nil {
		return nil, err
	}
	ps := make([]placed[T], len(us))
	for i := range us {
		ps[i] = placed[T]{places[i], us[i]}
	}
	return ps, nil
}

// orderBlockUtxos orders each block's unspent outputs of desc (the index
// keys them by txid; us lists blocks newest first) as Blockbook lists
// them: it keeps an address's outputs in the order its connect added them
// (block order, then output order) and answers that list backwards, so the
// last tx of the block comes first and, within a tx, the highest output
// index. Blocks keep their order; each block's run is sorted on its own.
func orderBlockUtxos(v *view, desc bchain.AddrDesc, us []db.Utxo) error {
	ps, err := placeAll(v, desc, us, func(u *db.Utxo) outputRef { return outputRef{u.Height, u.Vout, &u.Txid} })
	if err != nil {
		return err
	}
	for i := 0; i < len(ps); {
		j := i + 1
		for j < len(ps) && ps[j].u.Height == ps[i].u.Height {
			j++
		}
		slices.SortStableFunc(ps[i:j], func(a, b placed[db.Utxo]) int {
			if c := cmp.Compare(b.place, a.place); c != 0 {
				return c
			}
			return cmp.Compare(b.u.Vout, a.u.Vout)
		})
		i = j
	}
	for i := range ps {
		us[i] = ps[i].u
	}
	return nil
}

// chainOrderUtxos orders confirmed outputs (the index lists them newest
// block first, by txid within a block) by height, position in the block
// and vout.
func chainOrderUtxos(v *view, desc bchain.AddrDesc, us []ScriptUtxo) error {
	ps, err := placeAll(v, desc, us, func(u *ScriptUtxo) outputRef { return outputRef{u.Height, u.Vout, &u.Txid} })
	if err != nil {
		return err
	}
	slices.SortStableFunc(ps, func(a, b placed[ScriptUtxo]) int {
		if c := cmp.Compare(a.u.Height, b.u.Height); c != 0 {
			return c
		}
		if c := cmp.Compare(a.place, b.place); c != 0 {
			return c
		}
		return cmp.Compare(a.u.Vout, b.u.Vout)
	})
	for i := range ps {
		us[i] = ps[i].u
	}
	return nil
}
