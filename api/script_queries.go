package api

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/mempool"
)

// The Bitcoin-type ScriptQueries: queries by output script over the
// index's addresses, addressBalance, addressUtxos and scriptHashes rows and
// the mempool. A script is looked up under the descriptor the index files
// it under (a P2PK script under its key's P2PKH script).

var _ ScriptQueries = (*UtxoService)(nil)

// maxScriptLen is the consensus limit of a script (and of the index's
// descriptors); longer input is a user error.
const maxScriptLen = 10_000

// scriptDesc returns the descriptor script is indexed under; nil for a
// script that is never indexed (OP_RETURN), which has no history.
func (s *UtxoService) scriptDesc(script []byte) (bchain.AddrDesc, error) {
	if len(script) == 0 || len(script) > maxScriptLen {
		return nil, userErr("Invalid script of %d bytes", len(script))
	}
	return s.parser.OutputAddrDesc(script), nil
}

// ScriptByHash finds the descriptor whose sha256 is sh: in the index, else
// among the descriptors pending txs touch (a fresh address a wallet asks
// about as soon as a payment to it is announced).
func (s *UtxoService) ScriptByHash(_ context.Context, sh [32]byte) ([]byte, bool, error) {
	v, err := s.newView()
	if err != nil {
		return nil, false, err
	}
	defer v.release()
	desc, err := db.ReadScriptByHash(v.snap, db.ScriptHash(sh))
	if err != nil {
		return nil, false, err
	}
	if desc == nil && s.cfg.Mempool != nil {
		if d, ok := s.cfg.Mempool.ScriptByHash(sh); ok {
			return d, true, nil
		}
	}
	return desc, desc != nil, nil
}

// ScriptHistory lists the txs touching script, confirmed in chain order
// then pending oldest first. The count (the balance row's txs plus the
// pending txs) is checked against limit before any history is read; a
// negative limit means none.
func (s *UtxoService) ScriptHistory(ctx context.Context, script []byte, limit int) ([]ScriptTx, error) {
	desc, err := s.scriptDesc(script)
	if err != nil || desc == nil {
		return []ScriptTx{}, err
	}
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	bal, err := db.ReadAddrBalance(v.snap, desc)
	if err != nil {
		return nil, err
	}
	pending, err := s.pendingScriptTxs(v, desc)
	if err != nil {
		return nil, err
	}
	n := len(pending)
	if bal != nil {
		n += int(bal.Txs)
	}
	if limit >= 0 && n > limit {
		return nil, &Error{Msg: fmt.Sprintf("History of %d txs is over the limit of %d", n, limit),
			Err: fmt.Errorf("%w: %d txs, limit %d", ErrTooManyTxs, n, limit)}
	}
	out := make([]ScriptTx, 0, n)
	if bal != nil {
		if out, err = s.confirmedHistory(ctx, v, desc, out); err != nil {
			return nil, err
		}
	}
	for _, p := range pending {
		out = append(out, s.pendingScriptTx(v, p))
	}
	return out, nil
}

// confirmedHistory appends desc's confirmed txs in chain order, each with
// its position in its block (stored in the addresses rows).
func (s *UtxoService) confirmedHistory(ctx context.Context, v *view, desc bchain.AddrDesc, out []ScriptTx) ([]ScriptTx, error) {
	start := len(out)
	err := db.IterateAddrRows(v.snap, desc, func(h uint32, txs []db.AddrTx) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		for i := range txs {
			out = append(out, ScriptTx{Txid: txs[i].Txid, Height: h, Pos: int(txs[i].Index)})
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	slices.Reverse(out[start:]) // stored newest first, a block's txs last first
	return out, nil
}

// pendingScriptTxs returns the pending txs touching desc oldest first (ties
// by txid), without those the view holds as confirmed.
func (s *UtxoService) pendingScriptTxs(v *view, desc bchain.AddrDesc) ([]pendingTx, error) {
	pending, err := s.pendingTxs(v, desc)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(pending, func(a, b pendingTx) int {
		if c := cmp.Compare(a.tx.FirstSeen, b.tx.FirstSeen); c != 0 {
			return c
		}
		return bytes.Compare(a.tx.Txid[:], b.tx.Txid[:])
	})
	return pending, nil
}

// pendingScriptTx describes a pending tx of a history: its fee and
// whether it spends an output of another pending tx.
func (s *UtxoService) pendingScriptTx(v *view, p pendingTx) ScriptTx {
	st := ScriptTx{Txid: p.tx.Txid, Pos: -1, FirstSeen: p.tx.FirstSeen}
	if fee, ok := p.tx.Fee(); ok {
		st.Fee = int64(fee)
	}
	st.UnconfirmedInputs = s.hasPendingParent(v, p.tx)
	return st
}

// hasPendingParent reports a pending tx spending an output of a tx that is
// in the mempool and not confirmed in the view.
func (s *UtxoService) hasPendingParent(v *view, tx *mempool.Tx) bool {
	for i := range tx.Vin {
		prev := tx.Vin[i].PrevTxid
		if _, ok := s.cfg.Mempool.Tx(prev); !ok {
			continue
		}
		if ta, err := db.ReadTxOutputs(v.snap, prev); err == nil && ta == nil {
			return true
		}
	}
	return false
}

// ScriptBalance sums script's confirmed and pending txos in Esplora's way:
// an output paid and later spent counts as funded and as spent.
func (s *UtxoService) ScriptBalance(ctx context.Context, script []byte) (*ScriptBalance, error) {
	out := &ScriptBalance{}
	desc, err := s.scriptDesc(script)
	if err != nil || desc == nil {
		return out, err
	}
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	bal, err := db.ReadAddrBalance(v.snap, desc)
	if err != nil {
		return nil, err
	}
	if bal != nil {
		if err := chainStats(ctx, v, desc, bal, &out.Chain); err != nil {
			return nil, err
		}
	}
	pending, err := s.pendingTxs(v, desc)
	if err != nil {
		return nil, err
	}
	for _, p := range pending {
		mempoolStats(p.tx, desc, &out.Mempool)
	}
	return out, nil
}

// chainStats fills the confirmed stats: sums and tx count from the
// balance row, txo counts from the codes of the addresses rows.
func chainStats(ctx context.Context, v *view, desc bchain.AddrDesc, bal *db.AddrBalance, st *ScriptStats) error {
	st.TxCount = int64(bal.Txs)
	st.FundedTxoSum = int64(bal.Received())
	st.SpentTxoSum = int64(bal.Sent)
	err := db.IterateAddrRows(v.snap, desc, func(_ uint32, txs []db.AddrTx) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		for i := range txs {
			for _, idx := range txs[i].Indexes {
				if idx >= 0 {
					st.FundedTxoCount++
				} else {
					st.SpentTxoCount++
				}
			}
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	if st.FundedTxoCount-st.SpentTxoCount != int64(bal.Utxos) {
		return fmt.Errorf("%w: address %s has %d funded and %d spent txos but %d utxos", db.ErrCorrupt, desc,
			st.FundedTxoCount, st.SpentTxoCount, bal.Utxos)
	}
	return nil
}

// mempoolStats adds one pending tx to the mempool stats.
func mempoolStats(tx *mempool.Tx, desc bchain.AddrDesc, st *ScriptStats) {
	st.TxCount++
	for i, od := range tx.OutDescs {
		if bytes.Equal(od, desc) {
			st.FundedTxoCount++
			st.FundedTxoSum += int64(tx.Vout[i].Value)
		}
	}
	for _, p := range tx.Prevouts {
		if p.Known && bytes.Equal(p.Desc, desc) {
			st.SpentTxoCount++
			st.SpentTxoSum += int64(p.Value)
		}
	}
}
