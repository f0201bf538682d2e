package tron

import (
	"context"
	"encoding/hex"
	"errors"

	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/eth"
)

// ContractInfo reads a TRC-20/721 contract's name, symbol and decimals
// over the JSON-RPC eth_call, as Blockbook does: Tron's VM answers the
// same calls as Ethereum's, so the reading is Ethereum's. The index asks
// it once per contract (db.EthIndex.PrepareBlock).
func (n *Node) ContractInfo(ctx context.Context, contract bchain.AddrDesc) (*bchain.EthContractInfo, error) {
	if len(contract) != addrLen {
		return nil, ErrInvalidAddress
	}
	a := bchain.EthAddress(contract)
	return eth.ReadContractInfo(ctx, a, func(ctx context.Context, data []byte) ([]byte, error) {
		var out hexutil.Bytes
		// java-tron takes the 20-byte hex without the 41 prefix here.
		msg := map[string]any{"to": "0x" + hex.EncodeToString(a[:]), "data": hexutil.Bytes(data)}
		err := n.rpc.call(ctx, &out, "eth_call", msg, "latest")
		var re *bchain.RPCError
		if errors.As(err, &re) {
			return nil, nil // reverted or no such method
		}
		return out, err
	})
}
