package doge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
)

// MinFeeRate is Dogecoin's recommended minimum fee, 0.01 DOGE per 1000
// bytes in koinu (1 DOGE = 1e8 koinu), since Dogecoin Core 1.14.4. Lower
// rates are relayed by some nodes but wallets and miners use this one, so
// estimates never go below it.
const MinFeeRate = 1_000_000

// feeEstimator answers fee estimates from Dogecoin Core 1.14, whose
// estimatesmartfee takes only a block count and whose estimator is often
// empty on a chain with Dogecoin's low fees: estimatefee when it has an
// answer, else the node's relay fee, and never less than MinFeeRate.
type feeEstimator struct {
	node caller
}

// caller is the part of btc.Node the estimator uses.
type caller interface {
	Call(ctx context.Context, method string, params []any, out any) error
}

// adjust fits the backend to Dogecoin Core: its fee estimation, and BIP44
// accounts only, as Dogecoin has no SegWit.
func adjust(b *bchain.Backend, node *btc.Node, _ *bchain.Config) error {
	b.Fees = &feeEstimator{node: node}
	b.Xpub = btc.P2PKHAccounts(b.Xpub)
	return nil
}

// EstimateFee returns koinu per 1000 bytes. conservative has no meaning for
// Dogecoin's estimator.
func (f *feeEstimator) EstimateFee(ctx context.Context, blocks int, _ bool) (int64, error) {
	var rate json.Number
	err := f.node.Call(ctx, "estimatefee", []any{blocks}, &rate)
	var rpcErr *bchain.RPCError
	if err != nil && !errors.As(err, &rpcErr) {
		return 0, err
	}
	if err == nil {
		// -1 means no estimate yet.
		if sat, err := coinsToKoinu(rate); err == nil && sat > 0 {
			return max(sat, MinFeeRate), nil
		}
	}
	var info struct {
		RelayFee json.Number `json:"relayfee"`
	}
	if err := f.node.Call(ctx, "getnetworkinfo", nil, &info); err != nil {
		return 0, err
	}
	if sat, err := coinsToKoinu(info.RelayFee); err == nil && sat > 0 {
		return max(sat, MinFeeRate), nil
	}
	return MinFeeRate, nil
}

// coinsToKoinu converts a JSON amount in DOGE to koinu exactly (rounded to
// the nearest koinu); negative amounts are returned as such.
func coinsToKoinu(n json.Number) (int64, error) {
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return 0, fmt.Errorf("invalid amount %q", n)
	}
	r.Mul(r, big.NewRat(1e8, 1))
	// Fee rates are tiny next to the int64 range; refuse absurd ones.
	if r.Cmp(big.NewRat(1e18, 1)) > 0 || r.Cmp(big.NewRat(-1e18, 1)) < 0 {
		return 0, fmt.Errorf("amount %q out of range", n)
	}
	f, _ := r.Float64()
	if f < 0 {
		return int64(f - 0.5), nil
	}
	return int64(f + 0.5), nil
}
