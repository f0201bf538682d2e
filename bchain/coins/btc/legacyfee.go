package btc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"

	"github.com/openexplorer/blockbook/bchain"
)

// Caller is the part of Node a coin's own RPC answers use: one JSON-RPC
// call decoded into out.
type Caller interface {
	Call(ctx context.Context, method string, params []any, out any) error
}

var _ Caller = (*Node)(nil)

// LegacyFeeEstimator estimates fees on nodes that have only the old
// estimatefee (no estimatesmartfee): Dogecoin Core, Bitcoin Cash Node and
// Bitcoin ABC, zcashd. It asks estimatefee, falls back to the node's relay
// fee when there is no estimate, and to Default when there is neither.
// Coins state only how their node differs; zero values are the common case.
type LegacyFeeEstimator struct {
	Node Caller
	// Unit is the base units per coin the node's amounts are in; 0 means 1e8.
	Unit int64
	// NoBlocksArg: estimatefee takes no arguments (Bitcoin Cash Node, ABC)
	// instead of the confirmation target.
	NoBlocksArg bool
	// RefusalIsError: an RPC error from estimatefee fails the estimate. By
	// default it means no estimate (a node without the method, or one that
	// refuses while its estimator has no data).
	RefusalIsError bool
	// NoRelayFee skips the relay-fee step (nodes without getnetworkinfo).
	NoRelayFee bool
	// Floor is the least rate ever answered (0: none).
	Floor int64
	// Default answers when there is neither an estimate nor a relay fee;
	// 0 makes that an error wrapping bchain.ErrUnsupported.
	Default int64
}

var _ bchain.FeeEstimator = (*LegacyFeeEstimator)(nil)

// EstimateFee returns base units per 1000 bytes. conservative has no
// meaning for estimatefee.
func (f *LegacyFeeEstimator) EstimateFee(ctx context.Context, blocks int, _ bool) (int64, error) {
	var args []any
	if !f.NoBlocksArg {
		args = []any{blocks}
	}
	var rate json.Number
	err := f.Node.Call(ctx, "estimatefee", args, &rate)
	var rpcErr *bchain.RPCError
	if err != nil && (f.RefusalIsError || !errors.As(err, &rpcErr)) {
		return 0, fmt.Errorf("estimatefee: %w", err)
	}
	// A rate of -1 or 0 means no estimate yet.
	if v, convErr := CoinsToBase(rate, f.unit()); err == nil && convErr == nil && v > 0 {
		return max(v, f.Floor), nil
	}
	if !f.NoRelayFee {
		var info struct {
			RelayFee json.Number `json:"relayfee"`
		}
		if err := f.Node.Call(ctx, "getnetworkinfo", nil, &info); err != nil {
			return 0, fmt.Errorf("getnetworkinfo: %w", err)
		}
		if v, err := CoinsToBase(info.RelayFee, f.unit()); err == nil && v > 0 {
			return max(v, f.Floor), nil
		}
	}
	if f.Default <= 0 {
		return 0, fmt.Errorf("%w: no fee estimate and no relay fee", bchain.ErrUnsupported)
	}
	return max(f.Default, f.Floor), nil
}

func (f *LegacyFeeEstimator) unit() int64 {
	if f.Unit == 0 {
		return 1e8
	}
	return f.Unit
}

// maxBaseAmount bounds converted amounts far inside int64: fee rates are
// tiny next to it, so anything larger is a malformed answer.
const maxBaseAmount = 1e18

// CoinsToBase converts a JSON amount in coins to base units (unit per
// coin) exactly, rounding half away from zero. Negative amounts (-1: no
// estimate) are returned as such.
func CoinsToBase(n json.Number, unit int64) (int64, error) {
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return 0, fmt.Errorf("invalid amount %q", n)
	}
	r.Mul(r, new(big.Rat).SetInt64(unit))
	limit := new(big.Rat).SetInt64(maxBaseAmount)
	if new(big.Rat).Abs(r).Cmp(limit) > 0 {
		return 0, fmt.Errorf("amount %q out of range", n)
	}
	q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	// |m|/denom >= 1/2 rounds away from zero.
	if new(big.Int).Mul(new(big.Int).Abs(m), big.NewInt(2)).Cmp(r.Denom()) >= 0 {
		q.Add(q, big.NewInt(int64(r.Sign())))
	}
	return q.Int64(), nil
}
