package eth

import (
	"context"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/openexplorer/blockbook/bchain"
)

// rpcReceipt is a receipt as eth_getTransactionReceipt/eth_getBlockReceipts
// return it. Status is a pointer: pre-Byzantium receipts carry a state root
// instead, and then the outcome is unknown.
type rpcReceipt struct {
	TxHash            common.Hash     `json:"transactionHash"`
	Status            *hexutil.Uint64 `json:"status"`
	GasUsed           hexutil.Uint64  `json:"gasUsed"`
	EffectiveGasPrice *hexutil.Big    `json:"effectiveGasPrice"`
	BlobGasUsed       *hexutil.Uint64 `json:"blobGasUsed"`
	BlobGasPrice      *hexutil.Big    `json:"blobGasPrice"`
	ContractAddress   *common.Address `json:"contractAddress"`
	Logs              []rpcLog        `json:"logs"`
	// OP-stack chains (op-geth) add the L1 data fee; other nodes leave
	// these out or send null (Arbitrum's Nitro).
	L1Fee       *hexutil.Big `json:"l1Fee"`
	L1FeeScalar string       `json:"l1FeeScalar"`
	L1GasPrice  *hexutil.Big `json:"l1GasPrice"`
	L1GasUsed   *hexutil.Big `json:"l1GasUsed"`
}

type rpcLog struct {
	Address common.Address `json:"address"`
	Topics  []common.Hash  `json:"topics"`
	Data    hexutil.Bytes  `json:"data"`
	Index   hexutil.Uint   `json:"logIndex"`
	Removed bool           `json:"removed"`
}

// receiptBatch is how many eth_getTransactionReceipt calls go in one batch
// request on the fallback path.
const receiptBatch = 100

// receipts returns the receipts of a block's txs in order. It uses
// eth_getBlockReceipts (one call) and, once a node says it lacks that
// method, per-tx eth_getTransactionReceipt in batches from then on.
func (n *Node) receipts(ctx context.Context, block bchain.Hash, txs []bchain.Hash) ([]*bchain.EthReceipt, error) {
	if len(txs) == 0 {
		return nil, nil
	}
	var rs []*rpcReceipt
	if !n.noBlockReceipts.Load() {
		err := n.rpc.call(ctx, &rs, "eth_getBlockReceipts", common.Hash(block))
		if err != nil && !isMethodNotFound(err) {
			return nil, err
		}
		if err != nil {
			n.log.Info("node lacks eth_getBlockReceipts; fetching receipts per transaction", "err", err)
			n.noBlockReceipts.Store(true)
			rs = nil
		}
	}
	if n.noBlockReceipts.Load() {
		var err error
		if rs, err = n.txReceipts(ctx, txs); err != nil {
			return nil, err
		}
	}
	return checkReceipts(block, txs, rs)
}

func (n *Node) txReceipts(ctx context.Context, txs []bchain.Hash) ([]*rpcReceipt, error) {
	out := make([]*rpcReceipt, len(txs))
	for start := 0; start < len(txs); start += receiptBatch {
		chunk := txs[start:min(start+receiptBatch, len(txs))]
		elems := make([]rpc.BatchElem, len(chunk))
		for i, h := range chunk {
			elems[i] = rpc.BatchElem{Method: "eth_getTransactionReceipt", Args: []any{common.Hash(h)}, Result: &out[start+i]}
		}
		if err := n.rpc.batch(ctx, elems); err != nil {
			return nil, err
		}
		for i, e := range elems {
			if e.Error != nil {
				return nil, fmt.Errorf("receipt of tx %s: %w", chunk[i], e.Error)
			}
			if out[start+i] == nil {
				return nil, fmt.Errorf("%w: node has no receipt for tx %s", bchain.ErrNodeUnavailable, chunk[i])
			}
		}
	}
	return out, nil
}

// Receipts returns the receipts of mined txs, in batches of
// eth_getTransactionReceipt.
func (n *Node) Receipts(ctx context.Context, txs []bchain.Hash) ([]*bchain.EthReceipt, error) {
	raw, err := n.txReceipts(ctx, txs)
	if err != nil {
		return nil, err
	}
	out := make([]*bchain.EthReceipt, len(raw))
	for i, r := range raw {
		out[i] = convertReceipt(r)
	}
	return out, nil
}

func convertReceipt(r *rpcReceipt) *bchain.EthReceipt {
	out := &bchain.EthReceipt{Status: bchain.EthStatusUnknown, GasUsed: uint64(r.GasUsed)}
	if r.Status != nil {
		out.Status = bchain.EthStatusFailure
		if *r.Status == 1 {
			out.Status = bchain.EthStatusSuccess
		}
	}
	if r.EffectiveGasPrice != nil {
		out.EffectiveGasPrice = new(big.Int).Set(r.EffectiveGasPrice.ToInt())
	}
	if r.BlobGasUsed != nil && r.BlobGasPrice != nil {
		out.BlobGasUsed, out.BlobGasPrice = uint64(*r.BlobGasUsed), new(big.Int).Set(r.BlobGasPrice.ToInt())
	}
	if r.ContractAddress != nil && *r.ContractAddress != (common.Address{}) {
		a := bchain.EthAddress(*r.ContractAddress)
		out.ContractAddress = &a
	}
	for _, l := range r.Logs {
		if l.Removed {
			continue
		}
		el := bchain.EthLog{Address: bchain.EthAddress(l.Address), Data: l.Data, Index: uint(l.Index), Topics: make([]bchain.Hash, len(l.Topics))}
		for i, t := range l.Topics {
			el.Topics[i] = bchain.Hash(t)
		}
		out.Logs = append(out.Logs, el)
	}
	out.L1 = convertL1Fee(r)
	return out
}

// convertL1Fee keeps an OP-stack receipt's L1 fee fields; nil when the
// receipt has none of them.
func convertL1Fee(r *rpcReceipt) *bchain.EthL1Fee {
	if r.L1Fee == nil && r.L1FeeScalar == "" && r.L1GasPrice == nil && r.L1GasUsed == nil {
		return nil
	}
	cp := func(x *hexutil.Big) *big.Int {
		if x == nil {
			return nil
		}
		return new(big.Int).Set(x.ToInt())
	}
	return &bchain.EthL1Fee{Fee: cp(r.L1Fee), FeeScalar: r.L1FeeScalar, GasPrice: cp(r.L1GasPrice), GasUsed: cp(r.L1GasUsed)}
}
