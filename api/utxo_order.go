package api

import (
	"bytes"
	"slices"
	"sort"

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
// outs lists outputs as the index does (db.IterateUtxos, perhaps with some
// left out): grouped by height, by txid within a height. Only blocks with
// outputs of more than one tx need places, which are read for all of them
// at once, and only for the txs paying desc an output at an index one of
// the block's outputs has (db.AddrPayingTxs); the others' places are 0.
// (Reading the outputs' own txs' rows instead, for their positions, took
// twice as long: a point read per tx in a large family.)
func blockPlaces[T any](v *view, desc bchain.AddrDesc, outs []T, ref func(*T) outputRef) ([]int32, error) {
	places := make([]int32, len(outs))
	type run struct {
		start, end int
		low        uint64 // the set of the run's vouts below 64
		high       bool   // some vout is 64 or more: look at the run
	}
	var runs []run
	var heights []uint32
	for i := 0; i < len(outs); {
		first := ref(&outs[i])
		j, mixed := i+1, false
		for ; j < len(outs) && ref(&outs[j]).height == first.height; j++ {
			mixed = mixed || *ref(&outs[j]).txid != *first.txid
		}
		if mixed {
			r := run{start: i, end: j}
			for k := i; k < j; k++ {
				if o := ref(&outs[k]).vout; o < 64 {
					r.low |= 1 << o
				} else {
					r.high = true
				}
			}
			runs, heights = append(runs, r), append(heights, first.height)
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
		return r.high && slices.ContainsFunc(outs[r.start:r.end], func(o T) bool { return ref(&o).vout == vout })
	}
	paying, err := db.AddrPayingTxs(v.snap, desc, heights, pays)
	if err != nil {
		return nil, err
	}
	for k, r := range runs {
		// Look each paying tx's outputs up: the run is the shorter list and
		// already sorted by txid.
		run := outs[r.start:r.end]
		for _, t := range paying[k] {
			at := sort.Search(len(run), func(i int) bool { return bytes.Compare(ref(&run[i]).txid[:], t.Txid[:]) >= 0 })
			for ; at < len(run) && *ref(&run[at]).txid == t.Txid; at++ {
				places[r.start+at] = t.Place
			}
		}
	}
	return places, nil
}

// placeOrder sorts outputs of one block with their places (blockPlaces),
// swapping both in place: by place, then vout; backwards, both descending.
type placeOrder[T any] struct {
	us        []T
	places    []int32
	ref       func(*T) outputRef
	backwards bool
}

func (o *placeOrder[T]) Len() int { return len(o.us) }
func (o *placeOrder[T]) Swap(i, j int) {
	o.us[i], o.us[j] = o.us[j], o.us[i]
	o.places[i], o.places[j] = o.places[j], o.places[i]
}
func (o *placeOrder[T]) Less(i, j int) bool {
	if o.backwards {
		i, j = j, i
	}
	if o.places[i] != o.places[j] {
		return o.places[i] < o.places[j]
	}
	return o.ref(&o.us[i]).vout < o.ref(&o.us[j]).vout
}

// sortBlockRuns sorts each block's run of us (grouped by height) with its
// places, keeping the blocks' order.
func sortBlockRuns[T any](us []T, places []int32, ref func(*T) outputRef, backwards bool) {
	o := &placeOrder[T]{ref: ref, backwards: backwards} // one allocation, not one a run
	for i := 0; i < len(us); {
		h, j := ref(&us[i]).height, i+1
		for j < len(us) && ref(&us[j]).height == h {
			j++
		}
		o.us, o.places = us[i:j], places[i:j]
		sort.Stable(o)
		i = j
	}
}

func utxoRef(u *db.Utxo) outputRef          { return outputRef{u.Height, u.Vout, &u.Txid} }
func scriptUtxoRef(u *ScriptUtxo) outputRef { return outputRef{u.Height, u.Vout, &u.Txid} }

// orderBlockUtxos orders each block's unspent outputs of desc (as
// db.IterateUtxos lists them: blocks newest first, by txid within a
// block) as Blockbook lists them: it keeps an address's outputs in the
// order its connect added them (block order, then output order) and
// answers that list backwards, so the last tx of the block comes first
// and, within a tx, the highest output index. Blocks keep their order.
func orderBlockUtxos(v *view, desc bchain.AddrDesc, us []db.Utxo) error {
	places, err := blockPlaces(v, desc, us, utxoRef)
	if err != nil {
		return err
	}
	sortBlockRuns(us, places, utxoRef, true)
	return nil
}

// chainOrderUtxos orders confirmed outputs (as db.IterateUtxos lists them)
// by height, position in the block and vout. A block's outputs are
// distinct in (place, vout), so reversing the list before sorting each
// block's run changes nothing but the blocks' order.
func chainOrderUtxos(v *view, desc bchain.AddrDesc, us []ScriptUtxo) error {
	places, err := blockPlaces(v, desc, us, scriptUtxoRef)
	if err != nil {
		return err
	}
	slices.Reverse(us)
	slices.Reverse(places)
	sortBlockRuns(us, places, scriptUtxoRef, false)
	return nil
}
