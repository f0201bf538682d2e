package eth

import (
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/openexplorer/blockbook/bchain"
)

// Per-chain decoding: transaction types that go-ethereum does not know and
// header fields it does not have.
//
// L2s carry their own tx types in ordinary blocks: OP-stack chains a
// deposit tx (type 0x7e) first in every block, Arbitrum its internal,
// deposit and retryable txs (0x64-0x6a). They have no signature to recover
// the sender from, so the node's own from and hash are taken, as Blockbook
// takes every tx from the node's JSON.

// chainTx is the node's JSON of a tx whose type go-ethereum cannot decode.
type chainTx struct {
	Type                 hexutil.Uint64  `json:"type"`
	Nonce                *hexutil.Uint64 `json:"nonce"`
	Gas                  hexutil.Uint64  `json:"gas"`
	GasPrice             *hexutil.Big    `json:"gasPrice"`
	MaxFeePerGas         *hexutil.Big    `json:"maxFeePerGas"`
	MaxPriorityFeePerGas *hexutil.Big    `json:"maxPriorityFeePerGas"`
	Value                *hexutil.Big    `json:"value"`
	Input                hexutil.Bytes   `json:"input"`
	To                   *common.Address `json:"to"`
}

func decodeChainTx(b []byte) (*chainTx, error) {
	var c chainTx
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, err
	}
	if c.Type > 0x7f { // EIP-2718 types end at 0x7f
		return nil, fmt.Errorf("transaction type %#x not supported", uint64(c.Type))
	}
	return &c, nil
}

func bigOrZero(x *hexutil.Big) *big.Int {
	if x == nil {
		return new(big.Int)
	}
	return new(big.Int).Set(x.ToInt())
}

func bigOrNil(x *hexutil.Big) *big.Int {
	if x == nil {
		return nil
	}
	return new(big.Int).Set(x.ToInt())
}

// decodeChainTxInto fills out from an L2 tx as the node describes it; the
// node must name the sender and the hash.
func decodeChainTxInto(r *rpcTx, out *bchain.EthTx) error {
	c := r.chain
	if r.From == nil || r.Hash == (common.Hash{}) {
		return fmt.Errorf("%w: tx %s of type %#x: the node gives no sender or hash", bchain.ErrInvalidData, r.Hash.Hex(), uint64(c.Type))
	}
	*out = bchain.EthTx{
		Hash: bchain.Hash(r.Hash), Type: uint8(c.Type), From: bchain.EthAddress(*r.From), Value: bigOrZero(c.Value),
		GasLimit: uint64(c.Gas), GasPrice: bigOrZero(c.GasPrice), Data: c.Input,
		MaxFeePerGas: bigOrNil(c.MaxFeePerGas), MaxPriorityFeePerGas: bigOrNil(c.MaxPriorityFeePerGas),
	}
	if c.Nonce != nil {
		out.Nonce = uint64(*c.Nonce)
	}
	if c.To != nil {
		a := bchain.EthAddress(*c.To)
		out.To = &a
	}
	return nil
}

// avalancheHeader is what Avalanche's C-Chain (coreth) adds to the header.
// extDataHash is in every C-Chain block, so it tells the chain apart.
type avalancheHeader struct {
	ExtDataHash    *common.Hash `json:"extDataHash"`
	ExtDataGasUsed *hexutil.Big `json:"extDataGasUsed"`
	BlockGasCost   *hexutil.Big `json:"blockGasCost"`
}

func (a *avalancheHeader) convert() *bchain.EthAvalancheHeader {
	if a.ExtDataHash == nil {
		return nil
	}
	return &bchain.EthAvalancheHeader{ExtDataHash: bchain.Hash(*a.ExtDataHash), ExtDataGasUsed: bigOrNil(a.ExtDataGasUsed), BlockGasCost: bigOrNil(a.BlockGasCost)}
}
