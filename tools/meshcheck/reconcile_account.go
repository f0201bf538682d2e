package meshcheck

import (
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
)

// The reconciliation of an account-model chain (Ethereum-type): balances
// are per account and currency (the coin, and each token), amounts big
// integers, and no operation has a coin.

// AccountOperation is an operation of an account-model chain as answered.
type AccountOperation struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Account *struct {
		Address string `json:"address"`
	} `json:"account"`
	Amount *struct {
		Value    string          `json:"value"`
		Currency json.RawMessage `json:"currency"`
	} `json:"amount"`
	CoinChange json.RawMessage `json:"coin_change"`
}

// AccountTransaction is a tx of an account-model chain as answered.
type AccountTransaction struct {
	TransactionIdentifier struct {
		Hash string `json:"hash"`
	} `json:"transaction_identifier"`
	Operations []AccountOperation `json:"operations"`
}

// AccountKey names a balance: an account in one currency (the currency
// object as the front answers it, in canonical JSON).
type AccountKey struct {
	Account, Currency string
}

// AccountReport is what an account-model reconciliation saw.
type AccountReport struct {
	Blocks, Txs, Operations, BalanceChecks int
	// Balances are every account's balances at the tip, from the
	// operations; Types counts the operations by type.
	Balances map[AccountKey]*big.Int
	Types    map[string]int
	// Seeds are the non-zero balances accounts had, at the block before
	// their first operation: value no operation created (genesis
	// allocations).
	Seeds      map[AccountKey]*big.Int
	Mismatches []string
}

// ReconcileAccounts does check:data on an account-model chain: it walks
// every block from the genesis through /block, applies the operations to
// each (account, currency), and after each block compares every one the
// block changed with /account/balance at that block, asking for that one
// currency. As rosetta-cli's check:data, it seeds an account's balance,
// when it first sees it, with /account/balance at the block before (the
// chain's genesis allocations have no operation): the report lists the
// non-zero seeds, for the caller to judge.
func (c *Client) ReconcileAccounts() (*AccountReport, error) {
	var status struct {
		Current BlockID `json:"current_block_identifier"`
	}
	if err := c.Call("/network/status", nil, &status); err != nil {
		return nil, err
	}
	r := &AccountReport{Balances: map[AccountKey]*big.Int{}, Types: map[string]int{}, Seeds: map[AccountKey]*big.Int{}}
	var prev BlockID
	for h := int64(0); h <= status.Current.Index; h++ {
		var b struct {
			Block struct {
				BlockIdentifier       BlockID              `json:"block_identifier"`
				ParentBlockIdentifier BlockID              `json:"parent_block_identifier"`
				Transactions          []AccountTransaction `json:"transactions"`
			} `json:"block"`
		}
		if err := c.Call("/block", map[string]any{"block_identifier": map[string]any{"index": h}}, &b); err != nil {
			return nil, err
		}
		blk := b.Block
		if m := chainLink(h, blk.BlockIdentifier, blk.ParentBlockIdentifier, &prev); m != "" {
			r.Mismatches = append(r.Mismatches, m)
		}
		r.Blocks++
		changed := map[AccountKey]*big.Int{}
		for _, tx := range blk.Transactions {
			r.Txs++
			for _, op := range tx.Operations {
				r.Operations++
				r.Types[op.Type]++
				if err := r.apply(h, op, changed); err != nil {
					return nil, err
				}
			}
		}
		keys := make([]AccountKey, 0, len(changed))
		for k := range changed {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			return keys[i].Account+keys[i].Currency < keys[j].Account+keys[j].Currency
		})
		for _, k := range keys {
			if err := r.seed(c, k, h); err != nil {
				return nil, err
			}
			r.Balances[k].Add(r.Balances[k], changed[k])
			if err := r.compare(c, k, blk.BlockIdentifier); err != nil {
				return nil, err
			}
		}
	}
	return r, nil
}

func (r *AccountReport) apply(h int64, op AccountOperation, changed map[AccountKey]*big.Int) error {
	if op.CoinChange != nil {
		r.Mismatches = append(r.Mismatches, fmt.Sprintf("block %d: %s operation with a coin_change on an account-model chain", h, op.Type))
	}
	if op.Amount == nil {
		return nil
	}
	if op.Account == nil {
		r.Mismatches = append(r.Mismatches, fmt.Sprintf("block %d: operation with an amount and no account", h))
		return nil
	}
	v, ok := new(big.Int).SetString(op.Amount.Value, 10)
	if !ok {
		return fmt.Errorf("block %d: amount %q", h, op.Amount.Value)
	}
	var cur any
	if err := json.Unmarshal(op.Amount.Currency, &cur); err != nil {
		return fmt.Errorf("block %d: currency: %w", h, err)
	}
	canon, err := json.Marshal(cur) // sorted keys: one key per currency
	if err != nil {
		return err
	}
	k := AccountKey{Account: op.Account.Address, Currency: string(canon)}
	if changed[k] == nil {
		changed[k] = new(big.Int)
	}
	changed[k].Add(changed[k], v)
	return nil
}

// seed starts an account's balance at its first operation, block h.
func (r *AccountReport) seed(c *Client, k AccountKey, h int64) error {
	if r.Balances[k] != nil {
		return nil
	}
	r.Balances[k] = new(big.Int)
	if h == 0 {
		return nil
	}
	v, err := c.balance(k, h-1)
	if err != nil {
		return err
	}
	if v.Sign() != 0 {
		r.Seeds[k] = v
		r.Balances[k].Set(v)
	}
	return nil
}

func (c *Client) balance(k AccountKey, at int64) (*big.Int, error) {
	var cur any
	if err := json.Unmarshal([]byte(k.Currency), &cur); err != nil {
		return nil, err
	}
	var bal balanceAnswer
	err := c.Call("/account/balance", map[string]any{
		"account_identifier": map[string]any{"address": k.Account},
		"block_identifier":   map[string]any{"index": at},
		"currencies":         []any{cur},
	}, &bal)
	if err != nil {
		return nil, err
	}
	if len(bal.Balances) != 1 {
		return nil, fmt.Errorf("%s in %s at %d: %d balances for one currency", k.Account, k.Currency, at, len(bal.Balances))
	}
	v, ok := new(big.Int).SetString(bal.Balances[0].Value, 10)
	if !ok {
		return nil, fmt.Errorf("balance %q", bal.Balances[0].Value)
	}
	return v, nil
}

func (r *AccountReport) compare(c *Client, k AccountKey, at BlockID) error {
	var cur any
	if err := json.Unmarshal([]byte(k.Currency), &cur); err != nil {
		return err
	}
	var bal balanceAnswer
	err := c.Call("/account/balance", map[string]any{
		"account_identifier": map[string]any{"address": k.Account},
		"block_identifier":   map[string]any{"index": at.Index},
		"currencies":         []any{cur},
	}, &bal)
	if err != nil {
		return err
	}
	r.BalanceChecks++
	want := r.Balances[k].String()
	if bal.BlockIdentifier != at || len(bal.Balances) != 1 || bal.Balances[0].Value != want {
		r.Mismatches = append(r.Mismatches, fmt.Sprintf("%s in %s at %v: /account/balance %+v, operations sum to %s",
			k.Account, k.Currency, at, bal, want))
	}
	return nil
}
