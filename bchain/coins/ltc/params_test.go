package ltc

import (
	"encoding/hex"
	"github.com/btcsuite/btcd/address/v2/base58"
	"testing"
	"time"

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

// Address/script pairs of Blockbook's Litecoin parser tests (real
// addresses): both P2SH versions parse to the same script, which renders
// in Litecoin's M… / Q… form.
func TestParamsLitecoinBlockbookVectors(t *testing.T) {
	cases := []struct{ coin, addr, script, shown string }{
		{"Litecoin Testnet", "mgPdTgEq6YqUJ4yzQgR8jH5TCX5c5yRwCP", "76a91409957dfdb3eb620a94b99857e13949551584c33688ac", ""},
		{"Litecoin Testnet", "2MvGVySztevmycxrSmMRjJaVj2iJin7qpap", "a9142126232e3f47ae0f1246ec5f05fc400d83c86a0d87", "QPdG6Ts8g2q4m9cVPTTkPGwAB6kYgXB7Hc"},
		{"Litecoin Testnet", "2N9a2TNzWz1FEKGFxUdMEh62V83URdZ5QAZ", "a914b31049e7ee51501fe19e3e0cdb803dc84cf99f9e87", "QcvnaPrm17JKTT216jPFmnTvGRvFX2fWzN"},
		{"Litecoin Testnet", "QPdG6Ts8g2q4m9cVPTTkPGwAB6kYgXB7Hc", "a9142126232e3f47ae0f1246ec5f05fc400d83c86a0d87", ""},
		{"Litecoin Regtest", "QcvnaPrm17JKTT216jPFmnTvGRvFX2fWzN", "a914b31049e7ee51501fe19e3e0cdb803dc84cf99f9e87", ""},
		{"Litecoin", "LgJGe7aKy1wfXESKhiKeRWj6z4KjzCfXNW", "76a914e72ba56ab6afccac045d696b979e3b5077e88d1988ac", ""},
		{"Litecoin", "LiTVReQ6N8rWc2pNg2XMwCWq7A9P15teWg", "76a914feda50542e61108cf53b93dbffa0959f91ccb32588ac", ""},
		{"Litecoin", "LTC1eqUzePT9uvpvb413Ejd6P8Cx1Ei8Di", "76a91457630115300a625f5deaab64100faa5506c1422f88ac", ""},
		{"Litecoin", "LTC1f9gtb7bU6B4VjHXvPGDi8ACNZhkKPo", "76a9145763023d3f02509644dacbfc45f2c9102129749788ac", ""},
		{"Litecoin", "MLTQ8niHMnpJLNvK72zBeY91hQmUtoo8nX", "a91489ba6cf45546f91f1bdf553e695d63fc6b8795bd87", ""},
		{"Litecoin", "MAVWzxXm8KGkZTesqLtqywzrvbs96FEoKy", "a9141c6fbaf46d64221e80cbae182c33ddf81b9294ac87", ""},
		{"Litecoin", "ltc1q5fgkuac9s2ry56jka5s6zqsyfcugcchrqgz2yl", "0014a2516e770582864a6a56ed21a102044e388c62e3", ""},
		{"Litecoin", "ltc1qu9dgdg330r6r84g5mw7wqshg04exv2uttmw2elfwx74h5tgntuzsk3x5nd", "0020e15a86a23178f433d514dbbce042e87d72662b8b5edcacfd2e37ab7a2d135f05", ""},
	}
	for _, c := range cases {
		n, _ := btc.NetworkFor(c.coin)
		p, err := n.NewParser(n.Params, &bchain.Config{})
		if err != nil {
			t.Fatal(err)
		}
		desc, err := p.AddrDescFromAddress(c.addr)
		if err != nil || hex.EncodeToString(desc) != c.script {
			t.Errorf("%s %s: %x %v, want %s", c.coin, c.addr, desc, err, c.script)
			continue
		}
		shown := c.shown
		if shown == "" {
			shown = c.addr
		}
		if got, _, err := p.AddressesFromAddrDesc(desc); err != nil || len(got) != 1 || got[0] != shown {
			t.Errorf("%s %s renders as %v %v, want %s", c.coin, c.script, got, err, shown)
		}
	}
	// Mainnet takes Bitcoin's P2SH version too (the script of MAVWzx…), but
	// not a testnet one.
	p := NewParser(MainNetParams)
	h, _ := hex.DecodeString("1c6fbaf46d64221e80cbae182c33ddf81b9294ac")
	old := base58.CheckEncode(h, 5)
	if d, err := p.AddrDescFromAddress(old); err != nil || hex.EncodeToString(d) != "a9141c6fbaf46d64221e80cbae182c33ddf81b9294ac87" {
		t.Errorf("%s: %s %v", old, d, err)
	}
	if _, err := p.AddrDescFromAddress("2MvGVySztevmycxrSmMRjJaVj2iJin7qpap"); err == nil {
		t.Error("mainnet accepts a testnet P2SH address")
	}
}

// Litecoin retargets every 2016 blocks of 2.5 minutes (Litecoin Core's
// chainparams), which the difficulty adjustment reads from the coin.
func TestRetargetParams(t *testing.T) {
	for _, name := range []string{"Litecoin", "Litecoin Testnet", "Litecoin Regtest"} {
		net, ok := btc.NetworkFor(name)
		p := net.Params
		if n := p.TargetTimespan / p.TargetTimePerBlock; !ok || n != 2016 || p.TargetTimePerBlock != 150*time.Second || !net.Retarget {
			t.Errorf("%s: %d blocks of %v, retarget %v", name, n, p.TargetTimePerBlock, net.Retarget)
		}
	}
}
