package eth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"sort"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/openexplorer/blockbook/bchain"
)

var (
	_ bchain.BlockChain    = (*Node)(nil)
	_ bchain.EthereumChain = (*Node)(nil)
	_ bchain.TxBroadcaster = (*Node)(nil)
	_ bchain.FeeEstimator  = (*Node)(nil)
)

// Method selectors of the token calls.
var (
	selName              = []byte{0x06, 0xfd, 0xde, 0x03} // name()
	selSymbol            = []byte{0x95, 0xd8, 0x9b, 0x41} // symbol()
	selDecimals          = []byte{0x31, 0x3c, 0xe5, 0x67} // decimals()
	selBalanceOf         = []byte{0x70, 0xa0, 0x82, 0x31} // balanceOf(address)
	selSupportsInterface = []byte{0x01, 0xff, 0xc9, 0xa7} // supportsInterface(bytes4)
	ifaceERC721          = []byte{0x80, 0xac, 0x58, 0xcd}
	ifaceERC1155         = []byte{0xd9, 0xb6, 0x7a, 0x26}
)

func blockArg(at bchain.EthBlockTag) any {
	if at == bchain.EthPending {
		return "pending"
	}
	if at < 0 {
		return "latest"
	}
	return hexutil.Uint64(at)
}

// Balance returns the wei balance of addr.
func (n *Node) Balance(ctx context.Context, addr bchain.AddrDesc, at bchain.EthBlockTag) (*big.Int, error) {
	a, err := descAddress(addr)
	if err != nil {
		return nil, err
	}
	var v hexutil.Big
	if err := n.rpc.call(ctx, &v, "eth_getBalance", a, blockArg(at)); err != nil {
		return nil, err
	}
	return v.ToInt(), nil
}

// Nonce returns the number of txs addr sent.
func (n *Node) Nonce(ctx context.Context, addr bchain.AddrDesc, at bchain.EthBlockTag) (uint64, error) {
	a, err := descAddress(addr)
	if err != nil {
		return 0, err
	}
	var v hexutil.Uint64
	if err := n.rpc.call(ctx, &v, "eth_getTransactionCount", a, blockArg(at)); err != nil {
		return 0, err
	}
	return uint64(v), nil
}

// ethCall runs a read-only call at the latest block. A revert or a call to
// a missing method is an *bchain.RPCError, a node problem ErrNodeUnavailable.
func (n *Node) ethCall(ctx context.Context, to common.Address, data []byte) ([]byte, error) {
	var out hexutil.Bytes
	msg := map[string]any{"to": to, "data": hexutil.Bytes(data)}
	if err := n.rpc.call(ctx, &out, "eth_call", msg, "latest"); err != nil {
		return nil, err
	}
	return out, nil
}

// callMsg is the JSON-RPC call object of c.
func callMsg(c bchain.EthCall) (map[string]any, error) {
	msg := map[string]any{}
	for key, a := range map[string]bchain.AddrDesc{"from": c.From, "to": c.To} {
		if len(a) == 0 {
			continue
		}
		addr, err := descAddress(a)
		if err != nil {
			return nil, err
		}
		msg[key] = addr
	}
	if len(c.Data) > 0 {
		msg["data"] = hexutil.Bytes(c.Data)
	}
	if c.Value != nil && c.Value.Sign() > 0 {
		msg["value"] = (*hexutil.Big)(c.Value)
	}
	return msg, nil
}

// Call runs eth_call at the latest block.
func (n *Node) Call(ctx context.Context, c bchain.EthCall) ([]byte, error) {
	msg, err := callMsg(c)
	if err != nil {
		return nil, err
	}
	var out hexutil.Bytes
	if err := n.rpc.call(ctx, &out, "eth_call", msg, "latest"); err != nil {
		return nil, err
	}
	return out, nil
}

// EstimateGas runs eth_estimateGas.
func (n *Node) EstimateGas(ctx context.Context, c bchain.EthCall) (uint64, error) {
	msg, err := callMsg(c)
	if err != nil {
		return 0, err
	}
	var gas hexutil.Uint64
	if err := n.rpc.call(ctx, &gas, "eth_estimateGas", msg); err != nil {
		return 0, err
	}
	return uint64(gas), nil
}

// optionalCall is ethCall for methods a contract may lack: a revert or empty
// answer gives nil without error.
func (n *Node) optionalCall(ctx context.Context, to common.Address, data []byte) ([]byte, error) {
	out, err := n.ethCall(ctx, to, data)
	var re *bchain.RPCError
	if errors.As(err, &re) {
		return nil, nil
	}
	return out, err
}

// ContractInfo reads a token's metadata (ReadContractInfo over eth_call).
func (n *Node) ContractInfo(ctx context.Context, contract bchain.AddrDesc) (*bchain.EthContractInfo, error) {
	a, err := descAddress(contract)
	if err != nil {
		return nil, err
	}
	return ReadContractInfo(ctx, bchain.EthAddress(a), func(ctx context.Context, data []byte) ([]byte, error) {
		return n.optionalCall(ctx, a, data)
	})
}

// ReadContractInfo reads a token's metadata with call, a read-only call of
// the contract that gives nil without error when the contract reverts or
// lacks the method (any EVM's eth_call: Tron's TRC-20s answer the same).
// ERC721 and ERC1155 are told apart by ERC-165; a contract answering
// decimals() is taken for ERC20.
func ReadContractInfo(ctx context.Context, contract bchain.EthAddress, call func(ctx context.Context, data []byte) ([]byte, error)) (*bchain.EthContractInfo, error) {
	ci := &bchain.EthContractInfo{Contract: contract}
	for _, q := range []struct {
		sel []byte
		dst *string
	}{{selName, &ci.Name}, {selSymbol, &ci.Symbol}} {
		out, err := call(ctx, q.sel)
		if err != nil {
			return nil, err
		}
		if s, ok := abiString(out); ok {
			*q.dst = s
		}
	}
	for _, q := range []struct {
		iface []byte
		std   bchain.TokenStandard
	}{{ifaceERC721, bchain.TokenERC721}, {ifaceERC1155, bchain.TokenERC1155}} {
		out, err := call(ctx, append(append([]byte{}, selSupportsInterface...), common.RightPadBytes(q.iface, 32)...))
		if err != nil {
			return nil, err
		}
		if v, ok := abiUint(out, 0); ok && len(out) == 32 && v == 1 {
			ci.Standard = q.std
			return ci, nil
		}
	}
	out, err := call(ctx, selDecimals)
	if err != nil {
		return nil, err
	}
	if d, ok := abiUint(out, 0); ok && len(out) == 32 && d <= 255 {
		ci.Decimals, ci.Standard = int(d), bchain.TokenERC20
	}
	return ci, nil
}

// TokenBalance returns ERC20 balanceOf(addr) at the latest block.
func (n *Node) TokenBalance(ctx context.Context, addr, contract bchain.AddrDesc) (*big.Int, error) {
	a, err := descAddress(addr)
	if err != nil {
		return nil, err
	}
	c, err := descAddress(contract)
	if err != nil {
		return nil, err
	}
	out, err := n.ethCall(ctx, c, append(append([]byte{}, selBalanceOf...), common.LeftPadBytes(a[:], 32)...))
	if err != nil {
		return nil, err
	}
	if len(out) < 32 {
		return nil, fmt.Errorf("%w: balanceOf of %s returned %d bytes", bchain.ErrInvalidData, c.Hex(), len(out))
	}
	return new(big.Int).SetBytes(out[:32]), nil
}

// GasPrice returns the node's legacy gas price suggestion.
func (n *Node) GasPrice(ctx context.Context) (*big.Int, error) {
	var v hexutil.Big
	if err := n.rpc.call(ctx, &v, "eth_gasPrice"); err != nil {
		return nil, err
	}
	return v.ToInt(), nil
}

// EstimateFee implements bchain.FeeEstimator for Ethereum: the answer is a
// gas price in wei (per gas, whatever blocks asks), as Blockbook's
// Ethereum backends answer estimatefee. With eip1559Fees it is the medium
// tier's max fee.
func (n *Node) EstimateFee(ctx context.Context, blocks int, conservative bool) (int64, error) {
	var p *big.Int
	if n.eip1559 {
		f, err := n.EIP1559Fees(ctx)
		if err == nil {
			p = f.Medium.MaxFeePerGas
		} else if !errors.Is(err, bchain.ErrUnsupported) {
			return 0, err
		}
	}
	if p == nil {
		var err error
		if p, err = n.GasPrice(ctx); err != nil {
			return 0, err
		}
	}
	if !p.IsInt64() {
		return 0, fmt.Errorf("%w: gas price %s out of range", bchain.ErrInvalidData, p)
	}
	return p.Int64(), nil
}

// feeHistoryBlocks is how many recent blocks the EIP-1559 tiers look at.
const feeHistoryBlocks = 20

// EIP1559Fees suggests max fee and priority fee tiers: priority fees are
// the 10/30/60/90th percentiles of recent blocks' tips (averaged), never
// below the node's eth_maxPriorityFeePerGas for medium and up; max fees
// allow the base fee to double before inclusion.
func (n *Node) EIP1559Fees(ctx context.Context) (*bchain.EthFees, error) {
	var fh struct {
		BaseFee []*hexutil.Big   `json:"baseFeePerGas"`
		Reward  [][]*hexutil.Big `json:"reward"`
	}
	pct := []float64{10, 30, 60, 90}
	if err := n.rpc.call(ctx, &fh, "eth_feeHistory", hexutil.Uint64(feeHistoryBlocks), "latest", pct); err != nil {
		return nil, err
	}
	if len(fh.BaseFee) == 0 || fh.BaseFee[len(fh.BaseFee)-1] == nil || fh.BaseFee[len(fh.BaseFee)-1].ToInt().Sign() == 0 {
		return nil, fmt.Errorf("%w: the chain has no base fee (pre-London)", bchain.ErrUnsupported)
	}
	// The last entry is the next block's base fee.
	base := new(big.Int).Set(fh.BaseFee[len(fh.BaseFee)-1].ToInt())
	tips := make([]*big.Int, len(pct))
	for i := range tips {
		var vals []*big.Int
		for _, r := range fh.Reward {
			if i < len(r) && r[i] != nil {
				vals = append(vals, r[i].ToInt())
			}
		}
		tips[i] = mean(vals)
	}
	var suggested hexutil.Big
	if err := n.rpc.call(ctx, &suggested, "eth_maxPriorityFeePerGas"); err != nil {
		var re *bchain.RPCError
		if !errors.As(err, &re) {
			return nil, err
		}
	}
	floor := suggested.ToInt()
	for i := 1; i < len(tips); i++ {
		if tips[i].Cmp(floor) < 0 {
			tips[i] = new(big.Int).Set(floor)
		}
	}
	sort.Slice(tips, func(a, b int) bool { return tips[a].Cmp(tips[b]) < 0 })
	tier := func(tip *big.Int) bchain.EthFeeTier {
		maxFee := new(big.Int).Add(new(big.Int).Mul(base, big.NewInt(2)), tip)
		return bchain.EthFeeTier{MaxFeePerGas: maxFee, MaxPriorityFeePerGas: tip}
	}
	return &bchain.EthFees{BaseFee: base, Low: tier(tips[0]), Medium: tier(tips[1]), High: tier(tips[2]), Instant: tier(tips[3])}, nil
}

func mean(vals []*big.Int) *big.Int {
	sum := new(big.Int)
	if len(vals) == 0 {
		return sum
	}
	for _, v := range vals {
		sum.Add(sum, v)
	}
	return sum.Div(sum, big.NewInt(int64(len(vals))))
}

// SendRawTx relays a signed tx; the node's rejection comes back as an
// *bchain.RPCError.
func (n *Node) SendRawTx(ctx context.Context, raw []byte) (bchain.Hash, error) {
	var h common.Hash
	if err := n.rpc.call(ctx, &h, "eth_sendRawTransaction", hexutil.Bytes(raw)); err != nil {
		return bchain.Hash{}, err
	}
	return bchain.Hash(h), nil
}

// rawBool reads an optional boolean key of the config document.
func rawBool(raw json.RawMessage, key string) (bool, bool) {
	if len(raw) == 0 {
		return false, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return false, false
	}
	v, ok := m[key]
	if !ok {
		return false, false
	}
	var b bool
	if json.Unmarshal(v, &b) != nil {
		return false, false
	}
	return b, true
}
