package ltc

import (
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
)

// Mainnet base58 addresses are real ones from Blockbook's Litecoin parser
// tests; bech32 ones are BIP173's P2WPKH program under Litecoin's prefixes.
func TestParamsLitecoin(t *testing.T) {
	cases := []struct {
		name, genesis string
		magic         uint32
		valid         []string
		invalid       []string
	}{
		{"Litecoin", MainnetGenesis, 0xdbb6c0fb,
			[]string{"LMgENNXzzuPxp7vfMjDrCU44bsmrEMgqvc", "MLTQ8niHMnpJLNvK72zBeY91hQmUtoo8nX", "ltc1qw508d6qejxtdg4y5r3zarvary0c5xw7kgmn4n9"},
			[]string{"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", "tltc1qw508d6qejxtdg4y5r3zarvary0c5xw7klfsuq0"}},
		{"Litecoin Testnet", TestnetGenesis, 0xf1c8d2fd,
			[]string{"tltc1qw508d6qejxtdg4y5r3zarvary0c5xw7klfsuq0", "mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn"},
			[]string{"ltc1qw508d6qejxtdg4y5r3zarvary0c5xw7kgmn4n9", "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx"}},
		{"Litecoin Regtest", RegtestGenesis, 0xdab5bffa,
			[]string{"rltc1qw508d6qejxtdg4y5r3zarvary0c5xw7k693xs3", "mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn"},
			[]string{"bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080", "tltc1qw508d6qejxtdg4y5r3zarvary0c5xw7klfsuq0"}},
	}
	for _, c := range cases {
		n, ok := btc.NetworkFor(c.name)
		if !ok {
			t.Fatalf("%s not registered", c.name)
		}
		if got := n.Params.GenesisHash.String(); got != c.genesis {
			t.Errorf("%s genesis %s", c.name, got)
		}
		if uint32(n.Params.Net) != c.magic {
			t.Errorf("%s magic %x", c.name, uint32(n.Params.Net))
		}
		if n.P2P.BlockInvType != 0x60000002 {
			t.Errorf("%s getdata type %x, want MSG_MWEB_BLOCK", c.name, n.P2P.BlockInvType)
		}
		p, err := n.NewParser(n.Params, &bchain.Config{})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range c.valid {
			desc, err := p.AddrDescFromAddress(a)
			if err != nil {
				t.Errorf("%s: %s: %v", c.name, a, err)
				continue
			}
			back, _, err := p.AddressesFromAddrDesc(desc)
			if err != nil || len(back) != 1 || back[0] != a {
				t.Errorf("%s: %s renders as %v %v", c.name, a, back, err)
			}
		}
		for _, a := range c.invalid {
			if _, err := p.AddrDescFromAddress(a); err == nil {
				t.Errorf("%s accepts %s", c.name, a)
			}
		}
	}
}
