package api

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/openexplorer/blockbook/bchain"
)

// Staking pools (Ethereum-type chains), as Blockbook serves Everstake's:
// an operator configures one pool by <NETWORK>_STAKING_POOL_CONTRACT
// ("<pool name>/<contract>"); every address answer then reads the pool's
// per-address methods from the node and lists the pool under stakingPools
// unless every value is zero. The status lists the configured pools.

// Selectors of the pool's read methods (the first 4 bytes of the keccak256
// of their signatures), each taking the address.
var (
	selPendingBalanceOf          = []byte{0x59, 0xb8, 0xc7, 0x63} // pendingBalanceOf(address)
	selPendingDepositedBalanceOf = []byte{0x80, 0xf1, 0x4e, 0xcc} // pendingDepositedBalanceOf(address)
	selDepositedBalanceOf        = []byte{0x68, 0xb4, 0x82, 0x54} // depositedBalanceOf(address)
	selWithdrawRequest           = []byte{0x14, 0xcb, 0xc4, 0x6a} // withdrawRequest(address): (requested, readyForClaim)
	selRestakedRewardOf          = []byte{0x0c, 0x98, 0x92, 0x9a} // restakedRewardOf(address)
	selAutocompoundBalanceOf     = []byte{0x2f, 0xec, 0x79, 0x66} // autocompoundBalanceOf(address)
)

// errBadPoolAnswer is a pool method's answer that is not a uint256.
var errBadPoolAnswer = errors.New("staking pool: invalid balance")

// ParseStakingPool splits "<pool name>/<contract>" as Blockbook does.
func ParseStakingPool(v string) (name, contract string, err error) {
	parts := strings.Split(v, "/")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return "", "", fmt.Errorf("%q is not '<pool name>/<pool contract>'", v)
	}
	return parts[0], parts[1], nil
}

// stakingPools reads the configured pools' values of desc; pools where all
// are zero are left out. A failed read fails the answer, as Blockbook's.
func (s *EthService) stakingPools(ctx context.Context, desc bchain.AddrDesc) ([]StakingPool, error) {
	var out []StakingPool
	for _, p := range s.cfg.StakingPools {
		name, contract, err := ParseStakingPool(p)
		if err != nil {
			continue // app refuses these at start
		}
		cdesc, err := s.addrs.AddrDescFromAddress(contract)
		if err != nil {
			return nil, fmt.Errorf("staking pool %s: contract: %w", name, err)
		}
		sp, err := s.stakingPool(ctx, cdesc, desc)
		if err != nil {
			return nil, fmt.Errorf("staking pool %s: %w", name, err)
		}
		if sp == nil {
			continue
		}
		sp.Contract, sp.Name = contract, name
		out = append(out, *sp)
	}
	return out, nil
}

// stakingPool reads one pool's values of addr; nil when all are zero.
func (s *EthService) stakingPool(ctx context.Context, pool, addr bchain.AddrDesc) (*StakingPool, error) {
	var vals [7]*big.Int
	calls := []struct {
		sel []byte
		dst []int // words of the answer → vals indexes
	}{
		{selPendingBalanceOf, []int{0}},
		{selPendingDepositedBalanceOf, []int{1}},
		{selDepositedBalanceOf, []int{2}},
		{selWithdrawRequest, []int{3, 4}},
		{selRestakedRewardOf, []int{5}},
		{selAutocompoundBalanceOf, []int{6}},
	}
	arg := make([]byte, 32)
	copy(arg[32-len(addr):], addr)
	zero := true
	for _, c := range calls {
		out, err := s.eth.Call(ctx, bchain.EthCall{To: pool, Data: append(append([]byte{}, c.sel...), arg...)})
		if err != nil {
			return nil, err
		}
		if len(out) < 32*len(c.dst) {
			return nil, errBadPoolAnswer
		}
		for i, d := range c.dst {
			vals[d] = new(big.Int).SetBytes(out[32*i : 32*(i+1)])
			zero = zero && vals[d].Sign() == 0
		}
	}
	if zero {
		return nil, nil
	}
	return &StakingPool{
		PendingBalance: amount(vals[0]), PendingDepositedBalance: amount(vals[1]), DepositedBalance: amount(vals[2]),
		WithdrawTotalAmount: amount(vals[3]), ClaimableAmount: amount(vals[4]), RestakedReward: amount(vals[5]),
		AutocompoundBalance: amount(vals[6]),
	}, nil
}
