package api

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// orderBlockUtxos orders each block's unspent outputs (the index keys them
// by txid; us lists blocks newest first) as Blockbook lists them: it keeps
// an address's outputs in the order its connect added them (block order,
// then output order) and answers that list backwards, so the last tx of
// the block comes first and, within a tx, the highest output index. Only
// blocks with outputs of more than one tx need their txs' indexes in the
// block, read from the txs' own rows at once; a coinbase's is 0. (Reading
// the address's rows at those blocks and the txids of their txs instead
// resolved several times as many txs.)
func orderBlockUtxos(v *view, us []db.Utxo) error {
	index := make([]uint32, len(us)) // of us[i]'s tx, where needed
	var need []int                   // places in us whose tx's index is read
	var txids []bchain.Hash
	for i := 0; i < len(us); {
		j, mixed := i+1, false
		for ; j < len(us) && us[j].Height == us[i].Height; j++ {
			mixed = mixed || us[j].Txid != us[i].Txid
		}
		for k := i; mixed && k < j; k++ {
			if !us[k].Coinbase {
				need, txids = append(need, k), append(txids, us[k].Txid)
			}
		}
		i = j
	}
	if len(txids) > 0 {
		pos, err := db.ReadTxPositions(v.snap, txids)
		if err != nil {
			return err
		}
		for n, k := range need {
			if pos[n].Height != us[k].Height {
				return fmt.Errorf("%w: unspent output %s:%d of block %d, its tx in block %d", db.ErrCorrupt, us[k].Txid, us[k].Vout, us[k].Height, pos[n].Height)
			}
			index[k] = pos[n].Index
		}
	}
	order := make([]int, len(us))
	for i := range order {
		order[i] = i
	}
	// Heights keep their newest-first order.
	slices.SortFunc(order, func(a, b int) int {
		ua, ub := &us[a], &us[b]
		if ua.Height != ub.Height {
			return cmp.Compare(ub.Height, ua.Height)
		}
		if c := cmp.Compare(index[b], index[a]); c != 0 {
			return c
		}
		return cmp.Compare(ub.Vout, ua.Vout)
	})
	sorted := make([]db.Utxo, len(us))
	for i, k := range order {
		sorted[i] = us[k]
	}
	copy(us, sorted)
	return nil
}
