package meshcheck

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/ecdsa"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/btcsuite/btcd/txscript/v2"
	"github.com/btcsuite/btcd/wire/v2"
)

// PublicKey is k's Mesh public key object (compressed secp256k1).
func PublicKey(k *btcec.PrivateKey) map[string]any {
	return map[string]any{"hex_bytes": hex.EncodeToString(k.PubKey().SerializeCompressed()), "curve_type": "secp256k1"}
}

// Sign signs a Mesh signing payload as a signer outside the server does
// (ecdsa, the 64 bytes r ‖ s; or for a schnorr_bip340 payload, a BIP340
// signature by k's BIP86 taproot output key) and returns the Signature
// object.
func Sign(k *btcec.PrivateKey, payload map[string]any) (map[string]any, error) {
	hexBytes, _ := payload["hex_bytes"].(string)
	h, err := hex.DecodeString(hexBytes)
	if err != nil || len(h) != 32 {
		return nil, fmt.Errorf("payload %v is not a 32-byte digest", payload)
	}
	if payload["signature_type"] == "schnorr_bip340" {
		sig, err := schnorr.Sign(txscript.TweakTaprootPrivKey(*k, nil), h)
		if err != nil {
			return nil, err
		}
		return map[string]any{"signing_payload": payload, "public_key": PublicKey(k), "signature_type": "schnorr_bip340",
			"hex_bytes": hex.EncodeToString(sig.Serialize())}, nil
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

// Tx decodes the tx of a construction blob (unsigned_transaction or
// signed_transaction: JSON text whose "transaction" is the tx in hex), as
// a caller does to check what it signs or submits.
func Tx(blob string) (*wire.MsgTx, error) {
	var b struct {
		Transaction string `json:"transaction"`
	}
	if err := json.Unmarshal([]byte(blob), &b); err != nil {
		return nil, fmt.Errorf("construction blob: %w", err)
	}
	raw, err := hex.DecodeString(b.Transaction)
	if err != nil {
		return nil, fmt.Errorf("construction blob's tx: %w", err)
	}
	tx := &wire.MsgTx{}
	if err := tx.Deserialize(bytes.NewReader(raw)); err != nil {
		return nil, fmt.Errorf("construction blob's tx: %w", err)
	}
	return tx, nil
}
