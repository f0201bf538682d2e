package bch

import (
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
)

// TestParamsBcash checks the registered networks against Blockbook's
// bcash.json, bcash_testnet.json and ecash.json, and the backends they build.
func TestParamsBcash(t *testing.T) {
	tests := []struct {
		name, shortcut, prefix string
		slip44                 uint32
		decimals, pub, intl    int
		magic                  uint32
		testnet                bool
	}{
		{"Bcash", "BCH", "bitcoincash", 145, 8, 9131, 9031, 0xe8f3e1e3, false},
		{"Bcash Testnet", "TBCH", "bchtest", 1, 8, 19131, 19031, 0xf4f3e5f4, true},
		{"ECash", "XEC", "ecash", 899, 2, 9197, 9097, 0xe8f3e1e3, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, ok := btc.NetworkFor(tt.name)
			if !ok {
				t.Fatalf("%s is not registered", tt.name)
			}
			if n.Shortcut != tt.shortcut || n.Slip44 != tt.slip44 || n.PublicPort != tt.pub || n.InternalPort != tt.intl || n.Testnet != tt.testnet {
				t.Errorf("network = %+v", n)
			}
			if uint32(n.Params.Net) != tt.magic {
				t.Errorf("magic %#x, want %#x", uint32(n.Params.Net), tt.magic)
			}
			if !n.P2P.NoWitness {
				t.Error("P2P downloads must not ask for witness blocks")
			}
			b := newBackend(t, tt.name, "")
			if b.Params.Decimals != tt.decimals || b.Params.Shortcut != tt.shortcut {
				t.Errorf("backend params %+v", b.Params)
			}
			p := b.Utxo.(*Parser)
			if p.prefix != tt.prefix || p.legacy {
				t.Errorf("parser prefix %q legacy %v", p.prefix, p.legacy)
			}
			if b.Params.Genesis.String() != "000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f" && !tt.testnet {
				t.Errorf("genesis %s", b.Params.Genesis)
			}
			// No SegWit: a bech32 address of the same hash is not an address here.
			for _, a := range []string{"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx"} {
				if _, err := b.Addresses.AddrDescFromAddress(a); !errors.Is(err, bchain.ErrInvalidAddress) {
					t.Errorf("%s accepted: %v", a, err)
				}
			}
		})
	}
	if _, err := newBackendErr("Bcash", "base32"); !errors.Is(err, bchain.ErrConfig) {
		t.Errorf("unknown address_format: %v", err)
	}
	if p := newBackend(t, "Bcash", "legacy").Utxo.(*Parser); !p.legacy {
		t.Error("address_format legacy ignored")
	}
}

func newBackendErr(name, format string) (*bchain.Backend, error) {
	raw, _ := json.Marshal(map[string]any{"coin_name": name, "rpc_url": "http://127.0.0.1:1", "address_format": format})
	cfg := &bchain.Config{CoinName: name, RPCURL: "http://127.0.0.1:1", Raw: raw}
	return bchain.NewBackend(cfg, bchain.Env{Log: slog.New(slog.DiscardHandler)})
}

func newBackend(t *testing.T, name, format string) *bchain.Backend {
	t.Helper()
	b, err := newBackendErr(name, format)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return b
}

// TestXpubP2PKHOnly: accounts are BIP44 only; SegWit key versions and
// descriptors are refused with the invalid-account error.
func TestXpubP2PKHOnly(t *testing.T) {
	b := newBackend(t, "Bcash", "")
	// BIP32 test vector 1's master public key.
	const xpub = "xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8"
	d, err := b.Xpub.ParseXpub(xpub)
	if err != nil {
		t.Fatal(err)
	}
	descs, err := b.Xpub.DeriveAddrDescs(d, 0, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	addrs, _, err := b.Addresses.AddressesFromAddrDesc(descs[0])
	if err != nil || len(addrs) != 1 || !strings.HasPrefix(addrs[0], "bitcoincash:q") {
		t.Errorf("derived %v %v", addrs, err)
	}
	legacy := newBackend(t, "Bcash", "legacy")
	if addrs, _, _ := legacy.Addresses.AddressesFromAddrDesc(descs[0]); len(addrs) != 1 || addrs[0][0] != '1' {
		t.Errorf("legacy format derived %v", addrs)
	}
	if _, err := b.Xpub.ParseXpub("pkh(" + xpub + "/<0;1>/*)"); err != nil {
		t.Errorf("pkh descriptor: %v", err)
	}
	if _, err := b.Xpub.ParseXpub("wpkh(" + xpub + "/0/*)"); !errors.Is(err, bchain.ErrInvalidXpub) {
		t.Errorf("wpkh descriptor: %v", err)
	}
}
