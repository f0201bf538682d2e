package bip352

import (
	"testing"

	"github.com/btcsuite/btcd/btcec/v2"
)

// TestVectorAddresses: the BIP's receiving cases give their addresses
// (the first, unlabeled one) from the scan key and the spend key.
func TestVectorAddresses(t *testing.T) {
	n := 0
	for _, c := range loadVectors(t) {
		for _, r := range c.Receiving {
			if len(r.Expected.Addresses) == 0 {
				continue
			}
			spend, _ := btcec.PrivKeyFromBytes(unhex(t, r.Given.KeyMaterial.Spend))
			got, err := Address("sp", unhex(t, r.Given.KeyMaterial.Scan), spend.PubKey().SerializeCompressed())
			if err != nil {
				t.Fatal(err)
			}
			if got != r.Expected.Addresses[0] {
				t.Fatalf("%s: address %s, want %s", c.Comment, got, r.Expected.Addresses[0])
			}
			n++
		}
	}
	if n < 20 {
		t.Fatalf("only %d addresses checked", n)
	}
	if _, err := Address("sp", make([]byte, 32), make([]byte, 33)); err == nil {
		t.Fatal("a zero scan key gave an address")
	}
}
