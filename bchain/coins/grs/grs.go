// Package grs serves Groestlcoin. It differs from Bitcoin in its hashes:
// a block's id is the double Grøstl-512 of its header truncated to 256
// bits, a txid is a single SHA-256 of the tx without witness data, and
// base58check (addresses, extended keys) and P2P message checksums use
// double Grøstl-512 instead of double SHA-256.
package grs

import (
	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
	"github.com/openexplorer/blockbook/bchain/coins/grs/groestl"
)

// Network magics (Groestlcoin Core's message start, little-endian).
// Testnet and regtest share Bitcoin testnet3's and regtest's magics.
const (
	MainnetMagic wire.BitcoinNet = 0xd4b4bef9
	TestnetMagic wire.BitcoinNet = 0x0709110b
	RegtestMagic wire.BitcoinNet = 0xdab5bffa
	SignetMagic  wire.BitcoinNet = 0x7696b422
)

// Network parameters. Only the fields the parser and the account code
// read are Groestlcoin's; the consensus fields are Bitcoin's and unused.
var (
	MainNetParams = btc.DeriveParams(chaincfg.MainNetParams, btc.ParamsSpec{
		Name: "groestlcoin", Net: MainnetMagic, DefaultPort: "1331",
		Genesis:    "00000ac5927c594d49cc0bdb81759d0da8297eb614683d3acb62f0703b639023",
		PubKeyHash: 36, ScriptHash: 5, HRP: "grs",
	})
	TestNetParams = btc.DeriveParams(chaincfg.TestNet3Params, btc.ParamsSpec{
		Name: "groestlcoin-testnet", Net: TestnetMagic, DefaultPort: "17777",
		Genesis:    "000000ffbb50fc9898cdd36ec163e6ba23230164c0052a28876255b7dcf2cd36",
		PubKeyHash: 111, ScriptHash: 196, HRP: "tgrs",
	})
	// Regtest has testnet's genesis block.
	RegTestParams = btc.DeriveParams(chaincfg.RegressionNetParams, btc.ParamsSpec{
		Name: "groestlcoin-regtest", Net: RegtestMagic, DefaultPort: "18888",
		Genesis:    "000000ffbb50fc9898cdd36ec163e6ba23230164c0052a28876255b7dcf2cd36",
		PubKeyHash: 111, ScriptHash: 196, HRP: "grsrt",
	})
	SigNetParams = btc.DeriveParams(chaincfg.SigNetParams, btc.ParamsSpec{
		Name: "groestlcoin-signet", Net: SignetMagic, DefaultPort: "31331",
		Genesis:    "0000007fcaa2a27993c6cde9e7818c254357af517b876ceba2f23592bb14ab31",
		PubKeyHash: 111, ScriptHash: 196, HRP: "tgrs",
	})
)

// Coin names, shortcuts, ports and slip44 follow Blockbook's
// groestlcoin*.json coin definitions.
var networks = map[string]btc.Network{
	"Groestlcoin":         {Params: MainNetParams, Shortcut: "GRS", Label: "Groestlcoin", Slip44: 17, PublicPort: 9145, InternalPort: 9045},
	"Groestlcoin Testnet": {Params: TestNetParams, Shortcut: "tGRS", Label: "Groestlcoin Testnet", Slip44: 1, Testnet: true, PublicPort: 19145, InternalPort: 19045},
	"Groestlcoin Regtest": {Params: RegTestParams, Shortcut: "rGRS", Label: "Groestlcoin Regtest", Slip44: 1, Testnet: true, PublicPort: 19146, InternalPort: 19046},
	"Groestlcoin Signet":  {Params: SigNetParams, Shortcut: "sGRS", Label: "Groestlcoin Signet", Slip44: 1, Testnet: true, PublicPort: 19147, InternalPort: 19047},
}

func init() {
	for name, n := range networks {
		n.NewParser = func(p *chaincfg.Params, _ *bchain.Config) (bchain.UtxoParser, error) { return NewParser(p), nil }
		n.Adjust = adjust
		n.P2P = btc.P2POptions{BlockHash: BlockHash, Checksum: checksum4}
		btc.Register(name, n)
	}
}

// adjust gives the account parser Groestl base58 checksums.
func adjust(b *bchain.Backend, _ *btc.Node, _ *bchain.Config) error {
	if x, ok := b.Xpub.(*btc.XpubParser); ok {
		b.Xpub = x.WithChecksum(checksum4)
	}
	return nil
}

// BlockHash is a block's id in internal byte order: the first 32 bytes of
// Grøstl-512 applied twice to the 80-byte header (Groestlcoin Core's
// HashGroestl).
func BlockHash(header []byte) chainhash.Hash {
	var h chainhash.Hash
	d := groestlD(header)
	copy(h[:], d[:chainhash.HashSize])
	return h
}

// groestlD is Grøstl-512 applied twice.
func groestlD(b []byte) [groestl.Size]byte {
	first := groestl.Sum512(b)
	return groestl.Sum512(first[:])
}

// checksum4 is the 4-byte checksum of base58check data and P2P messages.
func checksum4(b []byte) [4]byte {
	d := groestlD(b)
	return [4]byte(d[:4])
}
