package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/btcsuite/btcd/address/v2"
	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/txscript/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/tools/chaingen"
)

// addP2SHMultisig appends a block to g (not yet submitted) with a payment
// to a P2SH 2-of-3 multisig and a tx spending it (the generator's wallet
// has no such script kind), and returns the hashes of the multisig's keys,
// which only the spend's redeem script carries.
func addP2SHMultisig(t *testing.T, g *chaingen.Generator) []string {
	t.Helper()
	params := &chaincfg.RegressionNetParams
	var keys []*btcec.PrivateKey
	var pubs []*address.AddressPubKey
	var hashes []string
	for i := range 3 {
		seed := sha256.Sum256(fmt.Appendf(nil, "pushdata p2sh multisig key %d", i))
		k, _ := btcec.PrivKeyFromBytes(seed[:])
		pub, err := address.NewAddressPubKey(k.PubKey().SerializeCompressed(), params)
		if err != nil {
			t.Fatal(err)
		}
		keys, pubs = append(keys, k), append(pubs, pub)
		sum := sha256.Sum256(k.PubKey().SerializeCompressed())
		hashes = append(hashes, hex.EncodeToString(sum[:]))
	}
	redeem, err := txscript.MultiSigScript(pubs, 2)
	if err != nil {
		t.Fatal(err)
	}
	sh, err := address.NewAddressScriptHash(redeem, params)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := txscript.PayToAddrScript(sh)
	if err != nil {
		t.Fatal(err)
	}
	const value = 400_000
	fund, err := g.CreatePayment([]chaingen.Output{{Script: pk, Value: value}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	vout := -1
	for n, o := range fund.TxOut {
		if o.Value == value && string(o.PkScript) == string(pk) {
			vout = n
		}
	}
	dest, err := g.PkScript(chaingen.P2WPKH, 9044)
	if err != nil {
		t.Fatal(err)
	}
	spend := wire.NewMsgTx(2)
	spend.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: fund.TxHash(), Index: uint32(vout)}, nil, nil))
	spend.AddTxOut(wire.NewTxOut(value-2_000, dest))
	b := txscript.NewScriptBuilder().AddOp(txscript.OP_0)
	for _, k := range keys[:2] {
		sig, err := txscript.RawTxInSignature(spend, 0, redeem, txscript.SigHashAll, k)
		if err != nil {
			t.Fatal(err)
		}
		b.AddData(sig)
	}
	if spend.TxIn[0].SignatureScript, err = b.AddData(redeem).Script(); err != nil {
		t.Fatal(err)
	}
	if _, err := g.AddBlock(fund, spend); err != nil {
		t.Fatal(err)
	}
	return hashes
}
