package tron

import (
	"encoding/hex"
	"strconv"
	"strings"
)

// ChainExtra is the tx part of Blockbook's Tron chainExtraData (its
// bchain.TronChainExtraData, field for field: what its code emits,
// including feeLimit and claimedVoteReward, which its api-tron.md leaves
// out). Amounts are sun as decimal strings; a field the node left out is
// left out.
type ChainExtra struct {
	ContractType      string      `json:"contractType,omitempty"`
	Operation         string      `json:"operation,omitempty"`
	Note              string      `json:"note,omitempty"`
	Resource          string      `json:"resource,omitempty"`
	StakeAmount       string      `json:"stakeAmount,omitempty"`
	UnstakeAmount     string      `json:"unstakeAmount,omitempty"`
	ClaimedVoteReward string      `json:"claimedVoteReward,omitempty"`
	DelegateAmount    string      `json:"delegateAmount,omitempty"`
	DelegateTo        string      `json:"delegateTo,omitempty"`
	AssetIssueID      string      `json:"assetIssueID,omitempty"`
	TotalFee          string      `json:"totalFee,omitempty"`
	FeeLimit          string      `json:"feeLimit,omitempty"`
	EnergyUsage       string      `json:"energyUsage,omitempty"`
	EnergyUsageTotal  string      `json:"energyUsageTotal,omitempty"`
	EnergyFee         string      `json:"energyFee,omitempty"`
	BandwidthUsage    string      `json:"bandwidthUsage,omitempty"`
	BandwidthFee      string      `json:"bandwidthFee,omitempty"`
	Result            string      `json:"result,omitempty"`
	Votes             []ExtraVote `json:"votes,omitempty"`
}

// ExtraVote is one vote of a VoteWitnessContract.
type ExtraVote struct {
	Address string `json:"address,omitempty"`
	Count   string `json:"count,omitempty"`
}

// operations are Blockbook's names of the contract types it normalizes.
var operations = map[string]string{
	"AccountCreateContract":          "activateAccount",
	"VoteWitnessContract":            "vote",
	"FreezeBalanceContract":          "freeze",
	"FreezeBalanceV2Contract":        "freeze",
	"UnfreezeBalanceContract":        "unfreeze",
	"UnfreezeBalanceV2Contract":      "unfreeze",
	"WithdrawExpireUnfreezeContract": "withdraw",
	"WithdrawBalanceContract":        "voteRewardAmount",
	"DelegateResourceContract":       "delegate",
	"UnDelegateResourceContract":     "undelegate",
	"TransferContract":               "transfer",
	"TransferAssetContract":          "trc10Transfer",
	"TriggerSmartContract":           "contractCall",
}

// resources are java-tron's resource names as Blockbook shows them
// (BANDWIDTH, the enum's zero, is left out by the node's JSON).
var resources = map[string]string{"BANDWIDTH": "bandwidth", "ENERGY": "energy", "TRON_POWER": "votePower"}

// noteMax bounds the memo shown (Blockbook's 4 KB).
const noteMax = 4096

func sun(v *int64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatInt(*v, 10)
}

// Extra builds a tx's chainExtraData from its body and its info, by
// Blockbook's rules: the operation from the contract type, the amounts
// each type carries (some from the info: what an unfreeze or withdrawal
// returned), the receipt's resources and fees (bandwidth usage "0" when
// absent), and the result (the receipt's, else the info's).
func Extra(tx *HTTPTx, info *TxInfo) ChainExtra {
	e := ChainExtra{FeeLimit: sun(tx.RawData.FeeLimit), Note: note(tx.RawData.Data)}
	if len(tx.RawData.Contract) > 0 {
		c := &tx.RawData.Contract[0]
		v := &c.Parameter.Value
		e.ContractType, e.Operation, e.Resource = c.Type, operations[c.Type], resources[v.Resource]
		switch c.Type {
		case "VoteWitnessContract":
			for _, vt := range v.Votes {
				if vt.VoteCount != nil {
					e.Votes = append(e.Votes, ExtraVote{Address: renderAddress(vt.VoteAddress), Count: sun(vt.VoteCount)})
				}
			}
		case "FreezeBalanceContract", "FreezeBalanceV2Contract":
			e.StakeAmount = sun(v.FrozenBalance)
		case "UnfreezeBalanceContract":
			e.UnstakeAmount = sun(info.UnfreezeAmount)
		case "UnfreezeBalanceV2Contract":
			e.UnstakeAmount = sun(v.UnfreezeBalance)
		case "WithdrawExpireUnfreezeContract":
			e.UnstakeAmount = sun(info.WithdrawExpireAmount)
		case "WithdrawBalanceContract":
			e.ClaimedVoteReward = sun(info.WithdrawAmount)
		case "DelegateResourceContract", "UnDelegateResourceContract":
			e.DelegateAmount, e.DelegateTo = sun(v.Balance), renderAddress(v.ReceiverAddress)
		}
	}
	r := &info.Receipt
	e.AssetIssueID = strings.TrimSpace(info.AssetIssueID)
	if e.AssetIssueID == "" && len(tx.RawData.Contract) > 0 && tx.RawData.Contract[0].Type == "TransferAssetContract" {
		// java-tron's info names the asset only when it is issued; a
		// transfer names it in its contract (hex of the token id). Ours,
		// not Blockbook's: it leaves a TRC-10 transfer's asset out.
		e.AssetIssueID = assetName(tx.RawData.Contract[0].Parameter.Value.AssetName)
	}
	e.TotalFee, e.EnergyUsage, e.EnergyUsageTotal, e.EnergyFee = sun(info.Fee), sun(r.EnergyUsage), sun(r.EnergyUsageTotal), sun(r.EnergyFee)
	e.BandwidthUsage, e.BandwidthFee = sun(r.NetUsage), sun(r.NetFee)
	if e.BandwidthUsage == "" {
		e.BandwidthUsage = "0"
	}
	e.Result = strings.TrimSpace(r.Result)
	if e.Result == "" {
		e.Result = strings.TrimSpace(info.Result)
	}
	return e
}

// assetName reads a TRC-10 asset_name: hex of the token id (as sent
// when it is not hex).
func assetName(h string) string {
	b, err := hex.DecodeString(strip0x(strings.TrimSpace(h)))
	if err != nil {
		return h
	}
	return strings.ToValidUTF8(string(b), "")
}

// note decodes the memo (hex of bytes, shown as valid UTF-8).
func note(h string) string {
	b, err := hex.DecodeString(strip0x(strings.TrimSpace(h)))
	if err != nil {
		return ""
	}
	return strings.ToValidUTF8(string(b[:min(len(b), noteMax)]), "")
}

// renderAddress shows a node address as base58check ("" when empty; as
// sent when not an address).
func renderAddress(s string) string {
	if s == "" {
		return ""
	}
	d, err := ParseAddress(s)
	if err != nil {
		return s
	}
	return EncodeAddress(d)
}
