package api

import (
	"context"
	"fmt"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/mempool"
)

// OutpointQueries answers an output's funding and spending state from the
// spend index and the mempool, for Electrum's blockchain.outpoint.*
// methods. Bitcoin-type services offer it.
type OutpointQueries interface {
	OutpointStatus(ctx context.Context, txid bchain.Hash, vout uint32) (OutpointStatus, error)
}

var _ OutpointQueries = (*UtxoService)(nil)

// OutpointStatus is an output's state. Heights are Electrum's: the block
// height of a confirmed tx; for a pending one 0 when all its inputs are
// confirmed and -1 when one spends a pending output.
type OutpointStatus struct {
	// Funded: the tx exists (confirmed or pending) and has the output.
	Funded bool
	Height int64
	// Spent: a confirmed or pending tx spends it.
	Spent         bool
	SpenderTxid   bchain.Hash
	SpenderHeight int64
}

// OutpointStatus reads an output's state: the index's tx and spend
// records first, then the mempool's pending txs and spends. An output
// index past the tx's outputs is not funded.
func (s *UtxoService) OutpointStatus(_ context.Context, txid bchain.Hash, vout uint32) (OutpointStatus, error) {
	var st OutpointStatus
	v, err := s.newView()
	if err != nil {
		return st, err
	}
	defer v.release()
	ta, err := db.ReadTxOutputs(v.snap, txid)
	if err != nil {
		return st, fmt.Errorf("outpoint %s:%d: %w", txid, vout, err)
	}
	switch mtx := s.mempoolTx(txid); {
	case ta != nil:
		if int64(vout) >= int64(len(ta.Outputs)) {
			return st, nil
		}
		st.Funded, st.Height = true, int64(ta.Height)
		spends, err := db.ReadSpendsAt(v.snap, ta.Height, ta.Index)
		if err != nil {
			return st, fmt.Errorf("spends of %s: %w", txid, err)
		}
		if sp := spends[vout]; sp != nil {
			st.Spent, st.SpenderTxid, st.SpenderHeight = true, sp.Txid, int64(sp.Height)
			return st, nil
		}
	case mtx != nil:
		if int64(vout) >= int64(len(mtx.Vout)) {
			return st, nil
		}
		st.Funded, st.Height = true, s.pendingHeight(v, mtx)
	default:
		return st, nil
	}
	if s.cfg.Mempool == nil {
		return st, nil
	}
	if stxid, _, ok := s.cfg.Mempool.SpentBy(mempool.Outpoint{Txid: txid, Vout: vout}); ok {
		st.Spent, st.SpenderTxid = true, stxid
		if sp := s.mempoolTx(stxid); sp != nil {
			st.SpenderHeight = s.pendingHeight(v, sp)
		}
	}
	return st, nil
}

// pendingHeight is a pending tx's Electrum height: -1 when it spends a
// pending output, else 0.
func (s *UtxoService) pendingHeight(v *view, tx *mempool.Tx) int64 {
	if s.hasPendingParent(v, tx) {
		return -1
	}
	return 0
}
