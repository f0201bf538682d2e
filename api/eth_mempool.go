package api

import (
	"context"
	"math/big"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/ethmempool"
)

// EthMempool is the read side of the Ethereum-type mempool.
type EthMempool interface {
	Tx(h bchain.Hash) (*ethmempool.Tx, bool)
	AddrTxs(addr bchain.AddrDesc) []*ethmempool.Tx
	Txs() []*ethmempool.Tx
	Status() ethmempool.Status
}

// pendingSums is what an address's pending txs would move, as Blockbook
// sums it: receiving the value paid to it, sending the value it pays plus
// the most each of its txs can cost in fees (gas price × gas limit).
type pendingSums struct {
	receiving, sending *big.Int
}

// pending returns an address's pending txs, newest first, and what they
// would move for it.
func (s *EthService) pending(desc bchain.AddrDesc) ([]*ethmempool.Tx, pendingSums) {
	sums := pendingSums{receiving: new(big.Int), sending: new(big.Int)}
	if s.cfg.EthMempool == nil {
		return nil, sums
	}
	txs := s.cfg.EthMempool.AddrTxs(desc)
	for _, t := range txs {
		if t.Eth.To != nil && string(t.Eth.To[:]) == string(desc) && t.Eth.Value != nil {
			sums.receiving.Add(sums.receiving, t.Eth.Value)
		}
		if string(t.Eth.From[:]) == string(desc) {
			if t.Eth.Value != nil {
				sums.sending.Add(sums.sending, t.Eth.Value)
			}
			if t.Eth.GasPrice != nil {
				sums.sending.Add(sums.sending, new(big.Int).Mul(t.Eth.GasPrice, new(big.Int).SetUint64(t.Eth.GasLimit)))
			}
		}
	}
	return txs, sums
}

// amountOrNil is nil for zero, so that the field is left out.
func amountOrNil(x *big.Int) *Amount {
	if x == nil || x.Sign() == 0 {
		return nil
	}
	return amount(x)
}

// Status answers /api and /api/v2, with the mempool's state.
func (s *EthService) Status(ctx context.Context) (*SystemInfo, error) {
	out, err := s.baseStatus(ctx)
	if err == nil && s.cfg.EthMempool != nil {
		ms := s.cfg.EthMempool.Status()
		out.Blockbook.InSyncMempool, out.Blockbook.MempoolSize, out.Blockbook.LastMempoolTime = ms.InSync, ms.Count, ms.LastSync
	}
	return out, err
}

// MempoolTxs lists the pending txs, newest first (the explorer's list).
func (s *EthService) MempoolTxs(_ context.Context, page, pageSize int) (*MempoolTxs, error) {
	out := &MempoolTxs{Txs: []MempoolTx{}}
	var all []*ethmempool.Tx
	if s.cfg.EthMempool != nil {
		all = s.cfg.EthMempool.Txs()
	}
	page, size, pages := clampPaging(page, pageSize, len(all), s.cfg.Limits.MaxPageSize)
	out.Paging, out.Size = Paging{Page: page, TotalPages: pages, ItemsOnPage: size}, len(all)
	start := (page - 1) * size
	for _, t := range all[start:min(start+size, len(all))] {
		out.Txs = append(out.Txs, MempoolTx{Txid: s.hashString(t.Eth.Hash), FirstSeen: t.FirstSeen.Unix(),
			Value: amount(t.Eth.Value), Inputs: 1, Outputs: 1})
	}
	return out, nil
}

// EthMempoolTxNotice describes a tx that entered the mempool: it touches
// its sender, recipient and the token transfer parties of its calldata.
func (s *EthService) EthMempoolTxNotice(tx *ethmempool.Tx) TxNotice {
	return TxNotice{Txid: tx.Eth.Hash, Descs: tx.Addrs, Render: func(ctx context.Context) (*Tx, error) {
		v, err := s.newView()
		if err != nil {
			return nil, err
		}
		defer v.release()
		r := newEthRenderer(s, v)
		r.noSpecific = true
		return r.tx(ctx, tx.Eth.Hash)
	}}
}
