package e2e

import (
	"crypto/sha256"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/meshcheck"
)

// meshConstruction is the Construction API end to end on regtest: a test
// key's P2WPKH address is funded and mined, its coin is found through
// /account/coins, a payment is built (fee from /construction/metadata),
// signed outside the server, combined and submitted; the node takes it
// (the mempool shows it), a block mines it, and the Data API shows it in
// /block and in both accounts' balances.
func meshConstruction(t *testing.T, st *demoStack, c *meshcheck.Client) {
	seed := sha256.Sum256([]byte("e2e mesh construction"))
	key, _ := btcec.PrivKeyFromBytes(seed[:])
	addr := meshDerive(t, c, key)
	const funding = 5_000_000
	fund, err := st.g.CreatePayment([]chaingen.Output{{Address: addr, Value: funding}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	meshMine(t, st, fund)

	var coins struct {
		Coins []struct {
			CoinIdentifier struct {
				Identifier string `json:"identifier"`
			} `json:"coin_identifier"`
			Amount struct {
				Value string `json:"value"`
			} `json:"amount"`
		} `json:"coins"`
	}
	acct := map[string]any{"address": addr}
	if err := c.Call("/account/coins", map[string]any{"account_identifier": acct, "include_mempool": false}, &coins); err != nil {
		t.Fatal(err)
	}
	if len(coins.Coins) != 1 || coins.Coins[0].Amount.Value != strconv.Itoa(funding) {
		t.Fatalf("coins of the funded key: %+v", coins.Coins)
	}
	payee, err := st.g.Address(chaingen.P2PKH, 7)
	if err != nil {
		t.Fatal(err)
	}
	cur := map[string]any{"symbol": "rBTC", "decimals": 8}
	op := func(i int, typ, acct string, v int64, coin string) map[string]any {
		return meshcheck.IntentOp(i, typ, acct, v, coin, cur)
	}
	const paid = 1_234_567
	coin := coins.Coins[0].CoinIdentifier.Identifier
	draft := []any{op(0, "INPUT", addr, -funding, coin), op(1, "OUTPUT", payee, paid, ""), op(2, "OUTPUT", addr, 0, "")}
	var pre struct {
		Options map[string]any `json:"options"`
	}
	if err := c.Call("/construction/preprocess", map[string]any{"operations": draft}, &pre); err != nil {
		t.Fatal(err)
	}
	var meta struct {
		SuggestedFee []struct {
			Value string `json:"value"`
		} `json:"suggested_fee"`
	}
	if err := c.Call("/construction/metadata", map[string]any{"options": pre.Options}, &meta); err != nil {
		t.Fatal(err)
	}
	fee, err := strconv.ParseInt(meta.SuggestedFee[0].Value, 10, 64)
	if err != nil || fee <= 0 {
		t.Fatalf("suggested fee %v", meta.SuggestedFee)
	}
	change := funding - paid - fee
	ops := []any{op(0, "INPUT", addr, -funding, coin), op(1, "OUTPUT", payee, paid, ""), op(2, "OUTPUT", addr, change, "")}
	var pl struct {
		UnsignedTransaction string           `json:"unsigned_transaction"`
		Payloads            []map[string]any `json:"payloads"`
	}
	if err := c.Call("/construction/payloads", map[string]any{"operations": ops}, &pl); err != nil {
		t.Fatal(err)
	}
	sig, err := meshcheck.Sign(key, pl.Payloads[0])
	if err != nil {
		t.Fatal(err)
	}
	var comb struct {
		SignedTransaction string `json:"signed_transaction"`
	}
	if err := c.Call("/construction/combine", map[string]any{"unsigned_transaction": pl.UnsignedTransaction, "signatures": []any{sig}}, &comb); err != nil {
		t.Fatal(err)
	}
	var hashed, submitted struct {
		TransactionIdentifier struct {
			Hash string `json:"hash"`
		} `json:"transaction_identifier"`
	}
	if err := c.Call("/construction/hash", map[string]any{"signed_transaction": comb.SignedTransaction}, &hashed); err != nil {
		t.Fatal(err)
	}
	if err := c.Call("/construction/submit", map[string]any{"signed_transaction": comb.SignedTransaction}, &submitted); err != nil {
		t.Fatal(err)
	}
	txid := submitted.TransactionIdentifier.Hash
	if txid != hashed.TransactionIdentifier.Hash {
		t.Fatalf("submit answered %s, hash %s", txid, hashed.TransactionIdentifier.Hash)
	}
	// The mempool follows the node: the tx shows in /mempool.
	deadline := time.Now().Add(waitFor)
	for {
		var mp struct {
			TransactionIdentifiers []struct {
				Hash string `json:"hash"`
			} `json:"transaction_identifiers"`
		}
		if err := c.Call("/mempool", nil, &mp); err != nil {
			t.Fatal(err)
		}
		var pending []string
		for _, id := range mp.TransactionIdentifiers {
			pending = append(pending, id.Hash)
		}
		if slices.Contains(pending, txid) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("tx %s never showed in /mempool", txid)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Mined: the block's operations and both balances.
	tx, err := meshcheck.Tx(comb.SignedTransaction)
	if err != nil {
		t.Fatal(err)
	}
	h := meshMine(t, st, tx)
	var blk struct {
		Block struct {
			Transactions []struct {
				TransactionIdentifier struct {
					Hash string `json:"hash"`
				} `json:"transaction_identifier"`
			} `json:"transactions"`
		} `json:"block"`
	}
	if err := c.Call("/block", map[string]any{"block_identifier": map[string]any{"index": h}}, &blk); err != nil {
		t.Fatal(err)
	}
	if n := len(blk.Block.Transactions); n != 2 || blk.Block.Transactions[1].TransactionIdentifier.Hash != txid {
		t.Fatalf("block %d: %+v, want the coinbase and %s", h, blk.Block.Transactions, txid)
	}
	t.Logf("construction: %s pays %d from %s (fee %d), mined at %d", txid, paid, addr, fee, h)
	// chaingen's ledger (replayed from the raw blocks) is the oracle.
	led := st.g.Ledger()
	if led.Addresses[addr].Balance != change {
		t.Errorf("the ledger has %d at %s, the intent's change is %d", led.Addresses[addr].Balance, addr, change)
	}
	for _, a := range []string{addr, payee} {
		want := led.Addresses[a].Balance
		var bal struct {
			Balances []struct {
				Value string `json:"value"`
			} `json:"balances"`
		}
		if err := c.Call("/account/balance", map[string]any{"account_identifier": map[string]any{"address": a}}, &bal); err != nil {
			t.Fatal(err)
		}
		if bal.Balances[0].Value != strconv.FormatInt(want, 10) {
			t.Errorf("%s: balance %s, want %d", a, bal.Balances[0].Value, want)
		}
	}
}

// meshMine mines a block holding txs on the node and waits for the index.
func meshMine(t *testing.T, st *demoStack, txs ...*wire.MsgTx) int32 {
	t.Helper()
	if _, err := st.g.AddBlock(txs...); err != nil {
		t.Fatal(err)
	}
	submit(t, st.g, st.node, st.g.Height())
	h, hash := st.g.Tip()
	waitTip(t, st.inst.base, h, hash.String(), st.inst.logs)
	return h
}

// meshDerive is /construction/derive of k's key: its P2WPKH address.
func meshDerive(t *testing.T, c *meshcheck.Client, k *btcec.PrivateKey) string {
	t.Helper()
	var derived struct {
		AccountIdentifier struct {
			Address string `json:"address"`
		} `json:"account_identifier"`
	}
	if err := c.Call("/construction/derive", map[string]any{"public_key": meshcheck.PublicKey(k)}, &derived); err != nil {
		t.Fatal(err)
	}
	return derived.AccountIdentifier.Address
}
