package meshcheck

import (
	"encoding/hex"
	"fmt"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/ecdsa"
)

// PublicKey is k's Mesh public key object (compressed secp256k1).
func PublicKey(k *btcec.PrivateKey) map[string]any {
	return map[string]any{"hex_bytes": hex.EncodeToString(k.PubKey().SerializeCompressed()), "curve_type": "secp256k1"}
}

// Sign signs a Mesh signing payload as a signer outside the server does
// (ecdsa, the 64 bytes r ‖ s) and returns the Signature object.
func Sign(k *btcec.PrivateKey, payload map[string]any) (map[string]any, error) {
	hexBytes, _ := payload["hex_bytes"].(string)
	h, err := hex.DecodeString(hexBytes)
	if err != nil || len(h) != 32 {
		return nil, fmt.Errorf("payload %v is not a 32-byte digest", payload)
	}
	compact := ecdsa.SignCompact(k, h, true) // recovery byte ‖ r ‖ s
	return map[string]any{"signing_payload": payload, "public_key": PublicKey(k), "signature_type": "ecdsa",
		"hex_bytes": hex.EncodeToString(compact[1:])}, nil
}

// IntentOp is an intent operation of the Construction API: typ INPUT with
// the coin it spends (a negative value), or OUTPUT (coin "").
func IntentOp(index int, typ, account string, value int64, coin string, currency map[string]any) map[string]any {
	o := map[string]any{"operation_identifier": map[string]any{"index": index}, "type": typ,
		"account": map[string]any{"address": account}, "amount": map[string]any{"value": fmt.Sprint(value), "currency": currency}}
	if coin != "" {
		o["coin_change"] = map[string]any{"coin_identifier": map[string]any{"identifier": coin}, "coin_action": "coin_spent"}
	}
	return o
}
