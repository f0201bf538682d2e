package electrumwallet

import (
	"fmt"

	"github.com/btcsuite/btcd/btcutil/v2/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg/v2"
)

// Electrum's SLIP-132 versions of extended keys on test networks (regtest
// included), by BIP32 purpose: the version tells Electrum the script type
// of a restored master key (tprv/tpub P2PKH, uprv/upub P2SH-P2WPKH,
// vprv/vpub P2WPKH).
var testVersions = map[uint32][2][4]byte{
	44: {{0x04, 0x35, 0x83, 0x94}, {0x04, 0x35, 0x87, 0xcf}},
	49: {{0x04, 0x4a, 0x4e, 0x28}, {0x04, 0x4a, 0x52, 0x62}},
	84: {{0x04, 0x5f, 0x18, 0xbc}, {0x04, 0x5f, 0x1c, 0xf6}},
}

// AccountKey derives the BIP32 account key m/purpose'/coin'/account' of
// seed on a test network and encodes it as Electrum restores it: the
// extended private key when private is set (a wallet that can sign),
// else the public one (watch-only). Electrum derives receive and change
// addresses below it (…/0/i and …/1/i), as BIP44/49/84 wallets do.
func AccountKey(params *chaincfg.Params, seed []byte, purpose, account uint32, private bool) (string, error) {
	v, ok := testVersions[purpose]
	if !ok {
		return "", fmt.Errorf("electrumwallet: purpose %d has no Electrum key version (44, 49 or 84)", purpose)
	}
	k, err := hdkeychain.NewMaster(seed, params)
	if err != nil {
		return "", fmt.Errorf("electrumwallet: master key: %w", err)
	}
	for _, step := range []uint32{purpose, params.HDCoinType, account} {
		if k, err = k.Derive(hdkeychain.HardenedKeyStart + step); err != nil {
			return "", fmt.Errorf("electrumwallet: derive: %w", err)
		}
	}
	version := v[0][:]
	if !private {
		if k, err = k.Neuter(); err != nil {
			return "", err
		}
		version = v[1][:]
	}
	if k, err = k.CloneWithVersion(version); err != nil {
		return "", err
	}
	return k.String(), nil
}
