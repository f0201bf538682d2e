package mesh_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/btcsuite/btcd/address/v2"
	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/txscript/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/tools/meshcheck"
)

// testKey is a deterministic key of the tests (never funded elsewhere).
func testKey(seed string) *btcec.PrivateKey {
	h := sha256.Sum256([]byte(seed))
	k, _ := btcec.PrivKeyFromBytes(h[:])
	return k
}

var pubKeyJSON = meshcheck.PublicKey

// signPayload signs a payload as a Mesh signer does: ecdsa, r ‖ s.
func signPayload(t *testing.T, k *btcec.PrivateKey, payload map[string]any) map[string]any {
	t.Helper()
	sig, err := meshcheck.Sign(k, payload)
	if err != nil {
		t.Fatal(err)
	}
	return sig
}

type construction struct {
	UnsignedTransaction string           `json:"unsigned_transaction"`
	Payloads            []map[string]any `json:"payloads"`
}

// TestConstructionOffline builds, signs outside the server, combines,
// parses and hashes a payment from two P2WPKH coins, and checks the signed
// tx with btcd's script engine, the judge of validity.
func TestConstructionOffline(t *testing.T) {
	f := newFixture(t)
	keys := []*btcec.PrivateKey{testKey("mesh a"), testKey("mesh b")}
	var addrs []string
	for _, k := range keys {
		var d struct {
			AccountIdentifier struct {
				Address string `json:"address"`
			} `json:"account_identifier"`
		}
		if err := f.client.Call("/construction/derive", map[string]any{"public_key": pubKeyJSON(k)}, &d); err != nil {
			t.Fatal(err)
		}
		want, err := address.NewAddressWitnessPubKeyHash(address.Hash160(k.PubKey().SerializeCompressed()), f.Params)
		if err != nil {
			t.Fatal(err)
		}
		if d.AccountIdentifier.Address != want.EncodeAddress() {
			t.Fatalf("derive: %s, want %s", d.AccountIdentifier.Address, want.EncodeAddress())
		}
		addrs = append(addrs, d.AccountIdentifier.Address)
	}
	coins := []string{fmt.Sprintf("%s:%d", hex.EncodeToString(bytes.Repeat([]byte{0x11}, 32)), 3),
		fmt.Sprintf("%s:%d", hex.EncodeToString(bytes.Repeat([]byte{0x22}, 32)), 0)}
	amounts := []int64{70_000, 50_000}
	cur := map[string]any{"symbol": "BTC", "decimals": 8}
	op := func(i int, typ, acct string, v int64, coin string) map[string]any {
		return meshcheck.IntentOp(i, typ, acct, v, coin, cur)
	}
	payee := f.DemoAddress
	ops := []any{op(0, "INPUT", addrs[0], -amounts[0], coins[0]), op(1, "INPUT", addrs[1], -amounts[1], coins[1]),
		op(2, "OUTPUT", payee, 100_000, ""), op(3, "OUTPUT", addrs[0], 19_000, "")}

	var pre struct {
		Options map[string]any `json:"options"`
	}
	if err := f.client.Call("/construction/preprocess", map[string]any{"operations": ops}, &pre); err != nil {
		t.Fatal(err)
	}
	var meta struct {
		SuggestedFee []struct {
			Value string `json:"value"`
		} `json:"suggested_fee"`
	}
	if err := f.client.Call("/construction/metadata", map[string]any{"options": pre.Options}, &meta); err != nil {
		t.Fatal(err)
	}
	if len(meta.SuggestedFee) != 1 || meta.SuggestedFee[0].Value == "0" {
		t.Errorf("suggested fee %v", meta.SuggestedFee)
	}
	var c construction
	if err := f.client.Call("/construction/payloads", map[string]any{"operations": ops}, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Payloads) != 2 {
		t.Fatalf("%d payloads", len(c.Payloads))
	}
	parsed := func(tx string, signed bool) []any {
		var p struct {
			Operations []map[string]any `json:"operations"`
			Signers    []map[string]any `json:"account_identifier_signers"`
		}
		if err := f.client.Call("/construction/parse", map[string]any{"signed": signed, "transaction": tx}, &p); err != nil {
			t.Fatal(err)
		}
		if signed != (len(p.Signers) == 2) {
			t.Errorf("signed %v: signers %v", signed, p.Signers)
		}
		out := make([]any, len(p.Operations))
		for i, o := range p.Operations {
			out[i] = o
		}
		return out
	}
	// Parse gives back the intent (compared as JSON).
	same := func(a, b []any) bool {
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		var x, y any
		_ = json.Unmarshal(ja, &x)
		_ = json.Unmarshal(jb, &y)
		return reflect.DeepEqual(x, y)
	}
	if got := parsed(c.UnsignedTransaction, false); !same(got, ops) {
		t.Errorf("parse of the unsigned tx: %v\nwant %v", got, ops)
	}
	// Signatures given in another order than the payloads.
	sigs := []any{signPayload(t, keys[1], c.Payloads[1]), signPayload(t, keys[0], c.Payloads[0])}
	var comb struct {
		SignedTransaction string `json:"signed_transaction"`
	}
	if err := f.client.Call("/construction/combine", map[string]any{"unsigned_transaction": c.UnsignedTransaction, "signatures": sigs}, &comb); err != nil {
		t.Fatal(err)
	}
	if got := parsed(comb.SignedTransaction, true); !same(got, ops) {
		t.Errorf("parse of the signed tx: %v", got)
	}
	tx, err := meshcheck.Tx(comb.SignedTransaction)
	if err != nil {
		t.Fatal(err)
	}
	verifyInputs(t, tx, addrs, amounts, f.Params)
	var hash struct {
		TransactionIdentifier struct {
			Hash string `json:"hash"`
		} `json:"transaction_identifier"`
	}
	if err := f.client.Call("/construction/hash", map[string]any{"signed_transaction": comb.SignedTransaction}, &hash); err != nil {
		t.Fatal(err)
	}
	if hash.TransactionIdentifier.Hash != tx.TxHash().String() {
		t.Errorf("hash %s, want %s", hash.TransactionIdentifier.Hash, tx.TxHash())
	}

	// Bad construction input.
	p2pkh, err := address.NewAddressPubKeyHash(address.Hash160(keys[0].PubKey().SerializeCompressed()), f.Params)
	if err != nil {
		t.Fatal(err)
	}
	wrongKey := []any{signPayload(t, keys[0], c.Payloads[1]), signPayload(t, keys[0], c.Payloads[0])}
	tampered := signPayload(t, keys[0], c.Payloads[0])
	b, _ := hex.DecodeString(tampered["hex_bytes"].(string))
	b[10] ^= 1
	tampered["hex_bytes"] = hex.EncodeToString(b)
	for name, q := range map[string]struct {
		path string
		body map[string]any
		code int
	}{
		"wrong curve":      {"/construction/derive", map[string]any{"public_key": map[string]any{"hex_bytes": "02", "curve_type": "edwards25519"}}, 14},
		"bad key":          {"/construction/derive", map[string]any{"public_key": map[string]any{"hex_bytes": "02" + hex.EncodeToString(make([]byte, 32)), "curve_type": "secp256k1"}}, 14},
		"overspend":        {"/construction/payloads", map[string]any{"operations": []any{op(0, "INPUT", addrs[0], -1000, coins[0]), op(1, "OUTPUT", payee, 1001, "")}}, 13},
		"a P2PKH input":    {"/construction/payloads", map[string]any{"operations": []any{op(0, "INPUT", p2pkh.EncodeAddress(), -1000, coins[0]), op(1, "OUTPUT", payee, 900, "")}}, 13},
		"no coin":          {"/construction/preprocess", map[string]any{"operations": []any{op(0, "INPUT", addrs[0], -1000, ""), op(1, "OUTPUT", payee, 900, "")}}, 13},
		"bad coin":         {"/construction/preprocess", map[string]any{"operations": []any{op(0, "INPUT", addrs[0], -1000, "x:1"), op(1, "OUTPUT", payee, 900, "")}}, 13},
		"wrong signer":     {"/construction/combine", map[string]any{"unsigned_transaction": c.UnsignedTransaction, "signatures": wrongKey}, 15},
		"tampered":         {"/construction/combine", map[string]any{"unsigned_transaction": c.UnsignedTransaction, "signatures": []any{tampered, sigs[0]}}, 15},
		"missing":          {"/construction/combine", map[string]any{"unsigned_transaction": c.UnsignedTransaction, "signatures": []any{sigs[0]}}, 15},
		"signed twice":     {"/construction/combine", map[string]any{"unsigned_transaction": comb.SignedTransaction, "signatures": sigs}, 16},
		"not a blob":       {"/construction/parse", map[string]any{"signed": false, "transaction": "0100"}, 16},
		"signed flag":      {"/construction/parse", map[string]any{"signed": true, "transaction": c.UnsignedTransaction}, 16},
		"hash of unsigned": {"/construction/hash", map[string]any{"signed_transaction": c.UnsignedTransaction}, 16},
		"no vsize":         {"/construction/metadata", map[string]any{"options": map[string]any{}}, 2},
	} {
		err := f.client.Call(q.path, q.body, nil)
		var ae *meshcheck.AnswerError
		if !errors.As(err, &ae) || ae.Code != q.code {
			t.Errorf("%s: %v, want Mesh error %d", name, err, q.code)
		}
	}
}

// verifyInputs runs btcd's script engine on every input of tx, each
// spending amounts[i] paid to addrs[i].
func verifyInputs(t *testing.T, tx *wire.MsgTx, addrs []string, amounts []int64, params *chaincfg.Params) {
	t.Helper()
	prevs := map[wire.OutPoint]*wire.TxOut{}
	for i, in := range tx.TxIn {
		a, err := address.DecodeAddress(addrs[i], params)
		if err != nil {
			t.Fatal(err)
		}
		script, _ := txscript.PayToAddrScript(a)
		prevs[in.PreviousOutPoint] = wire.NewTxOut(amounts[i], script)
	}
	fetcher := txscript.NewMultiPrevOutFetcher(prevs)
	hashes := txscript.NewTxSigHashes(tx, fetcher)
	for i, in := range tx.TxIn {
		prev := prevs[in.PreviousOutPoint]
		vm, err := txscript.NewEngine(prev.PkScript, tx, i, txscript.StandardVerifyFlags, nil, hashes, prev.Value, fetcher)
		if err != nil {
			t.Fatal(err)
		}
		if err := vm.Execute(); err != nil {
			t.Errorf("input %d does not verify: %v", i, err)
		}
	}
}
