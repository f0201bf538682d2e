package api

import (
	"context"
	"fmt"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/mempool"
)

// TxNotice is a tx to announce to websocket subscribers: what it touches,
// and how to render it, which is done only when someone listens.
type TxNotice struct {
	Txid bchain.Hash
	// Descs are the address descriptors of its inputs' prevouts and of its
	// outputs (duplicates possible).
	Descs []bchain.AddrDesc
	// Render builds the tx as answers show it.
	Render func(ctx context.Context) (*Tx, error)
}

// MempoolTxNotice describes a tx that just entered the mempool.
func (s *UtxoService) MempoolTxNotice(tx *mempool.Tx) TxNotice {
	return TxNotice{Txid: tx.Txid, Descs: tx.Descs(), Render: func(ctx context.Context) (*Tx, error) {
		v, err := s.newView()
		if err != nil {
			return nil, err
		}
		defer v.release()
		return s.renderTx(ctx, v, tx.Tx, txRecord{mtx: tx}, true)
	}}
}

// BlockTxNotices describes the txs of a block the index just connected.
// Txs the index no longer holds (the block was already undone) are left out.
func (s *UtxoService) BlockTxNotices(_ context.Context, blk *bchain.Block) ([]TxNotice, error) {
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	meta, err := db.ReadBlockMeta(v.snap, blk.Height)
	if err != nil || meta == nil || meta.Hash != blk.Hash {
		return nil, err
	}
	out := make([]TxNotice, 0, len(blk.Txs))
	for i := range blk.Txs {
		tx := &blk.Txs[i]
		ta, err := db.ReadTxAddresses(v.snap, tx.Txid)
		if err != nil {
			return nil, err
		}
		if ta == nil || ta.Height != blk.Height {
			return nil, fmt.Errorf("%w: tx %s of block %d not indexed", db.ErrCorrupt, tx.Txid, blk.Height)
		}
		descs := make([]bchain.AddrDesc, 0, len(ta.Inputs)+len(ta.Outputs))
		for _, a := range ta.Inputs {
			if len(a.Desc) > 0 {
				descs = append(descs, a.Desc)
			}
		}
		for _, a := range ta.Outputs {
			if len(a.Desc) > 0 {
				descs = append(descs, a.Desc)
			}
		}
		out = append(out, TxNotice{Txid: tx.Txid, Descs: descs, Render: func(ctx context.Context) (*Tx, error) {
			v, err := s.newView()
			if err != nil {
				return nil, err
			}
			defer v.release()
			return s.renderTx(ctx, v, tx, txRecord{ta: ta, meta: meta}, true)
		}})
	}
	return out, nil
}

// AddrDesc validates an address for subscriptions; the error is a user
// error naming the address, as Blockbook words it.
func (s *UtxoService) AddrDesc(address string) (bchain.AddrDesc, error) {
	desc, err := s.parser.AddrDescFromAddress(address)
	if err != nil {
		return nil, &Error{Msg: fmt.Sprintf("Invalid address %q, %v", address, err), Err: err}
	}
	return desc, nil
}

// DescAddress renders a descriptor as the address notifications name.
func (s *UtxoService) DescAddress(desc bchain.AddrDesc) (string, bool) {
	addrs, _ := s.descAddresses(desc)
	if len(addrs) != 1 {
		return "", false
	}
	return addrs[0], true
}
