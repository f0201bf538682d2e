package tron

import (
	"context"
	"math/big"
	"strconv"
	"sync"
)

// The account answers Blockbook reads for an address's chainExtraData,
// asked with visible=true (base58 addresses): /wallet/getaccountresource
// (bandwidth, energy, voting power), /wallet/getaccount (stakes,
// unstakes, votes, delegations; {} for an account that does not exist)
// and /wallet/getReward (the unclaimed voting reward).

// AccountResource is /wallet/getaccountresource (fields as java-tron
// names them; zero ones are left out by the node).
type AccountResource struct {
	FreeNetLimit      int64 `json:"freeNetLimit"`
	FreeNetUsed       int64 `json:"freeNetUsed"`
	NetLimit          int64 `json:"NetLimit"`
	NetUsed           int64 `json:"NetUsed"`
	TotalNetLimit     int64 `json:"TotalNetLimit"`
	TotalNetWeight    int64 `json:"TotalNetWeight"`
	EnergyLimit       int64 `json:"EnergyLimit"`
	EnergyUsed        int64 `json:"EnergyUsed"`
	TotalEnergyLimit  int64 `json:"TotalEnergyLimit"`
	TotalEnergyWeight int64 `json:"TotalEnergyWeight"`
	TronPowerUsed     int64 `json:"tronPowerUsed"`
	TronPowerLimit    int64 `json:"tronPowerLimit"`
}

// Account is the part of /wallet/getaccount read here.
type Account struct {
	Address  string `json:"address"`
	FrozenV2 []struct {
		Type   string `json:"type"` // absent: BANDWIDTH
		Amount int64  `json:"amount"`
	} `json:"frozenV2"`
	UnfrozenV2 []struct {
		Amount     int64 `json:"unfreeze_amount"`
		ExpireTime int64 `json:"unfreeze_expire_time"` // ms
	} `json:"unfrozenV2"`
	Votes           []Vote `json:"votes"`
	AccountResource struct {
		DelegatedEnergy int64 `json:"delegated_frozenV2_balance_for_energy"`
	} `json:"account_resource"`
	DelegatedBandwidth int64 `json:"delegated_frozenV2_balance_for_bandwidth"`
	LatestWithdrawTime int64 `json:"latest_withdraw_time"` // ms
}

// AccountExtra is Blockbook's TronAccountExtraData: resources, and the
// staking info when the account exists.
type AccountExtra struct {
	AvailableStakedBandwidth int64        `json:"availableStakedBandwidth"`
	TotalStakedBandwidth     int64        `json:"totalStakedBandwidth"`
	AvailableFreeBandwidth   int64        `json:"availableFreeBandwidth"`
	TotalFreeBandwidth       int64        `json:"totalFreeBandwidth"`
	AvailableEnergy          int64        `json:"availableEnergy"`
	TotalEnergy              int64        `json:"totalEnergy"`
	TotalEnergyLimit         int64        `json:"totalEnergyLimit"`
	TotalEnergyWeight        int64        `json:"totalEnergyWeight"`
	TotalBandwidthLimit      int64        `json:"totalBandwidthLimit"`
	TotalBandwidthWeight     int64        `json:"totalBandwidthWeight"`
	StakingInfo              *StakingInfo `json:"stakingInfo,omitempty"`
}

// StakingInfo is Blockbook's TronStakingInfo; amounts in sun as strings,
// times in seconds.
type StakingInfo struct {
	StakedBalance             string           `json:"stakedBalance"`
	StakedBalanceEnergy       string           `json:"stakedBalanceEnergy"`
	StakedBalanceBandwidth    string           `json:"stakedBalanceBandwidth"`
	UnstakingBatches          []UnstakingBatch `json:"unstakingBatches"`
	TotalVotingPower          string           `json:"totalVotingPower"`
	AvailableVotingPower      string           `json:"availableVotingPower"`
	Votes                     []AccountVote    `json:"votes"`
	UnclaimedReward           string           `json:"unclaimedReward"`
	DelegatedBalanceEnergy    string           `json:"delegatedBalanceEnergy"`
	DelegatedBalanceBandwidth string           `json:"delegatedBalanceBandwidth"`
	LatestWithdrawTime        int64            `json:"latestWithdrawTime"`
}

// UnstakingBatch is one Stake 2.0 unfreeze waiting to expire.
type UnstakingBatch struct {
	Amount     string `json:"amount"`
	ExpireTime int64  `json:"expireTime"`
}

// AccountVote is one current vote.
type AccountVote struct {
	Address   string `json:"address"`
	VoteCount string `json:"voteCount"`
}

func available(limit, used int64) int64 { return max(limit-used, 0) }

// BuildAccountExtra combines the three answers by Blockbook's rules:
// available = limit − used (not below 0); staked balances are the
// BANDWIDTH and ENERGY stakes (TRON_POWER is derived, not staked);
// batches, votes and rewards without a positive amount are left out;
// acct nil (the node failed) or not existing gives no staking info.
func BuildAccountExtra(res *AccountResource, acct *Account, reward int64) AccountExtra {
	e := AccountExtra{
		AvailableStakedBandwidth: available(res.NetLimit, res.NetUsed), TotalStakedBandwidth: res.NetLimit,
		AvailableFreeBandwidth: available(res.FreeNetLimit, res.FreeNetUsed), TotalFreeBandwidth: res.FreeNetLimit,
		AvailableEnergy: available(res.EnergyLimit, res.EnergyUsed), TotalEnergy: res.EnergyLimit,
		TotalEnergyLimit: res.TotalEnergyLimit, TotalEnergyWeight: res.TotalEnergyWeight,
		TotalBandwidthLimit: res.TotalNetLimit, TotalBandwidthWeight: res.TotalNetWeight,
	}
	if acct == nil || acct.Address == "" {
		return e
	}
	energy, bandwidth := new(big.Int), new(big.Int)
	for _, f := range acct.FrozenV2 {
		if f.Amount <= 0 {
			continue
		}
		switch f.Type {
		case "", "BANDWIDTH":
			bandwidth.Add(bandwidth, big.NewInt(f.Amount))
		case "ENERGY":
			energy.Add(energy, big.NewInt(f.Amount))
		}
	}
	si := &StakingInfo{
		StakedBalance: new(big.Int).Add(energy, bandwidth).String(), StakedBalanceEnergy: energy.String(),
		StakedBalanceBandwidth: bandwidth.String(), UnstakingBatches: []UnstakingBatch{}, Votes: []AccountVote{},
		TotalVotingPower:          strconv.FormatInt(max(res.TronPowerLimit, 0), 10),
		AvailableVotingPower:      strconv.FormatInt(max(max(res.TronPowerLimit, 0)-res.TronPowerUsed, 0), 10),
		UnclaimedReward:           strconv.FormatInt(max(reward, 0), 10),
		DelegatedBalanceEnergy:    strconv.FormatInt(max(acct.AccountResource.DelegatedEnergy, 0), 10),
		DelegatedBalanceBandwidth: strconv.FormatInt(max(acct.DelegatedBandwidth, 0), 10),
		LatestWithdrawTime:        max(acct.LatestWithdrawTime, 0) / 1000,
	}
	for _, u := range acct.UnfrozenV2 {
		if u.Amount > 0 {
			si.UnstakingBatches = append(si.UnstakingBatches, UnstakingBatch{Amount: strconv.FormatInt(u.Amount, 10), ExpireTime: max(u.ExpireTime, 0) / 1000})
		}
	}
	for _, v := range acct.Votes {
		if a := renderAddress(v.VoteAddress); a != "" && v.VoteCount != nil && *v.VoteCount > 0 {
			si.Votes = append(si.Votes, AccountVote{Address: a, VoteCount: strconv.FormatInt(*v.VoteCount, 10)})
		}
	}
	e.StakingInfo = si
	return e
}

// AccountExtra asks the node the three answers at once. Only the
// resources are required: without the account there is no staking info,
// without the reward it is 0 (Blockbook's choices).
func (n *Node) AccountExtra(ctx context.Context, addr string) (*AccountExtra, error) {
	req := map[string]any{"address": addr, "visible": true}
	var res AccountResource
	var acct Account
	var reward struct {
		Reward int64 `json:"reward"`
	}
	var errRes, errAcct, errReward error
	var wg sync.WaitGroup
	wg.Go(func() { errRes = n.full.post(ctx, "/wallet/getaccountresource", req, &res) })
	wg.Go(func() { errAcct = n.full.post(ctx, "/wallet/getaccount", req, &acct) })
	wg.Go(func() { errReward = n.full.post(ctx, "/wallet/getReward", req, &reward) })
	wg.Wait()
	if errRes != nil {
		return nil, errRes
	}
	ap := &acct
	if errAcct != nil {
		ap = nil
	}
	if errReward != nil {
		reward.Reward = 0
	}
	e := BuildAccountExtra(&res, ap, reward.Reward)
	return &e, nil
}
