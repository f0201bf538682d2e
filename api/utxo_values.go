package api

import (
	"context"
	"math/big"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// UtxoValues are the values of the outputs Utxos(ctx, descriptor, false,
// gap) lists, in no particular order: what a summary by value needs (the
// explorer's value bands), without Utxos' ordering (which reads the
// address's tx rows of every block holding outputs of several txs) and
// without building the answer's strings. The same outputs (pending ones
// included, those a pending tx spends left out) and the same MaxUtxos
// error.
func (s *UtxoService) UtxoValues(ctx context.Context, descriptor string, gap int) ([]uint64, error) {
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	xd, err := s.parseAccount(descriptor)
	if err == nil {
		a, err := s.account(ctx, v, xd, s.gapOf(gap))
		if err != nil {
			return nil, err
		}
		defer s.releaseAccount(a)
		var out []uint64
		for _, c := range a.chains {
			for _, ad := range c.addrs {
				if ad.bal == nil && s.cfg.Mempool == nil {
					continue // as accountUtxos: never used, nothing pending
				}
				if out, err = s.appendUtxoValues(v, ad.desc, out); err != nil {
					return nil, err
				}
			}
		}
		return out, nil
	}
	if !IsNotAccount(err) {
		return nil, err
	}
	desc, err := s.addrDesc(descriptor)
	if err != nil {
		return nil, err
	}
	return s.appendUtxoValues(v, desc, nil)
}

// appendUtxoValues is appendUtxos (onlyConfirmed false) keeping only the
// values.
func (s *UtxoService) appendUtxoValues(v *view, desc bchain.AddrDesc, out []uint64) ([]uint64, error) {
	pending, err := s.pendingTxs(v, desc)
	if err != nil {
		return nil, err
	}
	for _, u := range s.pendingUtxos(pending, desc) { // few: a pending tx's outputs
		out = append(out, (*big.Int)(u.Value).Uint64())
	}
	err = db.IterateUtxos(v.snap, desc, func(u *db.Utxo) (bool, error) {
		if len(out) >= s.cfg.Limits.MaxUtxos {
			return false, userErr("Address has more than %d unspent outputs; use an explorer with a higher limit", s.cfg.Limits.MaxUtxos)
		}
		if !s.spentInMempool(u.Txid, u.Vout) {
			out = append(out, u.Value)
		}
		return true, nil
	})
	return out, err
}
