// Package vtc serves Vertcoin. Its blocks, txs and addresses are encoded
// and hashed as Bitcoin's (a block's id is the double SHA-256 of its
// header; proof of work uses Verthash, which an indexer never needs), so
// only the network parameters differ.
package vtc

import (
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/chainhash/v2"
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
	MainNetParams = params(chaincfg.MainNetParams, "vertcoin", MainnetMagic, "5889",
		"4d96a915f49d40b1e5c2844d1ee2dccb90013a990ccea12c492d22110489f0c4", 71, 5, "vtc")
	TestNetParams = params(chaincfg.TestNet3Params, "vertcoin-testnet", TestnetMagic, "15889",
		"cee8f24feb7a64c8f07916976aa4855decac79b6741a8ec2e32e2747497ad2c9", 74, 196, "tvtc")
)

func params(base chaincfg.Params, name string, net wire.BitcoinNet, port, genesis string, pkh, sh byte, hrp string) *chaincfg.Params {
	p := base
	p.Name, p.Net, p.DefaultPort = name, net, port
	h, err := chainhash.NewHashFromStr(genesis)
	if err != nil {
		panic(err)
	}
	p.GenesisHash = h
	p.GenesisBlock = nil // Vertcoin's genesis differs; nothing here reads it
	p.PubKeyHashAddrID, p.ScriptHashAddrID, p.Bech32HRPSegwit = pkh, sh, hrp
	return &p
}

// Coin names, shortcuts, ports and slip44 follow Blockbook's vertcoin*.json
// coin definitions.
var networks = map[string]btc.Network{
	"Vertcoin":         {Params: MainNetParams, Shortcut: "VTC", Label: "Vertcoin", Slip44: 28, PublicPort: 9140, InternalPort: 9040},
	"Vertcoin Testnet": {Params: TestNetParams, Shortcut: "TVTC", Label: "Vertcoin Testnet", Slip44: 1, Testnet: true, PublicPort: 19140, InternalPort: 19040},
}

func init() {
	for name, n := range networks {
		// The address decoder recognises bech32 prefixes of registered
		// networks only.
		if err := chaincfg.Register(n.Params); err != nil {
			panic(fmt.Sprintf("vtc: register %s: %v", name, err))
		}
		btc.Register(name, n)
	}
}
