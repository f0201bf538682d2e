package mempool

import (
	"bytes"
	"crypto/sha256"
	"testing"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/ecdsa"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/btcsuite/btcd/txscript/v2"

	"github.com/openexplorer/blockbook/bchain"
)

// TestDataFlags checks the sighash, inscription, fake pubkey and fake
// scripthash bits on txs with real signatures and keys from btcec.
func TestDataFlags(t *testing.T) {
	key, err := btcec.NewPrivateKey()
	if err != nil {
		t.Fatal(err)
	}
	digest := sha256.Sum256([]byte("flags"))
	der := ecdsa.Sign(key, digest[:]).Serialize()
	sig, err := schnorr.Sign(key, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	schnorrSig := sig.Serialize()
	pub := key.PubKey().SerializeCompressed()
	p2wpkh := append([]byte{0x00, 0x14}, make([]byte, 20)...)
	p2tr := append([]byte{0x51, 0x20}, make([]byte, 32)...)
	p2pkh := append(append([]byte{0x76, 0xa9, 0x14}, make([]byte, 20)...), 0x88, 0xac)
	envelope, err := txscript.NewScriptBuilder().AddData(pub[1:]).AddOp(txscript.OP_CHECKSIG).AddOp(txscript.OP_0).AddOp(txscript.OP_IF).
		AddData([]byte("ord")).AddData([]byte("text/plain")).AddOp(txscript.OP_ENDIF).Script()
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := txscript.NewScriptBuilder().AddData(pub[1:]).AddOp(txscript.OP_CHECKSIG).Script()
	control := append([]byte{0xc0}, pub[1:]...)
	notPoint := append([]byte{0x02}, bytes.Repeat([]byte{0xff}, 32)...) // x ≥ p
	p2pk := func(k []byte) []byte { return append(append([]byte{byte(len(k))}, k...), txscript.OP_CHECKSIG) }
	multisig := func(keys ...[]byte) []byte {
		b := txscript.NewScriptBuilder().AddOp(txscript.OP_1)
		for _, k := range keys {
			b.AddData(k)
		}
		s, _ := b.AddOp(byte(txscript.OP_1 + len(keys) - 1)).AddOp(txscript.OP_CHECKMULTISIG).Script()
		return s
	}
	burn := append([]byte{0x02}, bytes.Repeat([]byte{0x22}, 32)...)
	// 40 bytes of data over two P2WSH outputs: the length in the first two
	// bytes, zeros after the data.
	olga1 := append([]byte{0x00, 0x20, 0x00, 40}, bytes.Repeat([]byte{0xab}, 30)...)
	olga2 := append(append([]byte{0x00, 0x20}, bytes.Repeat([]byte{0xab}, 10)...), make([]byte, 22)...)
	in := func(pk []byte, scriptSig []byte, witness ...[]byte) (bchain.Vin, Prevout) {
		return bchain.Vin{Sequence: 0xffffffff, ScriptSig: scriptSig, Witness: witness}, Prevout{Desc: pk, Value: 1000, Known: true}
	}
	mk := func(ins []bchain.Vin, prev []Prevout, outs ...[]byte) *Tx {
		tx := &Tx{Tx: &bchain.Tx{Version: 2, Vin: ins}, Prevouts: prev}
		for i, s := range outs {
			tx.Vout = append(tx.Vout, bchain.Vout{Value: uint64(600 + i), Script: s})
		}
		return tx
	}
	one := func(pk, scriptSig []byte, witness ...[]byte) ([]bchain.Vin, []Prevout) {
		v, p := in(pk, scriptSig, witness...)
		return []bchain.Vin{v}, []Prevout{p}
	}
	const data = FlagFakePubkey | FlagInscription | FlagFakeScripthash | FlagSighashAll | FlagSighashNone | FlagSighashSingle | FlagSighashDefault | FlagSighashACP
	scriptSig, _ := txscript.NewScriptBuilder().AddData(append(der, 0x02)).AddData(pub).Script()
	for _, c := range []struct {
		name string
		ins  []bchain.Vin
		prev []Prevout
		outs [][]byte
		want uint64
	}{
		{"p2wpkh all|acp", nil, nil, [][]byte{p2wpkh}, FlagSighashAll | FlagSighashACP},
		{"p2pkh none (scriptSig)", nil, nil, [][]byte{p2wpkh}, FlagSighashNone},
		{"taproot key path, 64 bytes: default", nil, nil, [][]byte{p2wpkh}, FlagSighashDefault},
		{"taproot key path, 65 bytes: single", nil, nil, [][]byte{p2wpkh}, FlagSighashSingle},
		{"taproot script path with an envelope", nil, nil, [][]byte{p2wpkh}, FlagSighashDefault | FlagInscription},
		{"taproot script path, no envelope, annex", nil, nil, [][]byte{p2wpkh}, FlagSighashAll},
		{"p2pk output, not a point", nil, nil, [][]byte{p2pk(notPoint)}, FlagSighashAll},
		{"p2pk output, real key", nil, nil, [][]byte{p2pk(pub)}, FlagSighashAll},
		{"multisig with a burn key", nil, nil, [][]byte{multisig(pub, burn)}, FlagSighashAll | FlagFakePubkey},
		{"data in p2wsh outputs", nil, nil, [][]byte{olga1, olga2, p2wpkh}, FlagSighashAll | FlagFakeScripthash},
	} {
		switch c.name {
		case "p2wpkh all|acp":
			c.ins, c.prev = one(p2wpkh, nil, append(der, 0x81), pub)
		case "p2pkh none (scriptSig)":
			c.ins, c.prev = one(p2pkh, scriptSig)
		case "taproot key path, 64 bytes: default":
			c.ins, c.prev = one(p2tr, nil, schnorrSig)
		case "taproot key path, 65 bytes: single":
			c.ins, c.prev = one(p2tr, nil, append(schnorrSig, 0x03))
		case "taproot script path with an envelope":
			c.ins, c.prev = one(p2tr, nil, schnorrSig, envelope, control)
		case "taproot script path, no envelope, annex":
			c.ins, c.prev = one(p2tr, nil, append(schnorrSig, 0x01), plain, control, []byte{0x50, 1})
		default:
			c.ins, c.prev = one(p2wpkh, nil, append(der, 0x01), pub)
		}
		if c.name == "p2pk output, not a point" {
			c.want |= FlagFakePubkey
		}
		got := mk(c.ins, c.prev, c.outs...).Flags() & data
		if got != c.want {
			t.Errorf("%s: data flags %#x, want %#x", c.name, got, c.want)
		}
	}
}
