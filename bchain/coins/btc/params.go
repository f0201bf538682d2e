package btc

import (
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/wire/v2"
)

// ParamsSpec is what a Bitcoin-derived coin's network parameters change
// from Bitcoin's of the same kind (mainnet, testnet3, regtest, signet).
// Zero fields keep the base's value, except HRP: empty means the coin has
// no SegWit, and Bitcoin's prefix is cleared so that no Bitcoin address
// passes for one of the coin's.
type ParamsSpec struct {
	Name    string          // the network name, stored in the index
	Net     wire.BitcoinNet // message start, as btcd reads it (little endian)
	Genesis string          // genesis block id, display order

	// Base58 versions of P2PKH and P2SH addresses and of WIF keys.
	PubKeyHash, ScriptHash, PrivateKey byte
	HRP                                string // bech32 prefix of SegWit addresses

	// BIP32 extended key versions and the BIP44 coin type.
	HDPublic, HDPrivate [4]byte
	HDCoinType          uint32

	DefaultPort string // P2P port
}

// DeriveParams returns base with the coin's values of s. Bitcoin's genesis
// block, DNS seeds and checkpoints are dropped: they are not the coin's,
// and nothing here reads them.
func DeriveParams(base chaincfg.Params, s ParamsSpec) *chaincfg.Params {
	p := base
	p.Name, p.Net = s.Name, s.Net
	p.GenesisHash = MustHash(s.Genesis)
	p.GenesisBlock, p.DNSSeeds, p.Checkpoints = nil, nil, nil
	p.Bech32HRPSegwit = s.HRP
	setNonZero(&p.PubKeyHashAddrID, s.PubKeyHash)
	setNonZero(&p.ScriptHashAddrID, s.ScriptHash)
	setNonZero(&p.PrivateKeyID, s.PrivateKey)
	setNonZero(&p.HDPublicKeyID, s.HDPublic)
	setNonZero(&p.HDPrivateKeyID, s.HDPrivate)
	setNonZero(&p.HDCoinType, s.HDCoinType)
	setNonZero(&p.DefaultPort, s.DefaultPort)
	return &p
}

func setNonZero[T comparable](dst *T, v T) {
	var zero T
	if v != zero {
		*dst = v
	}
}

// MustRegisterParams registers networks with btcd, whose address decoder
// knows the bech32 prefixes, and whose key code the extended key versions,
// of registered networks only. It panics (at init) on a clash.
func MustRegisterParams(params ...*chaincfg.Params) {
	for _, p := range params {
		if err := chaincfg.Register(p); err != nil {
			panic(fmt.Sprintf("registering %s: %v", p.Name, err))
		}
	}
}
