package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/address/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/mempool"
)

// The Esplora front's tx queries (EsploraQueries): txs with the scripts of
// the outputs their inputs spend, and the spends of outputs.

// EsploraTx loads a tx confirmed in the index, pending in the mempool, or
// known only to the node (pending, before the mempool saw it).
func (s *UtxoService) EsploraTx(ctx context.Context, txid bchain.Hash) (*EsploraTx, error) {
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	return s.esploraTx(ctx, v, txid)
}

func (s *UtxoService) esploraTx(ctx context.Context, v *view, txid bchain.Hash) (*EsploraTx, error) {
	ta, meta, err := s.confirmedTx(v, txid)
	if err != nil {
		return nil, err
	}
	if ta == nil {
		if mtx := s.mempoolTx(txid); mtx != nil {
			return s.esploraPending(ctx, v, mtx)
		}
	}
	raw, err := s.rawTx(ctx, v, txid, meta)
	if errors.Is(err, bchain.ErrTxNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("esplora tx %s: %w", txid, err)
	}
	tx, err := s.parser.ParseTx(raw)
	if err != nil {
		return nil, fmt.Errorf("esplora tx %s: %w", txid, err)
	}
	out := &EsploraTx{Tx: tx, Prevouts: make([]*EsploraTxo, len(tx.Vin)), Weight: tx.Weight()}
	if ta != nil {
		out.Block = &EsploraBlockRef{Height: ta.Height, Hash: meta.Hash, Time: meta.Time}
	}
	for i := range tx.Vin {
		in := &tx.Vin[i]
		if in.Coinbase {
			continue
		}
		var prev db.TxAddr
		var found bool
		if ta != nil && i < len(ta.Inputs) {
			prev, found = ta.Inputs[i], true
		} else if prev, found, err = s.unconfirmedPrevout(ctx, v, in); err != nil {
			return nil, err
		}
		if !found {
			continue
		}
		if out.Prevouts[i], err = s.prevoutTxo(ctx, v, in, prev); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// esploraPending builds a pending tx from its mempool entry.
func (s *UtxoService) esploraPending(ctx context.Context, v *view, mtx *mempool.Tx) (*EsploraTx, error) {
	out := &EsploraTx{Tx: mtx.Tx, Prevouts: make([]*EsploraTxo, len(mtx.Vin)), Weight: mtx.Weight()}
	for i := range mtx.Vin {
		in := &mtx.Vin[i]
		if in.Coinbase || i >= len(mtx.Prevouts) || !mtx.Prevouts[i].Known {
			continue
		}
		p := mtx.Prevouts[i]
		var err error
		if out.Prevouts[i], err = s.prevoutTxo(ctx, v, in, db.TxAddr{Desc: p.Desc, Value: p.Value}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// prevoutTxo recovers the script an input spends from the descriptor the
// index keeps. The descriptor is the script itself except in two cases:
// an empty script (no descriptor: an OP_RETURN output cannot be spent, so
// a spent output without one had an empty script), and P2PK, which is
// indexed as the P2PKH of its key. A P2PKH spend ends its scriptSig with
// the key whose hash the script holds; when it does not, the output was
// P2PK and the parent tx is read for the exact script.
func (s *UtxoService) prevoutTxo(ctx context.Context, v *view, in *bchain.Vin, prev db.TxAddr) (*EsploraTxo, error) {
	desc := prev.Desc
	if len(desc) == 0 {
		return &EsploraTxo{Script: []byte{}, Value: prev.Value}, nil
	}
	if !isP2PKHScript(desc) || lastPushHashes(in.ScriptSig, desc[3:23]) {
		return &EsploraTxo{Script: desc, Value: prev.Value}, nil
	}
	script, err := s.parentScript(ctx, v, in)
	if err != nil {
		return nil, err
	}
	if script == nil { // the parent is gone (a pending parent replaced): keep what the index says
		script = desc
	}
	return &EsploraTxo{Script: script, Value: prev.Value}, nil
}

// parentScript reads the output an input spends from its tx.
func (s *UtxoService) parentScript(ctx context.Context, v *view, in *bchain.Vin) ([]byte, error) {
	var raw []byte
	if mtx := s.mempoolTx(in.PrevTxid); mtx != nil {
		raw = mtx.Raw
	} else {
		_, meta, err := s.confirmedTx(v, in.PrevTxid)
		if err != nil {
			return nil, err
		}
		raw, err = s.rawTx(ctx, v, in.PrevTxid, meta)
		if errors.Is(err, bchain.ErrTxNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("parent %s: %w", in.PrevTxid, err)
		}
	}
	ptx, err := s.parser.ParseTx(raw)
	if err != nil {
		return nil, fmt.Errorf("parent %s: %w", in.PrevTxid, err)
	}
	if int(in.PrevVout) >= len(ptx.Vout) {
		return nil, nil
	}
	return ptx.Vout[in.PrevVout].Script, nil
}

// isP2PKHScript reports OP_DUP OP_HASH160 <20> OP_EQUALVERIFY OP_CHECKSIG.
func isP2PKHScript(s []byte) bool {
	return len(s) == 25 && s[0] == 0x76 && s[1] == 0xa9 && s[2] == 0x14 && s[23] == 0x88 && s[24] == 0xac
}

// lastPushHashes reports whether the last data push of a scriptSig has the
// given HASH160.
func lastPushHashes(scriptSig, hash []byte) bool {
	var last []byte
	for i := 0; i < len(scriptSig); {
		op := int(scriptSig[i])
		i++
		var n int
		switch {
		case op >= 1 && op <= 75:
			n = op
		case op == 0x4c && i < len(scriptSig):
			n, i = int(scriptSig[i]), i+1
		case op == 0x4d && i+1 < len(scriptSig):
			n, i = int(scriptSig[i])|int(scriptSig[i+1])<<8, i+2
		case op == 0x4e && i+3 < len(scriptSig):
			n = int(scriptSig[i]) | int(scriptSig[i+1])<<8 | int(scriptSig[i+2])<<16 | int(scriptSig[i+3])<<24
			i += 4
		default:
			last = nil
			continue
		}
		if n < 0 || i+n > len(scriptSig) {
			return false
		}
		last = scriptSig[i : i+n]
		i += n
	}
	return last != nil && bytes.Equal(address.Hash160(last), hash)
}

// EsploraSpends finds the spender of each of the first n outputs of txid:
// the index's spend records, then the mempool's pending spends.
func (s *UtxoService) EsploraSpends(_ context.Context, txid bchain.Hash, n int) ([]EsploraSpend, error) {
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	spends, err := db.ReadSpends(v.snap, txid)
	if err != nil {
		return nil, fmt.Errorf("spends of %s: %w", txid, err)
	}
	out := make([]EsploraSpend, n)
	metas := map[uint32]*db.BlockMeta{}
	for vout := range out {
		if sp := spends[uint32(vout)]; sp != nil {
			meta := metas[sp.Height]
			if meta == nil {
				if meta, err = db.ReadBlockMeta(v.snap, sp.Height); err != nil {
					return nil, err
				}
				if meta == nil {
					return nil, fmt.Errorf("%w: spend of %s:%d at height %d without block", db.ErrCorrupt, txid, vout, sp.Height)
				}
				metas[sp.Height] = meta
			}
			out[vout] = EsploraSpend{Spent: true, Txid: sp.Txid, Vin: sp.Vin,
				Block: &EsploraBlockRef{Height: sp.Height, Hash: meta.Hash, Time: meta.Time}}
			continue
		}
		if s.cfg.Mempool == nil {
			continue
		}
		if stxid, vin, ok := s.cfg.Mempool.SpentBy(mempool.Outpoint{Txid: txid, Vout: uint32(vout)}); ok {
			out[vout] = EsploraSpend{Spent: true, Txid: stxid, Vin: vin}
		}
	}
	return out, nil
}
