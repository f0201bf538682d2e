package bip352

// address.go: the receiver's static address (BIP352 "Address encoding"),
// which Frigate's Electrum methods answer for a scan and spend key pair.

import (
	"fmt"

	"github.com/btcsuite/btcd/address/v2/bech32"
	"github.com/btcsuite/btcd/btcec/v2"
)

// HRP is the address prefix of a network: "sp" on mainnet, "tsp" on
// testnet and signet, "sprt" on regtest (the prefix wallets use there).
func HRP(network string) string {
	switch network {
	case "main", "mainnet", "":
		return "sp"
	case "regtest":
		return "sprt"
	}
	return "tsp"
}

// Address is the version-0 address of B_scan (derived from the scan
// private key) and B_spend, bech32m with hrp and no length limit.
func Address(hrp string, scanPriv, spendPub []byte) (string, error) {
	if len(scanPriv) != 32 {
		return "", fmt.Errorf("%w: scan key is not 32 bytes", ErrBadKey)
	}
	var sc btcec.ModNScalar
	if sc.SetByteSlice(scanPriv) || sc.IsZero() {
		return "", fmt.Errorf("%w: scan key is not a valid scalar", ErrBadKey)
	}
	if compressedKey(spendPub) == nil {
		return "", fmt.Errorf("%w: spend key is not a compressed point", ErrBadKey)
	}
	priv, _ := btcec.PrivKeyFromBytes(scanPriv)
	payload := append(priv.PubKey().SerializeCompressed(), spendPub...)
	data, err := bech32.ConvertBits(payload, 8, 5, true)
	if err != nil {
		return "", err
	}
	return bech32.EncodeM(hrp, append([]byte{0}, data...))
}
