package dash

import (
	"encoding/hex"
	"encoding/json"
	"testing"
)

// FuzzDecodePayload feeds arbitrary payloads of every special tx type to the
// payload decoder: it must never panic, and what it returns must marshal.
func FuzzDecodePayload(f *testing.F) {
	for _, s := range []string{
		"010040b00f000000000000000000000000000000000000000000000000000000000000000000",
		"010200e1f505000000001976a9147c75beb097957cc09537b615dde9ea6807719cdf88ac6d11a735000000001976a9147c75beb097957cc09537b615dde9ea6807719cdf88ac",
		"01650000000000000070110100db040000", "03", "01ff", "0300da5c1e00ff",
	} {
		b, _ := hex.DecodeString(s)
		for typ := uint16(0); typ <= 10; typ++ {
			f.Add(typ, b)
		}
	}
	p := NewParser(&MainNetParams)
	f.Fuzz(func(t *testing.T, typ uint16, payload []byte) {
		s := p.DecodePayload(typ, payload)
		if s.PayloadSize != len(payload) {
			t.Fatalf("size %d of %d bytes", s.PayloadSize, len(payload))
		}
		if _, err := json.Marshal(s); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzParseTx checks that arbitrary bytes give a tx or an error, never a
// panic, and that a decoded tx's size is the input's.
func FuzzParseTx(f *testing.F) {
	f.Add([]byte{})
	for _, s := range []string{
		"03000900000190cff40500000000232103d2c317552f5617f534065b9693fd4d7a8925daacdb9d44e908f9ffb0d285ea61ac00000000910165",
		"0300070000000000000082010a",
		"03000500010000000000000000000000000000000000000000000000000000000000000000ffffffff0100ffffffff0000000000fd",
	} {
		b, _ := hex.DecodeString(s)
		f.Add(b)
	}
	p := NewParser(&TestNetParams)
	f.Fuzz(func(t *testing.T, raw []byte) {
		tx, err := p.ParseTx(raw)
		if err == nil && tx.Size != len(raw) {
			t.Fatalf("size %d of %d bytes", tx.Size, len(raw))
		}
	})
}
