package mesh_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/tools/chaingen"
)

// TestReconcile is check:data over the fixture's chain: every block's
// operations, applied from the genesis, agree with /account/balance at
// every height an account changed, and at the tip with the chain's own
// ledger (replayed from the raw blocks with btcd's libraries).
func TestReconcile(t *testing.T) {
	f := newFixture(t)
	r, err := f.client.Reconcile(map[string]bool{"unspendable": true})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range r.Mismatches {
		t.Error(m)
	}
	if r.Blocks != f.TipHeight()+1 || r.BalanceChecks < r.Blocks {
		t.Errorf("walked %d blocks with %d balance checks; the chain has %d blocks", r.Blocks, r.BalanceChecks, f.TipHeight()+1)
	}
	t.Logf("%d blocks, %d txs, %d operations, %d accounts, %d balance checks", r.Blocks, r.Txs, r.Operations, len(r.Balances), r.BalanceChecks)

	led := f.Ledger
	var scripts int64
	for acct, bal := range r.Balances {
		switch {
		case strings.HasPrefix(acct, "script:"):
			scripts += bal
		case acct == "unspendable":
		default:
			a := led.Addresses[acct]
			if a == nil {
				if bal != 0 && !genesisOnly(f, acct) {
					t.Errorf("account %s holds %d, the ledger does not know it", acct, bal)
				}
				continue
			}
			if bal != a.Balance {
				t.Errorf("%s: operations sum to %d, the ledger's balance is %d", acct, bal, a.Balance)
			}
		}
	}
	for addr, a := range led.Addresses {
		if _, ok := r.Balances[addr]; !ok {
			t.Errorf("ledger address %s (balance %d) has no operation", addr, a.Balance)
		}
	}
	if want := led.NoAddress.Balance - led.NoAddress.Burned; scripts != want || r.Balances["unspendable"] != led.NoAddress.Burned {
		t.Errorf("script pseudo-accounts hold %d, unspendable %d; the ledger: %d without an address, %d burnt",
			scripts, r.Balances["unspendable"], want, led.NoAddress.Burned)
	}
	// The coins the operations leave unspent are the ledger's UTXOs.
	for addr, a := range led.Addresses {
		var want []string
		for _, u := range a.Utxos {
			want = append(want, fmt.Sprintf("%s:%d", u.Txid, u.Vout))
		}
		slices.Sort(want)
		if got := coinsOf(r, addr); !slices.Equal(want, got) {
			t.Errorf("%s: coins %v, the ledger's UTXOs %v", addr, got, want)
		}
	}
}

// TestBalanceAtPastBlocks compares /account/balance at past blocks with
// the ledger of the chain cut at those blocks (replayed from the raw
// blocks), for every address the cut chain knows.
func TestBalanceAtPastBlocks(t *testing.T) {
	f := newFixture(t)
	tip := f.TipHeight()
	checked := 0
	// Below tip/2 the balance is summed up from the genesis, above it taken
	// back from the stored one: both ways are checked.
	for _, h := range []int{tip/2 - 1, tip / 2, tip - 6, tip - 4, tip - 2, tip - 1} {
		led, err := chaingen.ComputeLedger(f.Params, f.Gen.Blocks()[:h+1])
		if err != nil {
			t.Fatal(err)
		}
		for addr, a := range led.Addresses {
			var bal struct {
				BlockIdentifier blockID `json:"block_identifier"`
				Balances        []struct {
					Value string `json:"value"`
				} `json:"balances"`
			}
			err := f.client.Call("/account/balance", map[string]any{"account_identifier": map[string]any{"address": addr},
				"block_identifier": map[string]any{"hash": f.BlockHash(h)}}, &bal)
			if err != nil {
				t.Fatal(err)
			}
			if bal.BlockIdentifier.Index != int64(h) || bal.Balances[0].Value != fmt.Sprint(a.Balance) {
				t.Errorf("%s at %d: %+v, the ledger's balance %d", addr, h, bal, a.Balance)
			}
			checked++
		}
	}
	t.Logf("%d balances at 6 past blocks", checked)
	if checked < 100 {
		t.Errorf("only %d balances checked", checked)
	}
}

// genesisOnly tells an account paid only by the genesis coinbase, which
// the ledger leaves out (consensus never spends it).
func genesisOnly(f *fixture, acct string) bool {
	var b struct {
		Block struct {
			Transactions []struct {
				Operations []struct {
					Account *struct {
						Address string `json:"address"`
					} `json:"account"`
				} `json:"operations"`
			} `json:"transactions"`
		} `json:"block"`
	}
	if err := f.client.Call("/block", map[string]any{"block_identifier": map[string]any{"index": 0}}, &b); err != nil {
		return false
	}
	for _, tx := range b.Block.Transactions {
		for _, op := range tx.Operations {
			if op.Account != nil && op.Account.Address == acct {
				return true
			}
		}
	}
	return false
}
