package api

import (
	"context"
	"slices"

	"github.com/openexplorer/blockbook/bchain"
)

// accountUtxos lists the unspent outputs of an account's derived
// addresses, each with its address and path: pending outputs first, then
// confirmed ones newest first; within a height, address by address in
// derivation order (Blockbook's order).
func (s *UtxoService) accountUtxos(ctx context.Context, xd *bchain.XpubDescriptor, onlyConfirmed bool, gap int) ([]Utxo, error) {
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
	// Pending outputs (no height) first, then by height descending; stable
	// keeps the derivation order within a height.
	slices.SortStableFunc(out, func(x, y Utxo) int {
		hx, hy := x.Height, y.Height
		if hx == 0 {
			hx = 1 << 62
		}
		if hy == 0 {
			hy = 1 << 62
		}
		switch {
		case hx > hy:
			return -1
		case hx < hy:
			return 1
		}
		return 0
	})
	return out, nil
}
