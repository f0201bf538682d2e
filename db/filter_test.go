package db

import (
	"encoding/hex"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// The vectors are Blockbook's (mainnet scripts and the ordinal commit/reveal
// pair 11111c17…/c4cae52a…), so our filters match what its clients test.

func hexBytes(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustHash(t *testing.T, s string) bchain.Hash {
	t.Helper()
	h, err := bchain.ParseHash(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestFilterVectors(t *testing.T) {
	descs := []bchain.AddrDesc{
		hexBytes(t, "512046403c0298e87bf3c4813605b2064dbdaad2b9d8cf6b6d6b1e45f2ff0540597d"), // P2TR
		hexBytes(t, "5120f667578b85bed256c7fcb9f2cda488d5281e52ca42e7dd4bc21e95149562f09f"), // P2TR
		hexBytes(t, "a91452ae9441d9920d9eb4a3c0a877ca8d8de547ce6587"),                       // P2SH
	}
	key := mustHash(t, "86336c62a63f509a278624e3f400cdd50838d035a44e0af8a7d6d133c04cc2d2")
	tx := &bchain.Tx{}
	for _, tc := range []struct {
		name string
		p    FilterParams
		want string
	}{
		{"taproot", FilterParams{P: 20, Scripts: "taproot"}, "0235dddcce5d60"},
		{"taproot zeroed key", FilterParams{P: 20, Scripts: "taproot", ZeroedKey: true}, "0218c23a013600"},
		{"taproot P=21", FilterParams{P: 21, Scripts: "taproot"}, "0235ddda672eb0"},
		{"all", FilterParams{P: 20}, "0350ccc61ac611976c80"},
		{"taproot-noordinals", FilterParams{P: 20, Scripts: "taproot-noordinals"}, "0235dddcce5d60"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.p.Validate(); err != nil {
				t.Fatal(err)
			}
			b := NewFilterBuilder(tc.p, key)
			b.Add(tx, descs...)
			b.Add(tx, descs[0]) // duplicates count once
			f, err := b.Filter()
			if err != nil {
				t.Fatal(err)
			}
			if got := hex.EncodeToString(f); got != tc.want {
				t.Fatalf("filter %s, want %s", got, tc.want)
			}
		})
	}
	if err := (FilterParams{P: 20, Scripts: "notsupported"}).Validate(); err == nil {
		t.Fatal("unsupported script selection accepted")
	}
	if (FilterParams{}).Enabled() {
		t.Fatal("P=0 must disable filters")
	}
}

func TestFilterOrdinals(t *testing.T) {
	commit := &bchain.Tx{
		Txid: mustHash(t, "11111c17cbe86aebab146ee039d4e354cb55a9fb226ebdd2e30948630e7710ad"),
		Vin: []bchain.Vin{{
			PrevTxid: mustHash(t, "c163fe1fdc21269cb05621adec38045e46a65289a356f9354df6010bce064916"),
			Witness:  [][]byte{hexBytes(t, "0371633164dd16345c02e80c9963042f9a502aa2c8109c0f61da333ac1503c3ce2a1b79895359bbdee5979ab2cb44f3395892e1c419c3a8f67d31d33d7e764c9")},
		}},
	}
	commitDescs := []bchain.AddrDesc{
		hexBytes(t, "51206a711358bac6ca8f7ddfdf8f733546e658208122939f0bf7a3727f8143dfbbff"),
		hexBytes(t, "a9144390d0b3d2b6d48b8c205ffbe40b2d84c40de07f87"),
		hexBytes(t, "76a914ba6b046dd832aa8bc41c158232bcc18211387c4388ac"),
	}
	// The reveal's second witness item holds the inscription envelope
	// (OP_FALSE OP_IF "ord" ...); the payload itself does not matter here.
	reveal := &bchain.Tx{
		Txid: mustHash(t, "c4cae52a6e681b66c85c12feafb42f3617f34977032df1ee139eae07370863ef"),
		Vin: []bchain.Vin{{
			PrevTxid: commit.Txid,
			Witness: [][]byte{
				hexBytes(t, "737ad2835962e3d147cd74a578f1109e9314eac9d00c9fad304ce2050b78fac21a2d124fd886d1d646cf1de5d5c9754b0415b960b1319526fa25e36ca1f650ce"),
				hexBytes(t, "2029f34532e043fade4471779b4955005db8fa9b64c9e8d0a2dae4a38bbca23328ac0063036f726401010a696d6167652f77656270004d0802"),
				hexBytes(t, "c129f34532e043fade4471779b4955005db8fa9b64c9e8d0a2dae4a38bbca23328"),
			},
		}},
	}
	revealDescs := []bchain.AddrDesc{hexBytes(t, "51206850b179630df0f7012ae2b111bafa52ebb9b54e1435fc4f98fbe0af6f95076a")}
	if hasInscription(commit) || !hasInscription(reveal) {
		t.Fatal("inscription detection is wrong")
	}
	for _, tc := range []struct{ scripts, want string }{
		{"", "04256e660160e42ff40ee320"},
		{"taproot", "0212b734c2ebe0"},
		{"taproot-noordinals", ""}, // the reveal and its parent are both left out
	} {
		b := NewFilterBuilder(FilterParams{P: 20, Scripts: tc.scripts, ZeroedKey: true}, bchain.Hash{})
		b.Add(commit, commitDescs...)
		b.Add(reveal, revealDescs...)
		f, err := b.Filter()
		if err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(f); got != tc.want {
			t.Errorf("scripts %q: filter %q, want %q", tc.scripts, got, tc.want)
		}
	}
}
