package meshcheck

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
)

// Poster sends one Mesh request (a JSON body) to path and returns the
// status and the answer.
type Poster func(path string, body any) (status int, answer []byte, err error)

// Client posts requests and checks every answer against the
// specification before decoding it.
type Client struct {
	Checker *Checker
	Post    Poster
	// Network is the network_identifier sent with every request.
	Network map[string]any
}

// Call posts body to path; a 200 answer is decoded into out, any other
// answer is returned as an *AnswerError (after its validation).
func (c *Client) Call(path string, body map[string]any, out any) error {
	if body == nil {
		body = map[string]any{}
	}
	if _, ok := body["network_identifier"]; !ok && path != "/network/list" {
		body["network_identifier"] = c.Network
	}
	status, answer, err := c.Post(path, body)
	if err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	if err := c.Checker.Check(path, status, answer); err != nil {
		return fmt.Errorf("POST %s %v: %w; answer %.300s", path, body, err, answer)
	}
	if status != http.StatusOK {
		var e AnswerError
		if err := json.Unmarshal(answer, &e); err != nil {
			return fmt.Errorf("POST %s: error answer: %w", path, err)
		}
		e.Status = status
		return &e
	}
	if out != nil {
		if err := json.Unmarshal(answer, out); err != nil {
			return fmt.Errorf("POST %s: decode: %w", path, err)
		}
	}
	return nil
}

// AnswerError is a Mesh error answer.
type AnswerError struct {
	Status    int            `json:"-"`
	Code      int            `json:"code"`
	Message   string         `json:"message"`
	Retriable bool           `json:"retriable"`
	Details   map[string]any `json:"details"`
}

func (e *AnswerError) Error() string {
	return fmt.Sprintf("Mesh error %d %q (HTTP %d) %v", e.Code, e.Message, e.Status, e.Details)
}

// The parts of the answers the reconciliation (and the tests) read.

// BlockID is a block identifier.
type BlockID struct {
	Index int64  `json:"index"`
	Hash  string `json:"hash"`
}

// Operation is an operation as answered.
type Operation struct {
	OperationIdentifier struct {
		Index int64 `json:"index"`
	} `json:"operation_identifier"`
	Type    string `json:"type"`
	Status  string `json:"status"`
	Account *struct {
		Address string `json:"address"`
	} `json:"account"`
	Amount     *amount `json:"amount"`
	CoinChange *struct {
		CoinIdentifier struct {
			Identifier string `json:"identifier"`
		} `json:"coin_identifier"`
		CoinAction string `json:"coin_action"`
	} `json:"coin_change"`
}

// Transaction is a tx with its operations as answered.
type Transaction struct {
	TransactionIdentifier struct {
		Hash string `json:"hash"`
	} `json:"transaction_identifier"`
	Operations []Operation `json:"operations"`
}

type amount struct {
	Value string `json:"value"`
}

type (
	blockAnswer struct {
		Block struct {
			BlockIdentifier       BlockID       `json:"block_identifier"`
			ParentBlockIdentifier BlockID       `json:"parent_block_identifier"`
			Transactions          []Transaction `json:"transactions"`
		} `json:"block"`
	}
	balanceAnswer struct {
		BlockIdentifier BlockID  `json:"block_identifier"`
		Balances        []amount `json:"balances"`
	}
)

// Coin is a coin the reconciliation holds: its account and value.
type Coin struct {
	Account string
	Value   int64
}

// Report is what a reconciliation saw.
type Report struct {
	Blocks, Txs, Operations, BalanceChecks int
	// Balances are every account's balance at the tip, from the
	// operations; Coins the unspent coins by identifier.
	Balances map[string]int64
	Coins    map[string]Coin
	// Mismatches describe each disagreement: a balance /account/balance
	// answers otherwise than the operations sum to, a coin spent that was
	// never created or by another account, a broken parent link.
	Mismatches []string
}

// chainLink checks that block h names height h and links to the block
// read before it, and moves prev on; it describes a mismatch.
func chainLink(h int64, id, parent BlockID, prev *BlockID) string {
	var m string
	if id.Index != h || (h > 0 && parent != *prev) {
		m = fmt.Sprintf("block %d: identifier %v, parent %v, previous block %v", h, id, parent, *prev)
	}
	*prev = id
	return m
}

// Reconcile does what rosetta-cli's check:data does: it walks every block
// from the genesis to the tip through /block, applies the operations to
// each account, and after each block compares every account the block
// changed with /account/balance at that block. Accounts in skip (the
// pseudo-accounts whose balance is not tracked) are not asked for.
func (c *Client) Reconcile(skip map[string]bool) (*Report, error) {
	var status struct {
		Current BlockID `json:"current_block_identifier"`
	}
	if err := c.Call("/network/status", nil, &status); err != nil {
		return nil, err
	}
	r := &Report{Balances: map[string]int64{}, Coins: map[string]Coin{}}
	var prev BlockID
	for h := int64(0); h <= status.Current.Index; h++ {
		var b blockAnswer
		if err := c.Call("/block", map[string]any{"block_identifier": map[string]any{"index": h}}, &b); err != nil {
			return nil, err
		}
		blk := b.Block
		if m := chainLink(h, blk.BlockIdentifier, blk.ParentBlockIdentifier, &prev); m != "" {
			r.Mismatches = append(r.Mismatches, m)
		}
		r.Blocks++
		changed := map[string]bool{}
		for _, tx := range blk.Transactions {
			r.Txs++
			for _, op := range tx.Operations {
				r.Operations++
				if err := r.apply(h, op, changed); err != nil {
					return nil, err
				}
			}
		}
		for acct := range changed {
			if skip[acct] {
				continue
			}
			if err := r.compare(c, acct, blk.BlockIdentifier); err != nil {
				return nil, err
			}
		}
	}
	return r, nil
}

// apply books one operation and keeps the coin set.
func (r *Report) apply(h int64, op Operation, changed map[string]bool) error {
	if op.Amount == nil {
		return nil // the coinbase's input
	}
	if op.Account == nil {
		r.Mismatches = append(r.Mismatches, fmt.Sprintf("block %d: operation with an amount and no account", h))
		return nil
	}
	v, ok := new(big.Int).SetString(op.Amount.Value, 10)
	if !ok || !v.IsInt64() {
		return fmt.Errorf("block %d: amount %q", h, op.Amount.Value)
	}
	acct, val := op.Account.Address, v.Int64()
	r.Balances[acct] += val
	changed[acct] = true
	if op.CoinChange == nil {
		r.Mismatches = append(r.Mismatches, fmt.Sprintf("block %d: UTXO operation without coin_change", h))
		return nil
	}
	id := op.CoinChange.CoinIdentifier.Identifier
	switch op.CoinChange.CoinAction {
	case "coin_created":
		if _, dup := r.Coins[id]; dup || val < 0 {
			r.Mismatches = append(r.Mismatches, fmt.Sprintf("block %d: coin %s created twice or negative", h, id))
		}
		r.Coins[id] = Coin{Account: acct, Value: val}
	case "coin_spent":
		c, ok := r.Coins[id]
		if !ok || c.Account != acct || c.Value != -val {
			r.Mismatches = append(r.Mismatches, fmt.Sprintf("block %d: coin %s spent by %s for %d, created as %+v (known %v)", h, id, acct, val, c, ok))
		}
		delete(r.Coins, id)
	}
	return nil
}

func (r *Report) compare(c *Client, acct string, at BlockID) error {
	var bal balanceAnswer
	err := c.Call("/account/balance", map[string]any{
		"account_identifier": map[string]any{"address": acct},
		"block_identifier":   map[string]any{"index": at.Index},
	}, &bal)
	if err != nil {
		return err
	}
	r.BalanceChecks++
	want := fmt.Sprint(r.Balances[acct])
	if bal.BlockIdentifier != at || len(bal.Balances) != 1 || bal.Balances[0].Value != want {
		r.Mismatches = append(r.Mismatches, fmt.Sprintf("%s at %v: /account/balance %+v, operations sum to %s", acct, at, bal, want))
	}
	return nil
}
