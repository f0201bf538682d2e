package tron

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/openexplorer/blockbook/tools/trondouble"
)

// The recorded Nile contract call: the fields Blockbook's chainExtraData
// takes from it, read off the recorded answers.
func TestExtraOfRecordedCall(t *testing.T) {
	var tx HTTPTx
	readJSON(t, "nile_gettransactionbyid_01b4cde4.json", &tx)
	var info TxInfo
	readJSON(t, "nile_gettransactioninfobyid_01b4cde4.json", &info)
	got, _ := json.Marshal(Extra(&tx, &info))
	want := `{"contractType":"TriggerSmartContract","operation":"contractCall","totalFee":"5254500","feeLimit":"10000000000",` +
		`"energyUsageTotal":"44585","energyFee":"4458500","bandwidthUsage":"0","bandwidthFee":"796000","result":"SUCCESS"}`
	if string(got) != want {
		t.Errorf("extra\n%s\nwant\n%s", got, want)
	}
}

// Every generated tx's chainExtraData, read from the double's answers,
// against what the tx's own facts say (operation names: Blockbook's).
func TestExtraOfGeneratedTxs(t *testing.T) {
	n, c, _ := doubleChain(t, trondouble.Options{Seed: 5}, 150, 8)
	ctx := context.Background()
	ops := map[string]string{
		trondouble.KindTransfer: "transfer", trondouble.KindTrigger: "contractCall", trondouble.KindFreeze: "freeze",
		trondouble.KindFreezeV1: "freeze", trondouble.KindUnfreeze: "unfreeze", trondouble.KindUnfreezeV1: "unfreeze",
		trondouble.KindVote: "vote", trondouble.KindDelegate: "delegate", trondouble.KindUndelegate: "undelegate",
		trondouble.KindCreateAcct: "activateAccount", trondouble.KindTRC10: "trc10Transfer",
		trondouble.KindWithdrawExpire: "withdraw", trondouble.KindWithdrawReward: "voteRewardAmount",
		trondouble.KindCreateContract: "",
	}
	seen := map[string]bool{}
	for _, blk := range c.Blocks() {
		var hb HTTPBlock
		if err := n.full.post(ctx, "/wallet/getblockbynum", map[string]any{"num": blk.Number}, &hb); err != nil {
			t.Fatal(err)
		}
		var infos []TxInfo
		if err := n.full.post(ctx, "/wallet/gettransactioninfobyblocknum", map[string]any{"num": blk.Number}, &infos); err != nil {
			t.Fatal(err)
		}
		for i, tx := range blk.Txs {
			e := Extra(&hb.Transactions[i], &infos[i])
			want := ChainExtra{ContractType: tx.Kind, Operation: ops[tx.Kind], BandwidthUsage: "268"}
			amt := strconv.FormatInt(tx.Amount, 10)
			switch tx.Kind {
			case trondouble.KindFreeze, trondouble.KindFreezeV1:
				want.StakeAmount = amt
			case trondouble.KindUnfreeze:
				want.UnstakeAmount = amt
			case trondouble.KindUnfreezeV1, trondouble.KindWithdrawExpire:
				want.UnstakeAmount = strconv.FormatInt(tx.Withdrawn, 10)
			case trondouble.KindWithdrawReward:
				want.ClaimedVoteReward = strconv.FormatInt(tx.Withdrawn, 10)
			case trondouble.KindDelegate, trondouble.KindUndelegate:
				want.DelegateAmount, want.DelegateTo = amt, EncodeAddress(tx.To[:])
			case trondouble.KindTRC10: // from the contract's asset_name
				want.AssetIssueID = trondouble.TRC10Asset
			case trondouble.KindVote:
				var w [20]byte
				raw := hb.Transactions[i].RawData.Contract[0].Parameter.Value.Votes[0].VoteAddress
				b, _ := hex.DecodeString(raw[2:])
				copy(w[:], b)
				want.Votes = []ExtraVote{{Address: EncodeAddress(w[:]), Count: amt}}
			}
			// The double's resources, fee limits and receipts.
			switch tx.Kind {
			case trondouble.KindFreeze, trondouble.KindDelegate, trondouble.KindUndelegate:
				want.Resource = "energy"
			case trondouble.KindTrigger:
				want.FeeLimit, want.Result, want.BandwidthUsage = "100000000", "SUCCESS", "0"
				want.EnergyUsageTotal, want.EnergyFee, want.BandwidthFee = "14650", strconv.FormatInt(tx.Fee-345_000, 10), "345000"
				if tx.Failed {
					want.Result = "REVERT"
				}
			case trondouble.KindCreateContract:
				want.Result, want.BandwidthUsage, want.EnergyUsageTotal, want.EnergyFee = "SUCCESS", "0", "120000", strconv.FormatInt(tx.Fee, 10)
				if tx.Failed {
					want.Result = "OUT_OF_ENERGY"
				}
			}
			if tx.Fee > 0 {
				want.TotalFee = strconv.FormatInt(tx.Fee, 10)
			}
			gj, _ := json.Marshal(e)
			wj, _ := json.Marshal(want)
			if string(gj) != string(wj) {
				t.Errorf("tx %x %s:\n%s\nwant\n%s", tx.ID, tx.Kind, gj, wj)
			}
			seen[tx.Kind] = true
		}
	}
	if len(seen) != len(ops) {
		t.Errorf("kinds seen %v", seen)
	}
}
