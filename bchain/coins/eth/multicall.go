package eth

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/openexplorer/blockbook/bchain"
)

// multicall3Address is Multicall3's canonical address, the same on every
// chain it was deployed to by its pre-signed transaction (Blockbook reads
// only this one).
var multicall3Address = common.HexToAddress("0xcA11bde05977b3631167028862bE2a173976CA11")

// States of Node.multicall3: whether code is at the canonical address,
// learned once (a failed look-up is asked again next time).
const (
	multicall3Unknown int32 = iota
	multicall3Present
	multicall3Absent
)

// multicall3ABI is aggregate3's interface: every call may fail on its own.
var multicall3ABI = mustABI(`[{"name":"aggregate3","type":"function","stateMutability":"payable",
 "inputs":[{"name":"calls","type":"tuple[]","components":[{"name":"target","type":"address"},{"name":"allowFailure","type":"bool"},{"name":"callData","type":"bytes"}]}],
 "outputs":[{"name":"returnData","type":"tuple[]","components":[{"name":"success","type":"bool"},{"name":"returnData","type":"bytes"}]}]}]`)

func mustABI(s string) abi.ABI {
	a, err := abi.JSON(strings.NewReader(s))
	if err != nil {
		panic(err)
	}
	return a
}

type multicall3Call struct {
	Target       common.Address
	AllowFailure bool
	CallData     []byte
}

type multicall3Result struct {
	Success    bool
	ReturnData []byte
}

// Multicall runs calls in one aggregate3 eth_call at block at.
func (n *Node) Multicall(ctx context.Context, calls []bchain.EthMulticall, at bchain.EthBlockTag) ([]bchain.EthMulticallResult, error) {
	if len(calls) == 0 {
		return nil, nil
	}
	if err := n.probeMulticall3(ctx); err != nil {
		return nil, err
	}
	in := make([]multicall3Call, len(calls))
	for i, c := range calls {
		a, err := descAddress(c.Target)
		if err != nil {
			return nil, err
		}
		in[i] = multicall3Call{Target: a, AllowFailure: true, CallData: c.Data}
	}
	data, err := multicall3ABI.Pack("aggregate3", in)
	if err != nil {
		return nil, fmt.Errorf("multicall3: %w", err)
	}
	var out hexutil.Bytes
	msg := map[string]any{"to": multicall3Address, "data": hexutil.Bytes(data)}
	if err := n.rpc.call(ctx, &out, "eth_call", msg, blockArg(at)); err != nil {
		return nil, err
	}
	vals, err := multicall3ABI.Unpack("aggregate3", out)
	if err != nil || len(vals) != 1 {
		return nil, fmt.Errorf("multicall3: undecodable answer of %d bytes: %v", len(out), err)
	}
	res := *abi.ConvertType(vals[0], new([]multicall3Result)).(*[]multicall3Result)
	if len(res) != len(calls) {
		return nil, fmt.Errorf("multicall3: %d results for %d calls", len(res), len(calls))
	}
	rs := make([]bchain.EthMulticallResult, len(res))
	for i, r := range res {
		rs[i] = bchain.EthMulticallResult{Success: r.Success, Data: r.ReturnData}
	}
	return rs, nil
}

// multicall3Recheck is how long "no Multicall3" is believed: it may be
// deployed later (it is on most chains, by its pre-signed transaction).
const multicall3Recheck = 10 * time.Minute

// probeMulticall3 learns whether the chain has Multicall3 (its code at
// the canonical address): ErrUnsupported when not. Present is kept;
// absent is asked again after multicall3Recheck.
func (n *Node) probeMulticall3(ctx context.Context) error {
	switch n.multicall3.Load() {
	case multicall3Present:
		return nil
	case multicall3Absent:
		if time.Since(time.Unix(0, n.multicall3At.Load())) < multicall3Recheck {
			return fmt.Errorf("%w: no Multicall3 at %s", bchain.ErrUnsupported, multicall3Address.Hex())
		}
	}
	var code hexutil.Bytes
	if err := n.rpc.call(ctx, &code, "eth_getCode", multicall3Address, "latest"); err != nil {
		return err
	}
	if len(code) == 0 {
		n.multicall3At.Store(time.Now().UnixNano())
		if n.multicall3.Swap(multicall3Absent) != multicall3Absent {
			n.log.Info("no Multicall3 on this chain: ERC-4626 data is not available (checked again every 10 minutes)", "address", multicall3Address.Hex())
		}
		return fmt.Errorf("%w: no Multicall3 at %s", bchain.ErrUnsupported, multicall3Address.Hex())
	}
	if n.multicall3.Swap(multicall3Present) == multicall3Absent {
		n.log.Info("Multicall3 is now on this chain: ERC-4626 data is available", "address", multicall3Address.Hex())
	}
	return nil
}
