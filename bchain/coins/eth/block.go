package eth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/openexplorer/blockbook/bchain"
)

// rpcHeader is the part of eth_getBlockBy* the index uses; decoding it
// ourselves (rather than into types.Header) tolerates nodes that omit or add
// header fields.
type rpcHeader struct {
	Hash          common.Hash     `json:"hash"`
	ParentHash    common.Hash     `json:"parentHash"`
	Number        *hexutil.Big    `json:"number"`
	Timestamp     hexutil.Uint64  `json:"timestamp"`
	Size          hexutil.Uint64  `json:"size"`
	Miner         common.Address  `json:"miner"`
	GasUsed       hexutil.Uint64  `json:"gasUsed"`
	GasLimit      hexutil.Uint64  `json:"gasLimit"`
	BaseFeePerGas *hexutil.Big    `json:"baseFeePerGas"`
	Difficulty    string          `json:"difficulty"` // hex, as the node sends it
	Nonce         string          `json:"nonce"`      // hex, as the node sends it
	Transactions  json.RawMessage `json:"transactions"`
	Withdrawals   []rpcWithdrawal `json:"withdrawals"`
	avalancheHeader
}

// rpcWithdrawal is an entry of a block's withdrawals (EIP-4895).
type rpcWithdrawal struct {
	Index     hexutil.Uint64 `json:"index"`
	Validator hexutil.Uint64 `json:"validatorIndex"`
	Address   common.Address `json:"address"`
	Amount    hexutil.Uint64 `json:"amount"` // Gwei
}

// rpcTx adds the node's context fields to a transaction. tx is nil for an
// L2's own tx type, which chain holds instead.
type rpcTx struct {
	tx       *types.Transaction
	chain    *chainTx
	From     *common.Address `json:"from"`
	Hash     common.Hash     `json:"hash"`
	GasPrice *hexutil.Big    `json:"gasPrice"`
	Index    *hexutil.Uint64 `json:"transactionIndex"`
	BHash    *common.Hash    `json:"blockHash"`
	BNumber  *hexutil.Big    `json:"blockNumber"`
}

func (r *rpcTx) UnmarshalJSON(b []byte) error {
	type plain rpcTx
	if err := json.Unmarshal(b, (*plain)(r)); err != nil {
		return err
	}
	r.tx = new(types.Transaction)
	err := r.tx.UnmarshalJSON(b)
	if errors.Is(err, types.ErrTxTypeNotSupported) {
		r.tx = nil
		r.chain, err = decodeChainTx(b)
	}
	return err
}

func (h *rpcHeader) height() (uint32, error) {
	if h.Number == nil || h.Number.ToInt().Sign() < 0 || !h.Number.ToInt().IsUint64() || h.Number.ToInt().Uint64() > uint64(^uint32(0)) {
		return 0, fmt.Errorf("block number %v out of range", h.Number)
	}
	return uint32(h.Number.ToInt().Uint64()), nil
}

// header fetches a block header (no txs) by hash or number.
func (n *Node) header(ctx context.Context, method string, arg any) (*rpcHeader, error) {
	var raw json.RawMessage
	if err := n.rpc.call(ctx, &raw, method, arg, false); err != nil {
		return nil, err
	}
	if isNull(raw) {
		return nil, fmt.Errorf("%w: %v", bchain.ErrBlockNotFound, arg)
	}
	var h rpcHeader
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, garbage(method, err)
	}
	if _, err := h.height(); err != nil {
		return nil, garbage(method, err)
	}
	return &h, nil
}

// Block fetches a block with full txs and receipts, decodes token transfers
// and, when configured, internal data. A failed trace does not fail the
// block: it is reported in Eth.TraceError.
func (n *Node) Block(ctx context.Context, hash bchain.Hash, height uint32) (*bchain.Block, error) {
	signer, err := n.signer(ctx)
	if err != nil {
		return nil, err
	}
	var raw json.RawMessage
	if err := n.rpc.call(ctx, &raw, "eth_getBlockByHash", common.Hash(hash), true); err != nil {
		return nil, err
	}
	if isNull(raw) {
		return nil, fmt.Errorf("%w: %s", bchain.ErrBlockNotFound, hash)
	}
	p, err := decodePending("eth_getBlockByHash", raw, signer)
	if err != nil {
		return nil, err
	}
	if bchain.Hash(p.h.Hash) != hash {
		return nil, garbage("eth_getBlockByHash", fmt.Errorf("asked for block %s, got %s", hash, p.h.Hash.Hex()))
	}
	// The height is the caller's, as the interface promises.
	p.height = height
	for i := range p.eb.Txs {
		p.eb.Txs[i].BlockHeight = height
	}
	receipts, err := n.receipts(ctx, hash, p.hashes)
	if err != nil {
		return nil, err
	}
	p.setReceipts(receipts)
	p.eb.Traced = n.tracing()
	if p.eb.Traced && len(p.eb.Txs) > 0 {
		internal, err := n.traceBlock(ctx, hash, p.hashes)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			n.log.Warn("block trace failed; the block is returned without its internal data", "block", hash, "height", height, "err", err)
		}
		p.setInternal(internal, err)
	}
	return p.block(), nil
}

// decodeTx converts a node transaction. The sender is the node's from, as
// Blockbook takes it (recovering it from the signature cost a fifth of the
// sync's CPU); only a node that leaves it out has it recovered with the
// chain's signer (every tx type).
func decodeTx(r *rpcTx, signer types.Signer, out *bchain.EthTx) error {
	if r.tx == nil {
		if err := decodeChainTxInto(r, out); err != nil {
			return err
		}
		setTxPlace(r, out)
		return nil
	}
	tx := r.tx
	var from common.Address
	if r.From != nil {
		from = *r.From
	} else {
		var err error
		if from, err = types.Sender(signer, tx); err != nil {
			return fmt.Errorf("%w: tx %s: sender: %v", bchain.ErrInvalidData, r.Hash.Hex(), err)
		}
	}
	if tx.Hash() != r.Hash {
		return fmt.Errorf("%w: tx %s: hash of decoded tx is %s", bchain.ErrInvalidData, r.Hash.Hex(), tx.Hash().Hex())
	}
	*out = bchain.EthTx{
		Hash: bchain.Hash(r.Hash), Type: tx.Type(), From: bchain.EthAddress(from), Nonce: tx.Nonce(),
		Value: tx.Value(), GasLimit: tx.Gas(), GasPrice: tx.GasPrice(), Data: tx.Data(),
	}
	if r.GasPrice != nil {
		// For mined 1559 txs the node reports the price actually paid.
		out.GasPrice = new(big.Int).Set(r.GasPrice.ToInt())
	}
	if to := tx.To(); to != nil {
		a := bchain.EthAddress(*to)
		out.To = &a
	}
	if tx.Type() >= types.DynamicFeeTxType {
		out.MaxFeePerGas, out.MaxPriorityFeePerGas = tx.GasFeeCap(), tx.GasTipCap()
	}
	if tx.Type() == types.BlobTxType {
		out.MaxFeePerBlobGas = tx.BlobGasFeeCap()
		for _, h := range tx.BlobHashes() {
			out.BlobHashes = append(out.BlobHashes, bchain.Hash(h))
		}
	}
	setTxPlace(r, out)
	return nil
}

// setTxPlace sets where a mined tx is (left zero for a pending one).
func setTxPlace(r *rpcTx, out *bchain.EthTx) {
	if r.BHash != nil && *r.BHash != (common.Hash{}) {
		out.BlockHash = bchain.Hash(*r.BHash)
		if r.BNumber != nil && r.BNumber.ToInt().IsUint64() {
			out.BlockHeight = uint32(r.BNumber.ToInt().Uint64())
		}
		if r.Index != nil {
			out.Position = int(*r.Index)
		}
	}
}

// Tx returns a pending or mined tx without its receipt.
func (n *Node) Tx(ctx context.Context, hash bchain.Hash) (*bchain.EthTx, error) {
	signer, err := n.signer(ctx)
	if err != nil {
		return nil, err
	}
	var raw json.RawMessage
	if err := n.rpc.call(ctx, &raw, "eth_getTransactionByHash", common.Hash(hash)); err != nil {
		return nil, err
	}
	if isNull(raw) {
		return nil, fmt.Errorf("%w: %s", bchain.ErrTxNotFound, hash)
	}
	var r rpcTx
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("%w: tx %s: %v", bchain.ErrInvalidData, hash, err)
	}
	var tx bchain.EthTx
	if err := decodeTx(&r, signer, &tx); err != nil {
		return nil, err
	}
	return &tx, nil
}
