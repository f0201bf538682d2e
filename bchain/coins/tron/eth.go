package tron

import (
	"context"
	"encoding/hex"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/openexplorer/blockbook/bchain"
)

// The account queries the shared account-model service asks (what
// Blockbook's TronRPC answers through its Ethereum parts): balances,
// calls and the chain id over the JSON-RPC, txs and their outcomes over
// the HTTP API (the JSON-RPC's view of a tx lacks its contract type and
// fees), broadcast over /wallet/broadcasthex.

var (
	_ bchain.EthereumChain = (*Node)(nil)
	_ bchain.TxBroadcaster = (*Node)(nil)
)

func rpcAddr(d bchain.AddrDesc) string { return "0x" + hex.EncodeToString(d) }

// ChainID is eth_chainId (the last 4 bytes of the genesis block id).
func (n *Node) ChainID(ctx context.Context) (*big.Int, error) {
	var id hexutil.Big
	if err := n.rpc.call(ctx, &id, "eth_chainId"); err != nil {
		return nil, err
	}
	return id.ToInt(), nil
}

// Balance is the TRX balance in sun (eth_getBalance, as Blockbook reads
// it); java-tron answers only for the latest block.
func (n *Node) Balance(ctx context.Context, addr bchain.AddrDesc, at bchain.EthBlockTag) (*big.Int, error) {
	// java-tron's eth_getBalance reads the latest state only (it refuses a
	// block number): a past block is refused, not answered with today's.
	if at >= 0 {
		return nil, fmt.Errorf("%w: balance at block %d (java-tron serves the latest only)", bchain.ErrUnsupported, at)
	}
	var b hexutil.Big
	if err := n.rpc.call(ctx, &b, "eth_getBalance", rpcAddr(addr), "latest"); err != nil {
		return nil, err
	}
	return b.ToInt(), nil
}

// Nonce is 0: Tron accounts have no nonce (Blockbook answers 0 too).
func (n *Node) Nonce(context.Context, bchain.AddrDesc, bchain.EthBlockTag) (uint64, error) {
	return 0, nil
}

// TokenBalance is a TRC-20's balanceOf(addr) by eth_call.
func (n *Node) TokenBalance(ctx context.Context, addr, contract bchain.AddrDesc) (*big.Int, error) {
	data := make([]byte, 4+32)
	copy(data, []byte{0x70, 0xa0, 0x82, 0x31}) // balanceOf(address)
	copy(data[4+12:], addr)
	out, err := n.Call(ctx, bchain.EthCall{To: contract, Data: data})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return new(big.Int), nil
	}
	return new(big.Int).SetBytes(out[:min(len(out), 32)]), nil
}

// EIP1559Fees and GasPrice: Tron prices energy and bandwidth, not gas;
// there is no fee estimate to give (as Blockbook's Tron).
func (n *Node) EIP1559Fees(context.Context) (*bchain.EthFees, error) {
	return nil, bchain.ErrUnsupported
}

func (n *Node) GasPrice(context.Context) (*big.Int, error) { return nil, bchain.ErrUnsupported }

// InternalData: the inner calls come with the block's infos, so there is
// no separate trace to retry.
func (n *Node) InternalData(context.Context, bchain.Hash) ([]*bchain.EthInternalData, error) {
	return nil, bchain.ErrUnsupported
}

// Multicall: no Multicall3 is assumed on Tron.
func (n *Node) Multicall(context.Context, []bchain.EthMulticall, bchain.EthBlockTag) ([]bchain.EthMulticallResult, error) {
	return nil, bchain.ErrUnsupported
}

func callArgs(c bchain.EthCall) map[string]any {
	m := map[string]any{"data": "0x" + hex.EncodeToString(c.Data)}
	if len(c.To) > 0 {
		m["to"] = rpcAddr(c.To)
	}
	if len(c.From) > 0 {
		m["from"] = rpcAddr(c.From)
	}
	if c.Value != nil && c.Value.Sign() > 0 {
		m["value"] = hexutil.EncodeBig(c.Value)
	}
	return m
}

// Call is eth_call at the latest block.
func (n *Node) Call(ctx context.Context, c bchain.EthCall) ([]byte, error) {
	var out hexutil.Bytes
	if err := n.rpc.call(ctx, &out, "eth_call", callArgs(c), "latest"); err != nil {
		return nil, err
	}
	return out, nil
}

// EstimateGas is eth_estimateGas (the energy a call would use).
func (n *Node) EstimateGas(ctx context.Context, c bchain.EthCall) (uint64, error) {
	var out hexutil.Uint64
	if err := n.rpc.call(ctx, &out, "eth_estimateGas", callArgs(c)); err != nil {
		return 0, err
	}
	return uint64(out), nil
}

// Tx is a tx as the account-model service reads it: from the HTTP API
// (Node.LookupTx), its block named for a mined one, no receipt for a
// pending one.
func (n *Node) Tx(ctx context.Context, id bchain.Hash) (*bchain.EthTx, error) {
	nt, err := n.LookupTx(ctx, id)
	if err != nil {
		return nil, err
	}
	info := nt.Info
	if info == nil {
		info = &TxInfo{}
	}
	var next uint
	et, err := ethTx(&nt.Tx, info, 0, &next, false)
	if err != nil {
		return nil, err
	}
	if nt.Info == nil {
		et.Receipt, et.Transfers = nil, nil
		return &et, nil
	}
	et.BlockHeight = uint32(info.BlockNumber)
	if et.BlockHash, err = n.BlockHash(ctx, et.BlockHeight); err != nil {
		return nil, err
	}
	return &et, nil
}

// Receipts gives the receipts of mined txs (their fee as gas used at a
// price of 1), one lookup each.
func (n *Node) Receipts(ctx context.Context, ids []bchain.Hash) ([]*bchain.EthReceipt, error) {
	out := make([]*bchain.EthReceipt, len(ids))
	for i, id := range ids {
		t, err := n.Tx(ctx, id)
		if err != nil {
			return nil, err
		}
		out[i] = t.Receipt
	}
	return out, nil
}

// SendRawTx broadcasts a signed tx (its protobuf bytes) by
// /wallet/broadcasthex, as Blockbook does; the node's refusal is an
// *RPCError with its code and message.
func (n *Node) SendRawTx(ctx context.Context, raw []byte) (bchain.Hash, error) {
	var ans struct {
		Result  bool   `json:"result"`
		TxID    string `json:"txid"`
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	if err := n.full.post(ctx, "/wallet/broadcasthex", map[string]any{"transaction": hex.EncodeToString(raw)}, &ans); err != nil {
		return bchain.Hash{}, err
	}
	if !ans.Result {
		msg := strings.TrimSpace(strings.Join([]string{ans.Code, decodeMessage(ans.Message)}, " "))
		if msg == "" {
			msg = "broadcast refused"
		}
		return bchain.Hash{}, &bchain.RPCError{Code: -32000, Message: "Tron broadcasthex failed: " + msg}
	}
	h, err := ParseID(ans.TxID)
	if err != nil {
		return bchain.Hash{}, fmt.Errorf("tron broadcasthex: txid %q: %w", ans.TxID, err)
	}
	return h, nil
}

// decodeMessage shows java-tron's message, which it sends as hex of text.
func decodeMessage(m string) string {
	if b, err := hex.DecodeString(m); err == nil && len(b) > 0 {
		return strings.ToValidUTF8(string(b), "")
	}
	return m
}

// AccountChainExtra is an address's chainExtraData payload (Blockbook's
// TronAccountExtraData), for the query service.
func (n *Node) AccountChainExtra(ctx context.Context, address string) (any, error) {
	e, err := n.AccountExtra(ctx, address)
	if err != nil {
		return nil, err
	}
	return e, nil
}
