package bch

import (
	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
)

// Network magics of Bitcoin Cash Node and Bitcoin ABC (eCash kept Bitcoin
// Cash's): the pchMessageStart bytes read as a little-endian uint32.
const (
	mainnetMagic wire.BitcoinNet = 0xe8f3e1e3
	testnetMagic wire.BitcoinNet = 0xf4f3e5f4
)

// CashAddr prefixes.
const (
	prefixBCH       = "bitcoincash"
	prefixBCHTest   = "bchtest"
	prefixECash     = "ecash"
	prefixECashTest = "ectest"
)

var (
	// MainNetParams are Bitcoin Cash's and eCash's mainnet parameters:
	// Bitcoin's genesis, base58 versions and key versions, their own magic.
	MainNetParams = withNet(chaincfg.MainNetParams, mainnetMagic)
	// TestNetParams are Bitcoin Cash's testnet3 parameters.
	TestNetParams = withNet(chaincfg.TestNet3Params, testnetMagic)
)

func withNet(p chaincfg.Params, net wire.BitcoinNet) *chaincfg.Params {
	p.Net = net
	return &p
}

// Names, shortcuts, SLIP-44 types and ports follow Blockbook's bcash.json,
// bcash_testnet.json and ecash.json.
func init() {
	p2p := btc.P2POptions{NoWitness: true}
	const weight = 4 * 32_000_000 // 32 MB blocks, no segwit
	btc.Register("Bcash", btc.Network{
		Params: MainNetParams, Shortcut: "BCH", Label: "Bitcoin Cash", Slip44: 145,
		PublicPort: 9131, InternalPort: 9031, P2P: p2p, MaxBlockWeight: weight,
		NewParser: newParserFromConfig(prefixBCH), Adjust: adjust(8),
	})
	btc.Register("Bcash Testnet", btc.Network{
		Params: TestNetParams, Shortcut: "TBCH", Label: "Bitcoin Cash Testnet", Slip44: 1, Testnet: true,
		PublicPort: 19131, InternalPort: 19031, P2P: p2p, MaxBlockWeight: weight,
		NewParser: newParserFromConfig(prefixBCHTest), Adjust: adjust(8),
	})
	btc.Register("ECash", btc.Network{
		Params: MainNetParams, Shortcut: "XEC", Label: "eCash", Slip44: 899, Decimals: 2,
		PublicPort: 9197, InternalPort: 9097, P2P: p2p, MaxBlockWeight: weight,
		NewParser: newParserFromConfig(prefixECash), Adjust: adjust(2),
	})
}

// adjust fits the backend to Bitcoin Cash Node and Bitcoin ABC: fees come
// from estimatefee, which takes no arguments on these nodes (they have no
// estimatesmartfee), in coins of decimals places, with the relay fee when
// there is no estimate; accounts are BIP44 P2PKH only, as there is no
// SegWit.
func adjust(decimals int) func(*bchain.Backend, *btc.Node, *bchain.Config) error {
	unit := int64(1)
	for range decimals {
		unit *= 10
	}
	return func(b *bchain.Backend, node *btc.Node, _ *bchain.Config) error {
		b.Fees = &btc.LegacyFeeEstimator{Node: node, Unit: unit, NoBlocksArg: true, RefusalIsError: true}
		b.Xpub = btc.P2PKHAccounts(b.Xpub)
		return nil
	}
}
