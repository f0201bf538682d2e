package gethdev

import (
	"context"
	"errors"
	"fmt"
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/eth"
	"github.com/ethereum/go-ethereum/params"
)

// syncSendAPI replaces eth_sendRawTransaction with a version that waits
// until the pool has promoted the tx.
//
// Why: geth adds RPC txs asynchronously. When a sender's next tx arrives
// before the previous one was promoted it is queued, and if the forced pool
// reset Commit runs (SimulatedBeacon seals after txpool.Sync) merges with
// that pending promotion, the pool resets its pending nonces and skips the
// queued txs: they miss the block although they are executable. Waiting
// for the promotion on submission makes "send, send, Commit" deterministic.
type syncSendAPI struct {
	eth      *eth.Ethereum
	feeCapEt float64
}

// SendRawTransaction mirrors ethapi's checks (sidecar upgrade, fee cap,
// EIP-155) and adds the tx to the pool synchronously.
func (api *syncSendAPI) SendRawTransaction(ctx context.Context, input hexutil.Bytes) (common.Hash, error) {
	tx := new(types.Transaction)
	if err := tx.UnmarshalBinary(input); err != nil {
		return common.Hash{}, err
	}
	// The dev chain runs Osaka from genesis: the pool wants cell proofs.
	if sc := tx.BlobTxSidecar(); sc != nil && sc.Version == types.BlobSidecarVersion0 {
		if err := sc.ToV1(); err != nil {
			return common.Hash{}, fmt.Errorf("blob sidecar conversion failed: %w", err)
		}
		tx = tx.WithBlobTxSidecar(sc)
	}
	if api.feeCapEt != 0 {
		fee := new(big.Float).Quo(new(big.Float).SetInt(new(big.Int).Mul(tx.GasPrice(), new(big.Int).SetUint64(tx.Gas()))), big.NewFloat(params.Ether))
		if f, _ := fee.Float64(); f > api.feeCapEt {
			return common.Hash{}, fmt.Errorf("tx fee (%.2f ether) exceeds the configured cap (%.2f ether)", f, api.feeCapEt)
		}
	}
	if !tx.Protected() {
		return common.Hash{}, errors.New("only replay-protected (EIP-155) transactions allowed over RPC")
	}
	if err := api.eth.TxPool().Add([]*types.Transaction{tx}, true)[0]; err != nil {
		return common.Hash{}, err
	}
	return tx.Hash(), nil
}

// SendTx adds a signed tx to the pool directly, waiting for its promotion
// like eth_sendRawTransaction does on this node.
func (n *Node) SendTx(tx *types.Transaction) error {
	return n.eth.TxPool().Add([]*types.Transaction{tx}, true)[0]
}
