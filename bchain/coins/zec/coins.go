package zec

import (
	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
)

// Network magics and genesis blocks of Zcash's mainnet and testnet.
const (
	mainnetMagic wire.BitcoinNet = 0x6427e924
	testnetMagic wire.BitcoinNet = 0xbff91afa
)

var (
	// MainNetParams are Zcash mainnet's parameters as far as the index uses
	// them; the name is the chain name zcashd and zebrad report in
	// getblockchaininfo. Zcash has no SegWit.
	MainNetParams = btc.DeriveParams(chaincfg.MainNetParams, btc.ParamsSpec{Name: "main", Net: mainnetMagic,
		Genesis: "00040fe8ec8471911baa1db1266ea15dd06b4a8a5c453883c000b031973dce08"})
	// TestNetParams are Zcash testnet's.
	TestNetParams = btc.DeriveParams(chaincfg.TestNet3Params, btc.ParamsSpec{Name: "test", Net: testnetMagic,
		Genesis: "05a60a92d99d85997cce3b87616c089f6124d7342af37106edc76126334a2c38"})

	// MainNetPrefixes give t1 (P2PKH) and t3 (P2SH) addresses.
	MainNetPrefixes = Prefixes{PubKeyHash: [2]byte{0x1C, 0xB8}, ScriptHash: [2]byte{0x1C, 0xBD}}
	// TestNetPrefixes give tm (P2PKH) and t2 (P2SH) addresses.
	TestNetPrefixes = Prefixes{PubKeyHash: [2]byte{0x1D, 0x25}, ScriptHash: [2]byte{0x1C, 0xBA}}
)

func init() {
	// Names, shortcuts and ports follow Blockbook's zcash*.json coin definitions.
	btc.Register("Zcash", btc.Network{
		Params: MainNetParams, Shortcut: "ZEC", Label: "Zcash", Slip44: 133, PublicPort: 9132, InternalPort: 9032,
		NewParser: func(params *chaincfg.Params, _ *bchain.Config) (bchain.UtxoParser, error) {
			return NewParser(params, MainNetPrefixes), nil
		},
		Adjust:         adjust,
		NoP2P:          true,
		MaxBlockWeight: 4 * 2_000_000, // 2 MB blocks, no segwit
	})
	btc.Register("Zcash Testnet", btc.Network{
		Params: TestNetParams, Shortcut: "TAZ", Label: "Zcash Testnet", Slip44: 1, Testnet: true, PublicPort: 19132, InternalPort: 19032,
		NewParser: func(params *chaincfg.Params, _ *bchain.Config) (bchain.UtxoParser, error) {
			return NewParser(params, TestNetPrefixes), nil
		},
		Adjust:         adjust,
		NoP2P:          true,
		MaxBlockWeight: 4 * 2_000_000, // 2 MB blocks, no segwit
	})
}
