package api

import (
	"context"
	"math"
	"sort"

	"github.com/openexplorer/blockbook/bchain"
)

// accountUtxos lists the unspent outputs of an account's derived
// addresses, each with its address and path: pending outputs first, then
// confirmed ones newest first; within a height, address by address in
// derivation order (Blockbook's order).
func (s *UtxoService) accountUtxos(ctx context.Context, xd *bchain.XpubDescriptor, onlyConfirmed bool, gap int, withRunes bool) ([]Utxo, error) {
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	a, err := s.account(ctx, v, xd, s.gapOf(gap))
	if err != nil {
		return nil, err
	}
	defer s.releaseAccount(a)
	out := []Utxo{}
	for _, c := range a.chains {
		for i, ad := range c.addrs {
			if ad.bal == nil && (onlyConfirmed || s.cfg.Mempool == nil) {
				continue
			}
			n := len(out)
			if out, err = s.appendUtxos(v, ad.desc, onlyConfirmed, out); err != nil {
				return nil, err
			}
			path := a.path(c.change, i)
			for j := n; j < len(out); j++ {
				out[j].Address, out[j].Path = ad.name, path
			}
		}
	}
	// Pending outputs (no height) first, then by height descending, with
	// Blockbook's sort and comparison ("x before y when x's height is at
	// least y's"): not a strict order, so only the same sort on the same
	// list gives Blockbook's order within a height.
	sort.Stable(blockbookUtxoOrder(out))
	if withRunes {
		return out, s.utxoRunes(v, out)
	}
	return out, nil
}

// blockbookUtxoOrder sorts an account's UTXOs as Blockbook does.
type blockbookUtxoOrder []Utxo

func (o blockbookUtxoOrder) Len() int      { return len(o) }
func (o blockbookUtxoOrder) Swap(i, j int) { o[i], o[j] = o[j], o[i] }
func (o blockbookUtxoOrder) Less(i, j int) bool {
	hi, hj := o[i].Height, o[j].Height
	if hi == 0 {
		hi = math.MaxInt64
	}
	if hj == 0 {
		hj = math.MaxInt64
	}
	return hi >= hj
}
