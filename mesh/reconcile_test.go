package mesh_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
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
		var want, got []string
		for _, u := range a.Utxos {
			want = append(want, fmt.Sprintf("%s:%d", u.Txid, u.Vout))
		}
		for id, c := range r.Coins {
			if c.Account == addr {
				got = append(got, id)
			}
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(want, got) {
			t.Errorf("%s: coins %v, the ledger's UTXOs %v", addr, got, want)
		}
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
