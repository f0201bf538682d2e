package mesh_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/btcsuite/btcd/address/v2"
	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/btcsuite/btcd/txscript/v2"

	"github.com/openexplorer/blockbook/tools/meshcheck"
)

// meshAddr is /construction/derive of a public key object with metadata.
func meshAddr(t *testing.T, c *meshcheck.Client, pk map[string]any, meta map[string]any) string {
	t.Helper()
	var d struct {
		AccountIdentifier struct {
			Address string `json:"address"`
		} `json:"account_identifier"`
	}
	body := map[string]any{"public_key": pk}
	if meta != nil {
		body["metadata"] = meta
	}
	if err := c.Call("/construction/derive", body, &d); err != nil {
		t.Fatal(err)
	}
	return d.AccountIdentifier.Address
}

// TestConstructionTaproot derives BIP86 taproot addresses, builds a
// payment spending a P2TR and a P2WPKH coin, signs it outside the server
// (schnorr and ecdsa), combines it, and runs btcd's script engine on
// every input; then refuses bad taproot keys and signatures.
func TestConstructionTaproot(t *testing.T) {
	f := newFixture(t)
	tk, wk := testKey("mesh taproot"), testKey("mesh segwit")
	wantScript, err := txscript.PayToTaprootScript(txscript.ComputeTaprootKeyNoScript(tk.PubKey()))
	if err != nil {
		t.Fatal(err)
	}
	wantAddr, err := address.NewAddressTaproot(wantScript[2:], f.Params)
	if err != nil {
		t.Fatal(err)
	}
	p2trMeta := map[string]any{"address_type": "p2tr"}
	xonly := map[string]any{"hex_bytes": hex.EncodeToString(schnorr.SerializePubKey(tk.PubKey())), "curve_type": "secp256k1_bip340"}
	trAddr := meshAddr(t, f.client, pubKeyJSON(tk), p2trMeta)
	for name, got := range map[string]string{"33-byte key": trAddr, "x-only key": meshAddr(t, f.client, xonly, nil),
		"x-only key, p2tr named": meshAddr(t, f.client, xonly, p2trMeta)} {
		if got != wantAddr.EncodeAddress() {
			t.Errorf("derive of the %s: %s, want %s", name, got, wantAddr.EncodeAddress())
		}
	}
	wAddr := meshAddr(t, f.client, pubKeyJSON(wk), map[string]any{"address_type": "p2wpkh"})
	if wAddr != meshAddr(t, f.client, pubKeyJSON(wk), nil) {
		t.Errorf("p2wpkh named: %s", wAddr)
	}

	cur := map[string]any{"symbol": "BTC", "decimals": 8}
	coins := []string{hex.EncodeToString(bytes.Repeat([]byte{0x33}, 32)) + ":1", hex.EncodeToString(bytes.Repeat([]byte{0x44}, 32)) + ":0"}
	accts, amounts, keys := []string{trAddr, wAddr}, []int64{80_000, 30_000}, []*btcec.PrivateKey{tk, wk}
	ops := []any{meshcheck.IntentOp(0, "INPUT", trAddr, -amounts[0], coins[0], cur), meshcheck.IntentOp(1, "INPUT", wAddr, -amounts[1], coins[1], cur),
		meshcheck.IntentOp(2, "OUTPUT", f.DemoAddress, 100_000, "", cur), meshcheck.IntentOp(3, "OUTPUT", trAddr, 9_000, "", cur)}
	var pre struct {
		Options struct {
			EstimatedVsize int64 `json:"estimated_vsize"`
		} `json:"options"`
	}
	if err := f.client.Call("/construction/preprocess", map[string]any{"operations": ops}, &pre); err != nil {
		t.Fatal(err)
	}
	var c construction
	if err := f.client.Call("/construction/payloads", map[string]any{"operations": ops}, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Payloads) != 2 || c.Payloads[0]["signature_type"] != "schnorr_bip340" || c.Payloads[1]["signature_type"] != "ecdsa" {
		t.Fatalf("payloads %v", c.Payloads)
	}
	sigs := []any{signPayload(t, keys[1], c.Payloads[1]), signPayload(t, keys[0], c.Payloads[0])}
	var comb struct {
		SignedTransaction string `json:"signed_transaction"`
	}
	if err := f.client.Call("/construction/combine", map[string]any{"unsigned_transaction": c.UnsignedTransaction, "signatures": sigs}, &comb); err != nil {
		t.Fatal(err)
	}
	var p struct {
		Operations []map[string]any `json:"operations"`
		Signers    []map[string]any `json:"account_identifier_signers"`
	}
	if err := f.client.Call("/construction/parse", map[string]any{"signed": true, "transaction": comb.SignedTransaction}, &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Operations) != 4 || len(p.Signers) != 2 || p.Signers[0]["address"] != trAddr {
		t.Errorf("parse: %v signers %v", p.Operations, p.Signers)
	}
	tx, err := meshcheck.Tx(comb.SignedTransaction)
	if err != nil {
		t.Fatal(err)
	}
	if w := tx.TxIn[0].Witness; len(w) != 1 || len(w[0]) != 64 {
		t.Errorf("taproot witness %x, want one 64-byte signature", w)
	}
	verifyInputs(t, tx, accts, amounts, f.Params)
	// The vsize estimate covers the signed tx (and is at most a few bytes over).
	if vsize := int64(tx.SerializeSizeStripped()*3+tx.SerializeSize()+3) / 4; pre.Options.EstimatedVsize < vsize || pre.Options.EstimatedVsize > vsize+4 {
		t.Errorf("estimated vsize %d, the signed tx has %d", pre.Options.EstimatedVsize, vsize)
	}

	// The key-path signature must be by the tweaked key, of this payload.
	h, _ := hex.DecodeString(c.Payloads[0]["hex_bytes"].(string))
	untweaked, err := schnorr.Sign(tk, h)
	if err != nil {
		t.Fatal(err)
	}
	withSig := func(hexSig, typ string, pk map[string]any) []any {
		return []any{sigs[0], map[string]any{"signing_payload": c.Payloads[0], "public_key": pk, "signature_type": typ, "hex_bytes": hexSig}}
	}
	good := sigs[1].(map[string]any)["hex_bytes"].(string)
	for name, q := range map[string]struct {
		path string
		body map[string]any
		code int
	}{
		"untweaked key signed":  {"/construction/combine", map[string]any{"unsigned_transaction": c.UnsignedTransaction, "signatures": withSig(hex.EncodeToString(untweaked.Serialize()), "schnorr_bip340", pubKeyJSON(tk))}, 15},
		"ecdsa type":            {"/construction/combine", map[string]any{"unsigned_transaction": c.UnsignedTransaction, "signatures": withSig(good, "ecdsa", pubKeyJSON(tk))}, 15},
		"another key":           {"/construction/combine", map[string]any{"unsigned_transaction": c.UnsignedTransaction, "signatures": withSig(good, "schnorr_bip340", pubKeyJSON(wk))}, 15},
		"short signature":       {"/construction/combine", map[string]any{"unsigned_transaction": c.UnsignedTransaction, "signatures": withSig(good[:126], "schnorr_bip340", pubKeyJSON(tk))}, 15},
		"x-only key, secp256k1": {"/construction/derive", map[string]any{"public_key": map[string]any{"hex_bytes": xonly["hex_bytes"], "curve_type": "secp256k1"}, "metadata": p2trMeta}, 14},
		"x-only key, p2wpkh":    {"/construction/derive", map[string]any{"public_key": xonly, "metadata": map[string]any{"address_type": "p2wpkh"}}, 14},
		"unknown address type":  {"/construction/derive", map[string]any{"public_key": pubKeyJSON(tk), "metadata": map[string]any{"address_type": "p2sh"}}, 2},
		"a coin spent twice":    {"/construction/preprocess", map[string]any{"operations": []any{meshcheck.IntentOp(0, "INPUT", trAddr, -1000, coins[0], cur), meshcheck.IntentOp(1, "INPUT", trAddr, -1000, coins[0], cur), meshcheck.IntentOp(2, "OUTPUT", wAddr, 900, "", cur)}}, 13},
	} {
		err := f.client.Call(q.path, q.body, nil)
		var ae *meshcheck.AnswerError
		if !errors.As(err, &ae) || ae.Code != q.code {
			t.Errorf("%s: %v, want Mesh error %d", name, err, q.code)
		}
	}
}
