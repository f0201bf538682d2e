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
	MainNetParams = *btc.DeriveParams(chaincfg.MainNetParams, btc.ParamsSpec{
		Name: "digibyte-mainnet", Net: mainnetMagic,
		Genesis:    "7497ea1b465eb39f1c8f507bc877078fe016d6fcb6dfad3a64c98dcc6e1e8496",
		PubKeyHash: 30, ScriptHash: 63, PrivateKey: 128, HRP: "dgb", // D..., S...
		HDCoinType: 20,
	})
	TestNetParams = *btc.DeriveParams(chaincfg.TestNet3Params, btc.ParamsSpec{
		Name: "digibyte-testnet", Net: testnetMagic,
		Genesis:    "308ea0711d5763be2995670dd9ca9872753561285a84da1d58be58acaa822252",
		PubKeyHash: 126, ScriptHash: 140, PrivateKey: 254, HRP: "dgbt",
		HDCoinType: 1,
	})
)

// Coin names, shortcuts and ports follow Blockbook's digibyte*.json.
func init() {
	// Registering the networks makes btcd's address decoder recognize the
	// dgb1/dgbt1 bech32 prefixes.
	btc.MustRegisterParams(&MainNetParams, &TestNetParams)
	btc.Register("DigiByte", btc.Network{
		Params: &MainNetParams, Shortcut: "DGB", Label: "DigiByte", Slip44: 20,
		PublicPort: 9142, InternalPort: 9042,
	})
	btc.Register("DigiByte Testnet", btc.Network{
		Params: &TestNetParams, Shortcut: "TDGB", Label: "DigiByte Testnet", Slip44: 1, Testnet: true,
		PublicPort: 19142, InternalPort: 19042,
	})
}
