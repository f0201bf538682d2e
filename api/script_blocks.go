package api

import (
	"bytes"
	"context"
	"fmt"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/mempool"
)

// ScriptQueries of the Bitcoin-type service, continued: UTXOs by script,
// and the block data Electrum and Esplora serve (headers, txids, a tx's
// place in its block).

// ScriptUtxos lists script's unspent outputs: the confirmed ones in chain
// order (height, position in the block, vout) without those a pending tx
// spends, then the pending ones (oldest tx first) that no pending tx
// spends. Like Utxos it refuses more than Limits.MaxUtxos outputs.
func (s *UtxoService) ScriptUtxos(ctx context.Context, script []byte) ([]ScriptUtxo, error) {
	desc, err := s.scriptDesc(script)
	if err != nil || desc == nil {
		return []ScriptUtxo{}, err
	}
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	return s.scriptUtxosIn(ctx, v, desc)
}

// scriptUtxosIn is ScriptUtxos over the view v.
func (s *UtxoService) scriptUtxosIn(ctx context.Context, v *view, desc bchain.AddrDesc) ([]ScriptUtxo, error) {
	out, err := s.confirmedUtxos(ctx, v, desc, true)
	if err != nil {
		return nil, err
	}
	pending, err := s.pendingScriptTxs(v, desc)
	if err != nil {
		return nil, err
	}
	for _, p := range pending {
		for i, od := range p.tx.OutDescs {
			if !bytes.Equal(od, desc) {
				continue
			}
			if _, _, spent := s.cfg.Mempool.SpentBy(mempool.Outpoint{Txid: p.tx.Txid, Vout: uint32(i)}); !spent {
				out = append(out, ScriptUtxo{Txid: p.tx.Txid, Vout: uint32(i), Value: int64(p.tx.Vout[i].Value)})
			}
		}
	}
	return out, nil
}

// confirmedUtxos lists desc's confirmed unspent outputs in chain order,
// without those a pending tx spends if asked; more than Limits.MaxUtxos
// is a user error.
func (s *UtxoService) confirmedUtxos(ctx context.Context, v *view, desc bchain.AddrDesc, dropPendingSpends bool) ([]ScriptUtxo, error) {
	out := []ScriptUtxo{}
	err := db.IterateUtxos(v.snap, desc, func(u *db.Utxo) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		if len(out) >= s.cfg.Limits.MaxUtxos {
			return false, userErr("Address has more than %d unspent outputs; use an explorer with a higher limit", s.cfg.Limits.MaxUtxos)
		}
		if !dropPendingSpends || !s.spentInMempool(u.Txid, u.Vout) {
			out = append(out, ScriptUtxo{Txid: u.Txid, Vout: u.Vout, Height: u.Height, Value: int64(u.Value)})
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	return out, chainOrderUtxos(v, desc, out)
}

// BlockHeaders returns the stored headers of up to count blocks from
// start; none when start is past the tip or count is not positive.
func (s *UtxoService) BlockHeaders(ctx context.Context, start uint32, count int) ([][]byte, error) {
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	out := [][]byte{}
	if !v.hasTip || start > v.tip.Height || count <= 0 {
		return out, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n := int(min(uint64(count), uint64(v.tip.Height-start)+1))
	out, err = db.ReadBlockHeaders(v.snap, start, n)
	if err != nil {
		return nil, err
	}
	for i, h := range out {
		if len(h) == 0 {
			return nil, fmt.Errorf("%w: no header of block %d", db.ErrCorrupt, start+uint32(i))
		}
	}
	if len(out) != n {
		return nil, fmt.Errorf("%w: no header of block %d", db.ErrCorrupt, start+uint32(len(out)))
	}
	return out, nil
}

// BlockTxids lists the txids of the block at height in block order; a
// height past the tip is a user error.
func (s *UtxoService) BlockTxids(_ context.Context, height uint32) ([]bchain.Hash, error) {
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	if !v.hasTip || height > v.tip.Height {
		return nil, userErr("Block height %d not found", height)
	}
	txids, err := db.ReadBlockTxids(v.snap, height)
	if err != nil {
		return nil, err
	}
	if txids == nil {
		return nil, fmt.Errorf("%w: no txids of block %d", db.ErrCorrupt, height)
	}
	return txids, nil
}

// TxPosition gives a confirmed tx's height and index in its block.
func (s *UtxoService) TxPosition(_ context.Context, txid bchain.Hash) (uint32, int, bool, error) {
	v, err := s.newView()
	if err != nil {
		return 0, 0, false, err
	}
	defer v.release()
	ta, err := db.ReadTxOutputs(v.snap, txid)
	if err != nil || ta == nil {
		return 0, 0, false, err
	}
	return ta.Height, int(ta.Index), true, nil
}
