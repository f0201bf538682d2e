package e2e

import (
	"crypto/sha256"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/meshcheck"
)

// meshConstruction is the Construction API end to end on regtest: a test
// key's P2WPKH address and another's BIP86 P2TR address are funded and
// mined, their coins are found through /account/coins, and two payments
// are built (fee from /construction/metadata), signed outside the server,
// combined and submitted: one from the P2WPKH coin, then one spending the
// P2TR coin by its key path together with the first's P2WPKH change
// (mixed inputs: the BIP341 sighash covers both inputs' amounts and
// scripts). The node takes each (the mempool shows it), a block mines
// it, and the Data API shows it in /block and in the accounts' balances.
func meshConstruction(t *testing.T, st *demoStack, c *meshcheck.Client) {
	seed := sha256.Sum256([]byte("e2e mesh construction"))
	key, _ := btcec.PrivKeyFromBytes(seed[:])
	addr := meshDerive(t, c, key, nil)
	trSeed := sha256.Sum256([]byte("e2e mesh taproot"))
	trKey, _ := btcec.PrivKeyFromBytes(trSeed[:])
	trAddr := meshDerive(t, c, trKey, map[string]any{"address_type": "p2tr"})
	if !strings.HasPrefix(trAddr, "bcrt1p") {
		t.Fatalf("taproot derive: %s", trAddr)
	}
	const funding, trFunding = 5_000_000, 3_000_000
	fund, err := st.g.CreatePayment([]chaingen.Output{{Address: addr, Value: funding}, {Address: trAddr, Value: trFunding}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	meshMine(t, st, fund)
	payee, err := st.g.Address(chaingen.P2PKH, 7)
	if err != nil {
		t.Fatal(err)
	}
	trCoin := meshOnlyCoin(t, c, trAddr, trFunding)
	change := meshPay(t, st, c, []meshCoin{{addr, meshOnlyCoin(t, c, addr, funding), funding, key}}, payee, 1_234_567, addr)
	meshPay(t, st, c, []meshCoin{{trAddr, trCoin, trFunding, trKey}, {addr, meshOnlyCoin(t, c, addr, change), change, key}}, payee, 2_000_000, trAddr)
}

// meshCoin is a coin a test key spends through the Construction API.
type meshCoin struct {
	addr, id string
	value    int64
	key      *btcec.PrivateKey
}

// meshOnlyCoin is the one coin /account/coins shows at addr, of value v.
func meshOnlyCoin(t *testing.T, c *meshcheck.Client, addr string, v int64) string {
	t.Helper()
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
	if len(coins.Coins) != 1 || coins.Coins[0].Amount.Value != strconv.FormatInt(v, 10) {
		t.Fatalf("coins of %s: %+v, want one of %d", addr, coins.Coins, v)
	}
	return coins.Coins[0].CoinIdentifier.Identifier
}

// meshPay pays paid to payee from the coins, the change (all but the fee
// /construction/metadata suggests) to changeAddr, through the whole
// Construction flow, mines it and checks the Data API; it returns the
// change.
func meshPay(t *testing.T, st *demoStack, c *meshcheck.Client, ins []meshCoin, payee string, paid int64, changeAddr string) int64 {
	t.Helper()
	cur := map[string]any{"symbol": "rBTC", "decimals": 8}
	intent := func(change int64) []any {
		var ops []any
		for _, in := range ins {
			ops = append(ops, meshcheck.IntentOp(len(ops), "INPUT", in.addr, -in.value, in.id, cur))
		}
		return append(ops, meshcheck.IntentOp(len(ops), "OUTPUT", payee, paid, "", cur), meshcheck.IntentOp(len(ops)+1, "OUTPUT", changeAddr, change, "", cur))
	}
	var pre struct {
		Options map[string]any `json:"options"`
	}
	if err := c.Call("/construction/preprocess", map[string]any{"operations": intent(0)}, &pre); err != nil {
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
	change := -paid - fee
	for _, in := range ins {
		change += in.value
	}
	var pl struct {
		UnsignedTransaction string           `json:"unsigned_transaction"`
		Payloads            []map[string]any `json:"payloads"`
	}
	if err := c.Call("/construction/payloads", map[string]any{"operations": intent(change)}, &pl); err != nil {
		t.Fatal(err)
	}
	if len(pl.Payloads) != len(ins) {
		t.Fatalf("%d payloads for %d inputs", len(pl.Payloads), len(ins))
	}
	var sigs []any
	for i, p := range pl.Payloads {
		sig, err := meshcheck.Sign(ins[i].key, p)
		if err != nil {
			t.Fatal(err)
		}
		sigs = append(sigs, sig)
	}
	var comb struct {
		SignedTransaction string `json:"signed_transaction"`
	}
	if err := c.Call("/construction/combine", map[string]any{"unsigned_transaction": pl.UnsignedTransaction, "signatures": sigs}, &comb); err != nil {
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
	// Mined: the block's operations and the balances.
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
	t.Logf("construction: %s pays %d from %d coins (fee %d), mined at %d", txid, paid, len(ins), fee, h)
	// chaingen's ledger (replayed from the raw blocks) is the oracle.
	led := st.g.Ledger()
	if led.Addresses[changeAddr].Balance != change {
		t.Errorf("the ledger has %d at %s, the intent's change is %d", led.Addresses[changeAddr].Balance, changeAddr, change)
	}
	for _, a := range []string{ins[0].addr, ins[len(ins)-1].addr, payee, changeAddr} {
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
	return change
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

// meshDerive is /construction/derive of k's key: its P2WPKH address, or
// the address metadata asks for.
func meshDerive(t *testing.T, c *meshcheck.Client, k *btcec.PrivateKey, metadata map[string]any) string {
	t.Helper()
	var derived struct {
		AccountIdentifier struct {
			Address string `json:"address"`
		} `json:"account_identifier"`
	}
	req := map[string]any{"public_key": meshcheck.PublicKey(k)}
	if metadata != nil {
		req["metadata"] = metadata
	}
	if err := c.Call("/construction/derive", req, &derived); err != nil {
		t.Fatal(err)
	}
	return derived.AccountIdentifier.Address
}
