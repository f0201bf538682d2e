package eth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/openexplorer/blockbook/bchain"
)

// MaxRangeBlocks caps the blocks of one BlockRange call: a batch of 2×N
// requests stays well under the batch limits nodes apply (geth: 1,000
// requests, 25 MB of answers; elements over the size limit are fetched
// again one by one).
const MaxRangeBlocks = 100

// pendingBlock is a block decoded from eth_getBlockBy*, waiting for its
// receipts and internal data.
type pendingBlock struct {
	h      rpcHeader
	height uint32
	eb     *bchain.EthBlock
	hashes []bchain.Hash
}

// decodePending decodes a full block answer of method and its txs, whose
// senders are recovered with signer.
func decodePending(method string, raw json.RawMessage, signer types.Signer) (*pendingBlock, error) {
	p := &pendingBlock{}
	if err := json.Unmarshal(raw, &p.h); err != nil {
		return nil, garbage(method, err)
	}
	height, err := p.h.height()
	if err != nil {
		return nil, garbage(method, err)
	}
	p.height = height
	hash := bchain.Hash(p.h.Hash)
	var rtxs []rpcTx
	if err := json.Unmarshal(p.h.Transactions, &rtxs); err != nil {
		return nil, fmt.Errorf("%w: block %s: transactions: %v", bchain.ErrInvalidData, hash, err)
	}
	p.h.Transactions = nil // decoded; let the raw text go
	p.eb = &bchain.EthBlock{GasUsed: uint64(p.h.GasUsed), GasLimit: uint64(p.h.GasLimit), Miner: bchain.EthAddress(p.h.Miner),
		Txs: make([]bchain.EthTx, len(rtxs)), Nonce: p.h.Nonce, Difficulty: p.h.Difficulty, Avalanche: p.h.avalancheHeader.convert()}
	if p.h.BaseFeePerGas != nil {
		p.eb.BaseFee = new(big.Int).Set(p.h.BaseFeePerGas.ToInt())
	}
	for _, w := range p.h.Withdrawals {
		p.eb.Withdrawals = append(p.eb.Withdrawals, bchain.EthWithdrawal{Index: uint64(w.Index), Validator: uint64(w.Validator),
			Address: bchain.EthAddress(w.Address), Amount: uint64(w.Amount)})
	}
	p.h.Withdrawals = nil
	p.hashes = make([]bchain.Hash, len(rtxs))
	for i := range rtxs {
		if err := decodeTx(&rtxs[i], signer, &p.eb.Txs[i]); err != nil {
			return nil, fmt.Errorf("block %s: %w", hash, err)
		}
		p.eb.Txs[i].BlockHash, p.eb.Txs[i].BlockHeight, p.eb.Txs[i].Position = hash, height, i
		p.hashes[i] = p.eb.Txs[i].Hash
	}
	return p, nil
}

// setReceipts attaches the receipts (in tx order) and the token transfers
// their logs show.
func (p *pendingBlock) setReceipts(receipts []*bchain.EthReceipt) {
	for i := range p.eb.Txs {
		p.eb.Txs[i].Receipt = receipts[i]
		if receipts[i].EffectiveGasPrice == nil {
			// Nodes before London leave it out; the price paid is then
			// the tx's gas price.
			receipts[i].EffectiveGasPrice = new(big.Int).Set(p.eb.Txs[i].GasPrice)
		}
		p.eb.Txs[i].Transfers = TokenTransfers(receipts[i].Logs)
	}
}

// setInternal attaches the internal data of each tx (nil where the trace
// has none) and a trace failure, if any.
func (p *pendingBlock) setInternal(internal []*bchain.EthInternalData, traceErr error) {
	if traceErr != nil {
		p.eb.TraceError = traceErr.Error()
	}
	for i := range p.eb.Txs {
		if i < len(internal) {
			p.eb.Txs[i].Internal = internal[i]
		}
	}
}

func (p *pendingBlock) block() *bchain.Block {
	return &bchain.Block{
		BlockHeader: bchain.BlockHeader{Hash: bchain.Hash(p.h.Hash), Prev: bchain.Hash(p.h.ParentHash), Height: p.height,
			Time: int64(p.h.Timestamp), Size: int(p.h.Size)},
		Eth: p.eb,
	}
}

// BlockRange fetches the blocks at heights from..to of the node's active
// chain with their receipts and (when tracing) internal data, as Block
// does, in two batched requests: the blocks by number, then the receipts
// and traces of all of them. An element the batch could not answer (the
// node refused it, or the answer would exceed the node's batch size limit)
// is fetched again on its own, with Block's fallbacks and retries, so the
// result is the same as fetching block by block. A height above the
// node's tip fails with bchain.ErrBlockNotFound.
func (n *Node) BlockRange(ctx context.Context, from, to uint32) ([]*bchain.Block, error) {
	if to < from || to-from >= MaxRangeBlocks {
		return nil, fmt.Errorf("block range %d..%d: at most %d blocks", from, to, MaxRangeBlocks)
	}
	signer, err := n.signer(ctx)
	if err != nil {
		return nil, err
	}
	pend, err := n.rangeBlocks(ctx, from, to, signer)
	if err != nil {
		return nil, err
	}
	if err := n.rangeDetails(ctx, pend); err != nil {
		return nil, err
	}
	out := make([]*bchain.Block, len(pend))
	for i, p := range pend {
		out[i] = p.block()
	}
	return out, nil
}

// rangeBlocks fetches and decodes the blocks from..to by number in one batch.
func (n *Node) rangeBlocks(ctx context.Context, from, to uint32, signer types.Signer) ([]*pendingBlock, error) {
	const method = "eth_getBlockByNumber"
	raws := make([]json.RawMessage, to-from+1)
	elems := make([]rpc.BatchElem, len(raws))
	for i := range elems {
		elems[i] = rpc.BatchElem{Method: method, Args: []any{hexutil.Uint64(from + uint32(i)), true}, Result: &raws[i]}
	}
	if err := n.rpc.batch(ctx, elems); err != nil {
		return nil, err
	}
	pend := make([]*pendingBlock, len(raws))
	for i := range elems {
		height := from + uint32(i)
		raw := raws[i]
		if elems[i].Error != nil {
			// Refused in the batch (e.g. over its size limit): once more alone.
			if err := n.rpc.call(ctx, &raw, method, hexutil.Uint64(height), true); err != nil {
				return nil, fmt.Errorf("block %d: %w", height, err)
			}
		}
		if isNull(raw) {
			return nil, fmt.Errorf("%w: height %d", bchain.ErrBlockNotFound, height)
		}
		p, err := decodePending(method, raw, signer)
		if err != nil {
			return nil, err
		}
		if p.height != height {
			return nil, garbage(method, fmt.Errorf("asked for block %d, got %d", height, p.height))
		}
		pend[i] = p
		raws[i] = nil
	}
	return pend, nil
}

// rangeDetails fetches the receipts and traces of the blocks in one batch.
func (n *Node) rangeDetails(ctx context.Context, pend []*pendingBlock) error {
	byBlock := !n.noBlockReceipts.Load()
	tracing := n.tracing()
	rcpts := make([][]*rpcReceipt, len(pend))
	traces := make([][]traceResult, len(pend))
	rIdx, tIdx := make([]int, len(pend)), make([]int, len(pend))
	var elems []rpc.BatchElem
	for i, p := range pend {
		rIdx[i], tIdx[i] = -1, -1
		p.eb.Traced = tracing
		if len(p.hashes) == 0 {
			continue
		}
		if byBlock {
			rIdx[i] = len(elems)
			elems = append(elems, rpc.BatchElem{Method: "eth_getBlockReceipts", Args: []any{p.h.Hash}, Result: &rcpts[i]})
		}
		if tracing {
			tIdx[i] = len(elems)
			elems = append(elems, rpc.BatchElem{Method: "debug_traceBlockByHash", Args: []any{p.h.Hash, map[string]any{"tracer": "callTracer"}}, Result: &traces[i]})
		}
	}
	if err := n.rpc.batch(ctx, elems); err != nil {
		return err
	}
	for i, p := range pend {
		if len(p.hashes) == 0 {
			continue
		}
		hash := bchain.Hash(p.h.Hash)
		var receipts []*bchain.EthReceipt
		var err error
		if rIdx[i] >= 0 && elems[rIdx[i]].Error == nil {
			receipts, err = checkReceipts(hash, p.hashes, rcpts[i])
		} else {
			// Per-tx receipts, or the block's alone: receipts decides
			// which the node serves.
			receipts, err = n.receipts(ctx, hash, p.hashes)
		}
		if err != nil {
			return err
		}
		p.setReceipts(receipts)
		if !tracing {
			continue
		}
		var internal []*bchain.EthInternalData
		if elems[tIdx[i]].Error == nil {
			internal, err = internalFromTraces(traces[i], p.hashes)
		} else {
			err = elems[tIdx[i]].Error
		}
		if err != nil {
			// Traced again alone, with the retries of Block.
			if internal, err = n.traceBlock(ctx, hash, p.hashes); err != nil {
				if errors.Is(err, context.Canceled) || ctx.Err() != nil {
					return errors.Join(err, ctx.Err())
				}
				n.log.Warn("block trace failed; the block is returned without its internal data", "block", hash, "height", p.height, "err", err)
			}
		}
		p.setInternal(internal, err)
	}
	return nil
}

// checkReceipts lines up a block's receipts with its txs and converts them.
func checkReceipts(block bchain.Hash, txs []bchain.Hash, rs []*rpcReceipt) ([]*bchain.EthReceipt, error) {
	if len(rs) != len(txs) {
		return nil, fmt.Errorf("%w: block %s: %d receipts for %d txs", bchain.ErrNodeUnavailable, block, len(rs), len(txs))
	}
	out := make([]*bchain.EthReceipt, len(txs))
	for i, r := range rs {
		if r == nil || bchain.Hash(r.TxHash) != txs[i] {
			return nil, fmt.Errorf("%w: block %s: receipt %d does not belong to tx %s", bchain.ErrNodeUnavailable, block, i, txs[i])
		}
		out[i] = convertReceipt(r)
	}
	return out, nil
}
