package api

import (
	"bytes"
	"context"
	"encoding/hex"
	"math/big"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/mempool"
)

// Unconfirmed data: the mempool's txs as they appear in address, utxo and
// tx answers, and its Golomb filters.

// mempoolTx returns a pending tx, or nil.
func (s *UtxoService) mempoolTx(txid bchain.Hash) *mempool.Tx {
	if s.cfg.Mempool == nil {
		return nil
	}
	tx, _ := s.cfg.Mempool.Tx(txid)
	return tx
}

// pendingTx is a mempool tx touching an address, with where it touches it.
type pendingTx struct {
	tx      *mempool.Tx
	indexes []int32
}

// pendingTxs returns the mempool txs touching desc, newest first, leaving
// out those the view already holds as confirmed (the mempool learns of a
// new block a moment after the index).
func (s *UtxoService) pendingTxs(v *view, desc bchain.AddrDesc) ([]pendingTx, error) {
	if s.cfg.Mempool == nil {
		return nil, nil
	}
	var out []pendingTx
	for _, at := range s.cfg.Mempool.AddrTxs(desc) {
		tx, ok := s.cfg.Mempool.Tx(at.Txid)
		if !ok {
			continue
		}
		ta, err := db.ReadTxOutputs(v.snap, at.Txid)
		if err != nil {
			return nil, err
		}
		if ta != nil {
			continue
		}
		out = append(out, pendingTx{tx: tx, indexes: at.Indexes})
	}
	return out, nil
}

// balanceDelta is what a pending tx adds to desc's balance (negative when
// it spends more from desc than it pays to it).
func balanceDelta(tx *mempool.Tx, desc bchain.AddrDesc) *big.Int {
	var d big.Int
	for i, od := range tx.OutDescs {
		if bytes.Equal(od, desc) {
			d.Add(&d, new(big.Int).SetUint64(tx.Vout[i].Value))
		}
	}
	for _, p := range tx.Prevouts {
		if p.Known && bytes.Equal(p.Desc, desc) {
			d.Sub(&d, new(big.Int).SetUint64(p.Value))
		}
	}
	return &d
}

// addPending fills the unconfirmed fields of an address answer and returns
// the pending txs that match the query's filter, which Blockbook lists
// before the confirmed ones on the first page. Like Blockbook, the filter
// applies to the unconfirmed counts too, and a to-height excludes the
// mempool altogether.
func (s *UtxoService) addPending(v *view, desc bchain.AddrDesc, q AddressQuery, out *Address) ([]pendingTx, error) {
	out.UnconfirmedBalance = NewAmount(0)
	if q.ToHeight > 0 {
		return nil, nil
	}
	pending, err := s.pendingTxs(v, desc)
	if err != nil {
		return nil, err
	}
	var listed []pendingTx
	bal := new(big.Int)
	for _, p := range pending {
		if !q.Filter.matches(p.indexes) {
			continue
		}
		out.UnconfirmedTxs++
		bal.Add(bal, balanceDelta(p.tx, desc))
		listed = append(listed, p)
	}
	out.UnconfirmedBalance = (*Amount)(bal)
	return listed, nil
}

// pendingUtxos returns desc's outputs created by pending txs and not spent
// by other pending txs (coinbase txs never reach a mempool).
func (s *UtxoService) pendingUtxos(pending []pendingTx, desc bchain.AddrDesc) []Utxo {
	var out []Utxo
	for _, p := range pending {
		for i, od := range p.tx.OutDescs {
			if !bytes.Equal(od, desc) {
				continue
			}
			if _, _, spent := s.cfg.Mempool.SpentBy(mempool.Outpoint{Txid: p.tx.Txid, Vout: uint32(i)}); spent {
				continue
			}
			out = append(out, Utxo{
				Txid: p.tx.Txid.String(), Vout: uint32(i), Value: NewAmount(p.tx.Vout[i].Value),
				LockTime: p.tx.LockTime,
			})
		}
	}
	return out
}

// spentInMempool reports a confirmed output that a pending tx spends.
func (s *UtxoService) spentInMempool(txid bchain.Hash, vout uint32) bool {
	if s.cfg.Mempool == nil {
		return false
	}
	_, _, ok := s.cfg.Mempool.SpentBy(mempool.Outpoint{Txid: txid, Vout: vout})
	return ok
}

// MempoolFilters answers the websocket's getMempoolFilters: the Golomb
// filter of every pending tx first seen at or after fromTimestamp. Like
// Blockbook it ignores the client's M: the answer states the P and M the
// filters were built with.
func (s *UtxoService) MempoolFilters(_ context.Context, scriptType string, fromTimestamp int64, _ uint64) (*MempoolFilters, error) {
	p := s.cfg.MempoolFilters
	if !p.Enabled() || s.cfg.Mempool == nil {
		return nil, userErr("Mempool filters are not enabled (mempool_golomb_filter_p)")
	}
	if scriptType != p.Scripts {
		return nil, userErr("Unsupported script filter %s", scriptType)
	}
	entries := s.cfg.Mempool.FilterEntries(fromTimestamp)
	out := &MempoolFilters{P: p.P, M: p.M(), ZeroedKey: p.ZeroedKey, Entries: make(map[string]string, len(entries))}
	for txid, f := range entries {
		out.Entries[txid.String()] = hex.EncodeToString(f)
	}
	return out, nil
}
