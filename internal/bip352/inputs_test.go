package bip352

import (
	"bytes"
	"testing"
)

// TestUnknownWitnessSkipsTx: a tx spending a witness program of version
// 2 to 16 is not scanned even beside an eligible input (the BIP's
// vectors do not cover this rule); version 0 and 1 programs are kept.
func TestUnknownWitnessSkipsTx(t *testing.T) {
	c := loadVectors(t)[0].Receiving[0]
	ins := vectorInputs(t, c.Given.Vin)
	if _, ok := Tweak(ins); !ok {
		t.Fatal("the base case has no tweak")
	}
	for _, tc := range []struct {
		script []byte
		skip   bool
	}{
		{append([]byte{0x52, 0x20}, bytes.Repeat([]byte{7}, 32)...), true},  // v2, 32 bytes
		{append([]byte{0x60, 0x02}, 1, 2), true},                            // v16, 2 bytes
		{append([]byte{0x52, 0x28}, bytes.Repeat([]byte{7}, 40)...), true},  // v2, 40 bytes
		{append([]byte{0x52, 0x29}, bytes.Repeat([]byte{7}, 41)...), false}, // 41 bytes: no program
		{append([]byte{0x52, 0x01}, 1), false},                              // 1 byte: no program
		{append([]byte{0x00, 0x20}, bytes.Repeat([]byte{7}, 32)...), false}, // P2WSH
		{append([]byte{0x51, 0x20}, bytes.Repeat([]byte{7}, 32)...), false}, // v1
	} {
		extra := Input{PrevTxid: [32]byte{9}, PrevScript: tc.script}
		_, ok := Tweak(append(append([]Input{}, ins...), extra))
		if ok == tc.skip {
			t.Errorf("script %x: scanned %v, want %v", tc.script, ok, !tc.skip)
		}
	}
}

// FuzzInputKey: any scriptSig, witness and prevout script give a key or
// nil, never a panic; a key found is a valid compressed point, and a tx
// of that input alone has a tweak exactly when the input has a key.
func FuzzInputKey(f *testing.F) {
	for _, c := range loadVectors(f) {
		for _, r := range c.Receiving {
			for _, v := range r.Given.Vin {
				f.Add(unhex(f, v.ScriptSig), unhex(f, v.Witness), unhex(f, v.Prevout.ScriptPubKey.Hex))
			}
		}
	}
	f.Fuzz(func(t *testing.T, sig, wit, prev []byte) {
		w, err := parseWitness(wit)
		if err != nil {
			w = [][]byte{wit}
		}
		in := Input{ScriptSig: sig, Witness: w, PrevScript: prev}
		k := InputKey(&in)
		if k != nil && len(k.SerializeCompressed()) != 33 {
			t.Fatal("bad key")
		}
		_, ok := Tweak([]Input{in})
		if ok != (k != nil) {
			t.Fatalf("key %v but tweak ok %v", k != nil, ok)
		}
	})
}

// BenchmarkTweak measures a tx's tweak over the BIP's receiving cases
// (one to three inputs of every kind): the index's cost per eligible tx.
func BenchmarkTweak(b *testing.B) {
	var txs [][]Input
	for _, c := range loadVectors(b) {
		for _, r := range c.Receiving {
			txs = append(txs, vectorInputs(b, r.Given.Vin))
		}
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		Tweak(txs[i%len(txs)])
	}
}
