package eth

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/openexplorer/blockbook/bchain"
)

var _ bchain.EthTxSource = (*Node)(nil)

// specificTx is a tx as the node sends it, cut to the fields Blockbook's
// tx-specific answer keeps (its RpcTransaction): quantities stay the
// node's hex strings, a missing value (a pending tx's block number, a
// creation's recipient) is "".
type specificTx struct {
	Nonce                string `json:"nonce"`
	GasPrice             string `json:"gasPrice"`
	MaxPriorityFeePerGas string `json:"maxPriorityFeePerGas,omitempty"`
	MaxFeePerGas         string `json:"maxFeePerGas,omitempty"`
	BaseFeePerGas        string `json:"baseFeePerGas,omitempty"` // of the tx's block, mined txs only
	Gas                  string `json:"gas"`
	To                   string `json:"to"`
	Value                string `json:"value"`
	Input                string `json:"input"`
	Hash                 string `json:"hash"`
	BlockNumber          string `json:"blockNumber"`
	BlockHash            string `json:"blockHash,omitempty"`
	From                 string `json:"from"`
	TransactionIndex     string `json:"transactionIndex"`
}

// specificLog and specificReceipt are the receipt fields Blockbook keeps.
type specificLog struct {
	Address string   `json:"address"`
	Topics  []string `json:"topics"`
	Data    string   `json:"data"`
}

type specificReceipt struct {
	GasUsed         string         `json:"gasUsed"`
	Status          string         `json:"status"`
	Logs            []*specificLog `json:"logs"`
	L1Fee           string         `json:"l1Fee,omitempty"`
	L1FeeScalar     string         `json:"l1FeeScalar,omitempty"`
	L1GasPrice      string         `json:"l1GasPrice,omitempty"`
	L1GasUsed       string         `json:"l1GasUsed,omitempty"`
	ContractAddress string         `json:"contractAddress,omitempty"`
}

// eip55 renders a node's address string in checksummed form ("" stays).
func eip55(a string) string {
	if len(a) <= 2 || !common.IsHexAddress(a) {
		return a
	}
	return common.HexToAddress(a).Hex()
}

// TxSpecific returns a tx with its receipt in Blockbook's tx-specific
// shape, {"tx": …, "receipt": …} (no receipt while pending), addresses in
// EIP-55 form; ErrTxNotFound when the node does not know the tx.
func (n *Node) TxSpecific(ctx context.Context, hash bchain.Hash) (json.RawMessage, error) {
	var raw json.RawMessage
	if err := n.rpc.call(ctx, &raw, "eth_getTransactionByHash", common.Hash(hash)); err != nil {
		return nil, err
	}
	if isNull(raw) {
		return nil, fmt.Errorf("%w: %s", bchain.ErrTxNotFound, hash)
	}
	var out struct {
		Tx      *specificTx      `json:"tx"`
		Receipt *specificReceipt `json:"receipt,omitempty"`
	}
	if err := json.Unmarshal(raw, &out.Tx); err != nil {
		return nil, fmt.Errorf("%w: tx %s: %v", bchain.ErrInvalidData, hash, err)
	}
	tx := out.Tx
	tx.From, tx.To = eip55(tx.From), eip55(tx.To)
	if tx.BlockNumber != "" && tx.BlockHash != "" {
		var h struct {
			BaseFeePerGas string `json:"baseFeePerGas"`
		}
		if err := n.rpc.call(ctx, &h, "eth_getBlockByHash", tx.BlockHash, false); err != nil {
			return nil, err
		}
		tx.BaseFeePerGas = h.BaseFeePerGas
		if err := n.rpc.call(ctx, &out.Receipt, "eth_getTransactionReceipt", common.Hash(hash)); err != nil {
			return nil, err
		}
		if rc := out.Receipt; rc != nil {
			rc.ContractAddress = eip55(rc.ContractAddress)
			for _, l := range rc.Logs {
				l.Address = eip55(l.Address)
			}
		}
	}
	return json.Marshal(&out)
}

// RawTx returns a tx's signed serialization (eth_getRawTransactionByHash);
// ErrTxNotFound when the node does not know the tx.
func (n *Node) RawTx(ctx context.Context, hash bchain.Hash) ([]byte, error) {
	var raw hexutil.Bytes
	if err := n.rpc.call(ctx, &raw, "eth_getRawTransactionByHash", common.Hash(hash)); err != nil {
		return nil, err
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("%w: %s", bchain.ErrTxNotFound, hash)
	}
	return raw, nil
}
