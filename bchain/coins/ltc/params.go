// Package ltc is the Litecoin coin package: Litecoin's network parameters
// and a block decoder that understands Litecoin Core's MWEB (MimbleWimble
// extension block) serialization, registered as Bitcoin-type networks.
package ltc

import (
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
)

// Network magics (pchMessageStart of Litecoin Core's chainparams, read as
// a little-endian uint32 like btcd's wire.BitcoinNet).
const (
	MainnetMagic wire.BitcoinNet = 0xdbb6c0fb
	TestnetMagic wire.BitcoinNet = 0xf1c8d2fd
	RegtestMagic wire.BitcoinNet = 0xdab5bffa
)

// Genesis block ids (display order) of Litecoin Core's chainparams.
const (
	MainnetGenesis = "12a765e31ffd4059bada1e25190f6e98c99d9714d334efa41a195a7e7e04bfe2"
	TestnetGenesis = "4966625a4b2851d9fdee139e56211a0d88575f59ed816ff5e6a63deb4e3e29a0"
	RegtestGenesis = "530827f38f93b43ed12af0b3ad25a288dc02ed74d6d7857862df51fc56c416f9"
)

// Extended public key versions Blockbook's Litecoin configs accept
// (xpub_magic*). Mainnet P2PKH and P2SH-P2WPKH accounts use Litecoin's
// own prefixes; native SegWit uses zpub's.
const (
	MagicLtub uint32 = 0x019da462 // P2PKH accounts, "Ltub"
	MagicMtub uint32 = 0x01b26ef6 // P2SH-P2WPKH accounts, "Mtub"
	MagicZpub uint32 = 0x04b24746 // P2WPKH accounts, "zpub"
)

// invMWEBBlock is getdata's MSG_MWEB_BLOCK: MSG_WITNESS_BLOCK with
// Litecoin's MSG_MWEB_FLAG (1<<29). Litecoin peers send a block's MWEB
// extension only when asked with it.
const invMWEBBlock = wire.InvTypeWitnessBlock | 1<<29

// The Litecoin networks; parameters are Litecoin Core's chainparams, ports
// those of Blockbook's litecoin*.json (Regtest is ours, see docs/api.md).
// HD key ids, BIP heights and such are Bitcoin's, unused for Litecoin by
// this server; the base58 P2SH version is Litecoin's SCRIPT_ADDRESS2 (M/Q
// addresses), the one Litecoin Core and Blockbook show.
var (
	MainNetParams = btc.DeriveParams(chaincfg.MainNetParams, btc.ParamsSpec{
		Name: "litecoin", Net: MainnetMagic, DefaultPort: "9333", Genesis: MainnetGenesis,
		PubKeyHash: 48, ScriptHash: 50, PrivateKey: 176, HRP: "ltc",
	})
	TestNetParams = btc.DeriveParams(chaincfg.TestNet3Params, btc.ParamsSpec{
		Name: "litecoin-testnet4", Net: TestnetMagic, DefaultPort: "19335", Genesis: TestnetGenesis,
		PubKeyHash: 111, ScriptHash: 58, PrivateKey: 239, HRP: "tltc",
	})
	RegtestParams = btc.DeriveParams(chaincfg.RegressionNetParams, btc.ParamsSpec{
		Name: "litecoin-regtest", Net: RegtestMagic, DefaultPort: "19444", Genesis: RegtestGenesis,
		PubKeyHash: 111, ScriptHash: 58, PrivateKey: 239, HRP: "rltc",
	})
)

// Litecoin Core's nPowTargetTimespan (3.5 days) and nPowTargetSpacing
// (2.5 minutes) on all its networks: a retarget every 2016 blocks, as
// Bitcoin (regtest never retargets, fPowNoRetargeting).
const (
	targetTimespan = 302400 * time.Second
	targetSpacing  = 150 * time.Second
)

func init() {
	for _, p := range []*chaincfg.Params{MainNetParams, TestNetParams, RegtestParams} {
		p.TargetTimespan, p.TargetTimePerBlock = targetTimespan, targetSpacing
	}
}

// Networks maps Blockbook's Litecoin coin names to their networks.
var Networks = map[string]btc.Network{
	"Litecoin": {Params: MainNetParams, Shortcut: "LTC", Label: "Litecoin", Slip44: 2,
		PublicPort: 9134, InternalPort: 9034},
	"Litecoin Testnet": {Params: TestNetParams, Shortcut: "tLTC", Label: "Litecoin Testnet", Slip44: 1, Testnet: true,
		PublicPort: 19134, InternalPort: 19034},
	"Litecoin Regtest": {Params: RegtestParams, Shortcut: "rLTC", Label: "Litecoin Regtest", Slip44: 1, Testnet: true,
		PublicPort: 19184, InternalPort: 19084},
}

func init() {
	// btcd's address decoder recognizes bech32 prefixes of registered
	// networks only. Litecoin's regtest shares Bitcoin regtest's magic, and
	// btcd's registry is keyed by magic, so it is registered under a
	// private key value (the registry is only consulted for prefixes).
	for i, p := range []*chaincfg.Params{MainNetParams, TestNetParams, RegtestParams} {
		reg := *p
		if reg.Net == chaincfg.RegressionNetParams.Net {
			reg.Net = wire.BitcoinNet(0x4c54430 + uint32(i)) // "LTC"+i: not a real network
		}
		if err := chaincfg.Register(&reg); err != nil {
			panic("ltc: registering " + p.Name + ": " + err.Error())
		}
	}
	for name, n := range Networks {
		n.NewParser = func(p *chaincfg.Params, _ *bchain.Config) (bchain.UtxoParser, error) { return NewParser(p), nil }
		n.P2P = btc.P2POptions{BlockInvType: invMWEBBlock}
		n.Adjust = adjust
		n.Retarget = true
		btc.Register(name, n)
	}
}
