package apitest

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/tools/chaingen"
)

// Chain is the fixture's chain: a short demo chain (every script kind,
// OP_RETURNs, a 260-output and a 120-input tx, in-block spends) followed by
// chaingen's HD scenario for one account of each type, plus pending txs.
// It is built once per test binary and shared; tests must not change it
// and must not use its generator concurrently.
type Chain struct {
	Gen    *chaingen.Generator
	Params *chaincfg.Params
	// Ledger is the oracle of every confirmed answer.
	Ledger *chaingen.Ledger
	// Raw holds the serialized blocks by height (0 is genesis).
	Raw [][]byte
	// Accounts are BIP44, BIP49, BIP84 and BIP86 accounts; AccountLedgers
	// their ledgers at the default gap limit, 20.
	Accounts       []*chaingen.HDAccount
	AccountLedgers []*chaingen.AccountLedger

	// Pending are the unmined txs the node's mempool holds, in its order:
	// one per account (a payment to even accounts, a spend of a confirmed
	// output from odd ones), then PendingPayment and PendingChild.
	Pending []*wire.MsgTx
	// PendingPayment pays DemoAddress, spending confirmed wallet outputs;
	// PendingChild spends its change and pays UnusedAddress.
	PendingPayment, PendingChild *wire.MsgTx

	// DemoAddress (P2TR of chaingen.DemoIndex) received and spent in the
	// demo; UnusedAddress is valid but on no confirmed tx.
	DemoAddress, UnusedAddress string
	// PendingPaymentValue is what PendingPayment pays DemoAddress.
	PendingPaymentValue int64

	oracle *oracle
}

// DefaultDemo is the demo part of the chain: the scripted steps need
// coinbases to mature first (regtest: 100 blocks), so this is about the
// shortest demo there is.
var DefaultDemo = chaingen.DemoSpec{Blocks: 113, TxsPerBlock: 2}

var (
	chainOnce sync.Once
	chain     *Chain
	chainErr  error
)

// SharedChain returns the chain, building it on first use.
func SharedChain() (*Chain, error) {
	chainOnce.Do(func() { chain, chainErr = buildChain() })
	return chain, chainErr
}

func buildChain() (*Chain, error) {
	params := &chaincfg.RegressionNetParams
	g := chaingen.New(params, "apitest")
	if err := g.Demo(DefaultDemo); err != nil {
		return nil, fmt.Errorf("apitest: demo chain: %w", err)
	}
	c := &Chain{Gen: g, Params: params}
	for _, p := range []uint32{chaingen.BIP44, chaingen.BIP49, chaingen.BIP84, chaingen.BIP86} {
		a, err := chaingen.NewHDAccount(params, chaingen.HDSeed("apitest"), p, 0)
		if err != nil {
			return nil, err
		}
		c.Accounts = append(c.Accounts, a)
	}
	hdPending, err := g.HDScenario(c.Accounts)
	if err != nil {
		return nil, fmt.Errorf("apitest: HD scenario: %w", err)
	}
	if err := c.addPending(hdPending); err != nil {
		return nil, fmt.Errorf("apitest: pending txs: %w", err)
	}
	c.Ledger = g.Ledger()
	if c.Ledger.Addresses[c.UnusedAddress] != nil {
		return nil, fmt.Errorf("apitest: the unused address %s has confirmed txs", c.UnusedAddress)
	}
	for _, a := range c.Accounts {
		l, err := g.AccountLedger(a, 20)
		if err != nil {
			return nil, fmt.Errorf("apitest: ledger of account %d': %w", a.Purpose, err)
		}
		c.AccountLedgers = append(c.AccountLedgers, l)
	}
	c.replay()
	for _, b := range g.Blocks() {
		var buf bytes.Buffer
		if err := b.Serialize(&buf); err != nil {
			return nil, err
		}
		c.Raw = append(c.Raw, buf.Bytes())
	}
	return c, nil
}

// addPending creates the pending txs besides the HD scenario's: a payment
// to DemoAddress and a child spending its change to UnusedAddress.
func (c *Chain) addPending(hd []*wire.MsgTx) error {
	g := c.Gen
	var err error
	if c.DemoAddress, err = g.Address(chaingen.P2TR, chaingen.DemoIndex); err != nil {
		return err
	}
	// Index 999 is neither a hot nor a cold index of chaingen's wallet.
	if c.UnusedAddress, err = g.Address(chaingen.P2WPKH, 999); err != nil {
		return err
	}
	c.PendingPaymentValue = 12_345_678
	pay, err := g.CreatePayment([]chaingen.Output{{Address: c.DemoAddress, Value: c.PendingPaymentValue}}, 3)
	if err != nil {
		return err
	}
	var change []chaingen.Coin
	for _, coin := range g.Coins(pay) {
		if coin.Value != c.PendingPaymentValue {
			change = append(change, coin)
		}
	}
	if len(change) != 1 {
		return fmt.Errorf("apitest: the pending payment has %d change outputs", len(change))
	}
	child, err := g.Spend(change, []chaingen.Output{{Address: c.UnusedAddress, Value: change[0].Value / 2}}, 2)
	if err != nil {
		return err
	}
	c.PendingPayment, c.PendingChild = pay, child
	c.Pending = append(append(c.Pending, hd...), pay, child)
	return nil
}

// AccountLedger computes an account's ledger at another gap limit.
func (c *Chain) AccountLedger(i, gap int) (*chaingen.AccountLedger, error) {
	return c.Gen.AccountLedger(c.Accounts[i], gap)
}

// PendingFor describes the pending txs as an address sees them: the txids
// touching it, in Pending's order, and what they add to its balance. It is
// computed from the txs and chaingen's view of their prevouts.
func (c *Chain) PendingFor(address string) (txids []string, delta int64, err error) {
	for _, tx := range c.Pending {
		prevs, err := c.Gen.Prevouts(tx, c.Pending...)
		if err != nil {
			return nil, 0, err
		}
		touched := false
		for _, p := range prevs {
			if chaingen.ExplorerAddress(p.PkScript, c.Params) == address {
				delta -= p.Value
				touched = true
			}
		}
		for _, o := range tx.TxOut {
			if chaingen.ExplorerAddress(o.PkScript, c.Params) == address {
				delta += o.Value
				touched = true
			}
		}
		if touched {
			txids = append(txids, tx.TxHash().String())
		}
	}
	return txids, delta, nil
}

// Block returns the block at height.
func (c *Chain) Block(height int) *wire.MsgBlock { return c.Gen.Blocks()[height] }

// TipHeight is the height of the last block.
func (c *Chain) TipHeight() int { return len(c.Raw) - 1 }

// BlockHash returns the hash of the block at height, as answers show it.
func (c *Chain) BlockHash(height int) string {
	h := c.Block(height).BlockHash()
	return h.String()
}

func chainhashFromString(s string) (chainhash.Hash, error) {
	h, err := chainhash.NewHashFromStr(s)
	if err != nil {
		return chainhash.Hash{}, err
	}
	return *h, nil
}
