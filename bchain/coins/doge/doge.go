// Package doge registers Dogecoin and Dogecoin Testnet: Bitcoin's tx format
// without SegWit, merge-mined (AuxPoW) headers since block 371337, and
// Dogecoin Core 1.14's fee estimation (estimatefee only) with the network's
// recommended minimum fee as the floor.
package doge

import (
	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/txscript/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/auxpow"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
)

// Network magics as btcd reads them (the four message-start bytes, little
// endian): 0xc0 repeated four times on mainnet, fc c1 b7 dc on testnet.
const (
	MainnetMagic wire.BitcoinNet = 0xc0c0c0c0
	TestnetMagic wire.BitcoinNet = 0xdcb7c1fc
)

// Network parameters: address versions and BIP32 key versions of Dogecoin
// Core 1.14, and the genesis blocks. Dogecoin has no SegWit, so no bech32
// prefix.
var (
	MainNetParams = btc.DeriveParams(chaincfg.MainNetParams, btc.ParamsSpec{
		Name: "dogecoin", Net: MainnetMagic,
		Genesis:    "1a91e3dace36e2be3bf030a65679fe821aa1d6ef92e7c9902eb318182c355691",
		PubKeyHash: 30, ScriptHash: 22, PrivateKey: 158,
		HDPublic: [4]byte{0x02, 0xfa, 0xca, 0xfd}, HDPrivate: [4]byte{0x02, 0xfa, 0xc3, 0x98}, HDCoinType: 3,
	})
	TestNetParams = btc.DeriveParams(chaincfg.TestNet3Params, btc.ParamsSpec{
		Name: "dogecoin-testnet", Net: TestnetMagic,
		Genesis:    "bb0a78264637406b6360aad926284d544d7049f45189db5664f3c4d07350559e",
		PubKeyHash: 113, ScriptHash: 196, PrivateKey: 241,
		HDPublic: [4]byte{0x04, 0x35, 0x87, 0xcf}, HDPrivate: [4]byte{0x04, 0x35, 0x83, 0x94}, HDCoinType: 1,
	})
)

// Coin names, shortcuts and ports follow Blockbook's dogecoin*.json.
func init() {
	p2p := btc.P2POptions{NoWitness: true, ProtocolVersion: 70015}
	btc.Register("Dogecoin", btc.Network{
		Params: MainNetParams, Shortcut: "DOGE", Label: "Dogecoin", Slip44: 3,
		PublicPort: 9138, InternalPort: 9038, NewParser: newParser, Adjust: adjust, P2P: p2p,
	})
	btc.Register("Dogecoin Testnet", btc.Network{
		Params: TestNetParams, Shortcut: "DOGETEST", Label: "Dogecoin Testnet", Slip44: 1, Testnet: true,
		PublicPort: 19138, InternalPort: 19038, NewParser: newParser, Adjust: adjust, P2P: p2p,
	})
}

// Parser is Bitcoin's parser with AuxPoW blocks and without SegWit addresses.
type Parser struct {
	*btc.Parser
}

// NewParser returns a Dogecoin parser for the given network parameters.
func NewParser(params *chaincfg.Params) *Parser { return &Parser{Parser: btc.NewParser(params)} }

func newParser(params *chaincfg.Params, _ *bchain.Config) (bchain.UtxoParser, error) {
	return NewParser(params), nil
}

// ParseBlock decodes a serialized block, AuxPoW headers included.
func (p *Parser) ParseBlock(raw []byte) (*bchain.Block, error) { return auxpow.ParseBlock(raw) }

// AddressesFromAddrDesc renders a descriptor. Witness programs have no
// address on Dogecoin (no SegWit): they are shown without one, like other
// non-standard scripts, and stay indexed under their script.
func (p *Parser) AddressesFromAddrDesc(desc bchain.AddrDesc) ([]string, bool, error) {
	if txscript.IsWitnessProgram(desc) {
		return []string{}, false, nil
	}
	return p.Parser.AddressesFromAddrDesc(desc)
}

// OutputAddresses renders an output script for display; it is overridden
// because btc's calls btc's own AddressesFromAddrDesc.
func (p *Parser) OutputAddresses(script []byte) ([]string, bool) {
	if txscript.IsWitnessProgram(script) {
		return []string{}, false
	}
	return p.Parser.OutputAddresses(script)
}
