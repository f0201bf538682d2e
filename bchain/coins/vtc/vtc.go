// Package vtc serves Vertcoin. Its blocks, txs and addresses are encoded
// and hashed as Bitcoin's (a block's id is the double SHA-256 of its
// header; proof of work uses Verthash, which an indexer never needs), so
// only the network parameters differ.
package vtc

import (
	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain/coins/btc"
)

// Network magics (Vertcoin Core's message start, little-endian).
const (
	MainnetMagic wire.BitcoinNet = 0xdab5bffb
	TestnetMagic wire.BitcoinNet = 0x74726576 // "vert"
)

// Network parameters: Vertcoin Core's chainparams for what the parser,
// the accounts and the status read; consensus fields are Bitcoin's and
// unused.
var (
	MainNetParams = btc.DeriveParams(chaincfg.MainNetParams, btc.ParamsSpec{
		Name: "vertcoin", Net: MainnetMagic, DefaultPort: "5889",
		Genesis:    "4d96a915f49d40b1e5c2844d1ee2dccb90013a990ccea12c492d22110489f0c4",
		PubKeyHash: 71, ScriptHash: 5, HRP: "vtc",
	})
	TestNetParams = btc.DeriveParams(chaincfg.TestNet3Params, btc.ParamsSpec{
		Name: "vertcoin-testnet", Net: TestnetMagic, DefaultPort: "15889",
		Genesis:    "cee8f24feb7a64c8f07916976aa4855decac79b6741a8ec2e32e2747497ad2c9",
		PubKeyHash: 74, ScriptHash: 196, HRP: "tvtc",
	})
)

// Coin names, shortcuts, ports and slip44 follow Blockbook's vertcoin*.json
// coin definitions.
var networks = map[string]btc.Network{
	"Vertcoin":         {Params: MainNetParams, Shortcut: "VTC", Label: "Vertcoin", Slip44: 28, PublicPort: 9140, InternalPort: 9040},
	"Vertcoin Testnet": {Params: TestNetParams, Shortcut: "TVTC", Label: "Vertcoin Testnet", Slip44: 1, Testnet: true, PublicPort: 19140, InternalPort: 19040},
}

func init() {
	for name, n := range networks {
		btc.MustRegisterParams(n.Params)
		btc.Register(name, n)
	}
}
