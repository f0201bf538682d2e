package api

import (
	"cmp"
	"slices"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// orderBlockUtxos orders each block's unspent outputs of desc (the index
// keys them by txid; us lists blocks newest first) as Blockbook lists
// them: it keeps an address's outputs in the order its connect added them
// (block order, then output order) and answers that list backwards, so the
// last tx of the block comes first and, within a tx, the highest output
// index. Only blocks with outputs of more than one tx need their txs'
// places, which are read for all of them at once, and only for the txs
// paying desc an output at an index one of them has. (Reading the
// outputs' own txs' rows instead, for their positions, took twice as
// long: a point read per tx in a large family.)
func orderBlockUtxos(v *view, desc bchain.AddrDesc, us []db.Utxo) error {
	var heights []uint32
	vouts := make(map[uint32]map[int32]bool) // per height needing places: a set, asked per index of each of its txs
	for i := 0; i < len(us); {
		j, mixed := i+1, false
		for ; j < len(us) && us[j].Height == us[i].Height; j++ {
			mixed = mixed || us[j].Txid != us[i].Txid
		}
		if mixed {
			h := us[i].Height
			heights = append(heights, h)
			set := make(map[int32]bool, j-i)
			for _, u := range us[i:j] {
				set[int32(u.Vout)] = true
			}
			vouts[h] = set
		}
		i = j
	}
	var places map[db.TxAtHeight]int
	if len(heights) > 0 {
		pays := func(h uint32, t *db.AddrTx) bool {
			set := vouts[h]
			return slices.ContainsFunc(t.Indexes, func(x int32) bool { return x >= 0 && set[x] })
		}
		var err error
		if places, err = db.AddrTxPlaces(v.snap, desc, heights, pays); err != nil {
			return err
		}
	}
	// Each output's sort key, looked up once rather than per comparison.
	type placed struct {
		place int
		u     db.Utxo
	}
	ps := make([]placed, len(us))
	for i, u := range us {
		ps[i] = placed{places[db.TxAtHeight{Height: u.Height, Txid: u.Txid}], u}
	}
	// Stable: heights keep their newest-first order.
	slices.SortStableFunc(ps, func(a, b placed) int {
		if a.u.Height != b.u.Height {
			return cmp.Compare(b.u.Height, a.u.Height)
		}
		if c := cmp.Compare(b.place, a.place); c != 0 {
			return c
		}
		return cmp.Compare(b.u.Vout, a.u.Vout)
	})
	for i := range ps {
		us[i] = ps[i].u
	}
	return nil
}
