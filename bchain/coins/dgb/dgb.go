// Package dgb registers DigiByte's networks. DigiByte is mined with five
// proof-of-work algorithms (the algorithm is in the header's version bits),
// but a block's id is still the double SHA-256 of its 80-byte header and its
// blocks and txs use Bitcoin's encoding, SegWit included: only the network
// parameters differ from Bitcoin.
package dgb

import (
	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain/coins/btc"
)

// Network magics of DigiByte Core's chainparams.
const (
	mainnetMagic wire.BitcoinNet = 0xdab6c3fa
	testnetMagic wire.BitcoinNet = 0xddbdc8fd
)

// MainNetParams and TestNetParams are DigiByte's address and key versions
// on top of Bitcoin's parameters.
var (
	MainNetParams = mainNet()
	TestNetParams = testNet()
)

func mainNet() chaincfg.Params {
	p := chaincfg.MainNetParams
	p.Name = "digibyte-mainnet"
	p.Net = mainnetMagic
	p.GenesisHash = btc.MustHash("7497ea1b465eb39f1c8f507bc877078fe016d6fcb6dfad3a64c98dcc6e1e8496")
	p.PubKeyHashAddrID = 30 // D...
	p.ScriptHashAddrID = 63 // S...
	p.PrivateKeyID = 128
	p.Bech32HRPSegwit = "dgb"
	p.HDCoinType = 20
	return p
}

func testNet() chaincfg.Params {
	p := chaincfg.TestNet3Params
	p.Name = "digibyte-testnet"
	p.Net = testnetMagic
	p.GenesisHash = btc.MustHash("308ea0711d5763be2995670dd9ca9872753561285a84da1d58be58acaa822252")
	p.PubKeyHashAddrID = 126
	p.ScriptHashAddrID = 140
	p.PrivateKeyID = 254
	p.Bech32HRPSegwit = "dgbt"
	p.HDCoinType = 1
	return p
}

// Coin names, shortcuts and ports follow Blockbook's digibyte*.json.
func init() {
	// Registering the networks makes btcd's address decoder recognize the
	// dgb1/dgbt1 bech32 prefixes.
	for _, p := range []*chaincfg.Params{&MainNetParams, &TestNetParams} {
		if err := chaincfg.Register(p); err != nil {
			panic(err)
		}
	}
	btc.Register("DigiByte", btc.Network{
		Params: &MainNetParams, Shortcut: "DGB", Label: "DigiByte", Slip44: 20,
		PublicPort: 9142, InternalPort: 9042,
	})
	btc.Register("DigiByte Testnet", btc.Network{
		Params: &TestNetParams, Shortcut: "TDGB", Label: "DigiByte Testnet", Slip44: 1, Testnet: true,
		PublicPort: 19142, InternalPort: 19042,
	})
}
