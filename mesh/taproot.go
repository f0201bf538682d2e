package mesh

import (
	"bytes"
	"encoding/hex"
	"errors"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/btcsuite/btcd/txscript/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/internal/bip352"
)

// Taproot key-path spends (BIP341/BIP86): the output key is the internal
// key tweaked with no script tree; a spend's witness is one BIP340
// signature of the BIP341 sighash with SIGHASH_DEFAULT (64 bytes, no
// sighash byte).

// sigSchnorr is the Mesh signature type of BIP340 signatures (the spec's
// schnorr_1 is Zilliqa's scheme, a different one).
const sigSchnorr = "schnorr_bip340"

// curveBIP340 is the Mesh curve of x-only (32-byte) secp256k1 keys.
const curveBIP340 = "secp256k1_bip340"

// spendable is a script the Construction API signs for.
func spendable(script []byte) bool { return isP2WPKH(script) || bip352.IsP2TR(script) }

// parseTaprootKey reads an internal key: secp256k1 compressed (33 bytes)
// or secp256k1_bip340 x-only (32 bytes).
func parseTaprootKey(pk *PublicKey) (*btcec.PublicKey, error) {
	if pk == nil {
		return nil, fail(errBadRequest, "public_key is required")
	}
	raw, err := hex.DecodeString(pk.HexBytes)
	if err != nil {
		return nil, fail(errBadPublicKey, "public key: not hex")
	}
	var key *btcec.PublicKey
	switch {
	case pk.CurveType == "secp256k1" && len(raw) == btcec.PubKeyBytesLenCompressed:
		key, err = btcec.ParsePubKey(raw)
	case pk.CurveType == curveBIP340 && len(raw) == schnorr.PubKeyBytesLen:
		key, err = schnorr.ParsePubKey(raw)
	default:
		return nil, fail(errBadPublicKey, "a taproot key is secp256k1 (33 bytes, compressed) or %s (32 bytes, x-only)", curveBIP340)
	}
	if err != nil {
		return nil, fail(errBadPublicKey, "%v", err)
	}
	return key, nil
}

// p2tr is the key-path-only output script of an internal key.
func p2tr(internal *btcec.PublicKey) []byte {
	out := txscript.ComputeTaprootKeyNoScript(internal)
	return append([]byte{txscript.OP_1, txscript.OP_DATA_32}, schnorr.SerializePubKey(out)...)
}

// taprootWitness checks a BIP340 signature by the output key of the
// signature's internal key, which must be the key the P2TR script pays.
func taprootWitness(sig *Signature, hash, script []byte) (wire.TxWitness, error) {
	if sig.SignatureType != sigSchnorr {
		return nil, errors.New("a taproot input's signature type is " + sigSchnorr)
	}
	internal, err := parseTaprootKey(&sig.PublicKey)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(p2tr(internal), script) {
		return nil, errors.New("the key is not the one the spent output pays")
	}
	raw, err := hex.DecodeString(sig.HexBytes)
	if err != nil || len(raw) != schnorr.SignatureSize {
		return nil, errors.New("not a 64-byte BIP340 signature in hex")
	}
	s, err := schnorr.ParseSignature(raw)
	if err != nil {
		return nil, err
	}
	outKey, _ := schnorr.ParsePubKey(script[2:])
	if outKey == nil || !s.Verify(hash, outKey) {
		return nil, errors.New("the signature does not verify")
	}
	return wire.TxWitness{raw}, nil
}

// sighashes are the digests each input's key signs, with their Mesh
// signature types: BIP143 with SIGHASH_ALL for P2WPKH, BIP341 with
// SIGHASH_DEFAULT for P2TR (which commits to every input's amount and
// script, hence the fetcher over all of them).
func sighashes(tx *wire.MsgTx, scripts [][]byte, amounts []int64) ([][]byte, []string, error) {
	prevs := make(map[wire.OutPoint]*wire.TxOut, len(tx.TxIn))
	for i, in := range tx.TxIn {
		prevs[in.PreviousOutPoint] = wire.NewTxOut(amounts[i], scripts[i])
	}
	if len(prevs) != len(tx.TxIn) {
		return nil, nil, fail(errBadTxBlob, "a coin is spent twice") // readIntent refuses such intents
	}
	fetcher := txscript.NewMultiPrevOutFetcher(prevs)
	hashes := txscript.NewTxSigHashes(tx, fetcher)
	out, types := make([][]byte, len(tx.TxIn)), make([]string, len(tx.TxIn))
	for i := range tx.TxIn {
		var h []byte
		var err error
		if bip352.IsP2TR(scripts[i]) {
			h, err = txscript.CalcTaprootSignatureHash(hashes, txscript.SigHashDefault, tx, i, fetcher)
			types[i] = sigSchnorr
		} else {
			h, err = txscript.CalcWitnessSigHash(scripts[i], hashes, txscript.SigHashAll, tx, i, amounts[i])
			types[i] = "ecdsa"
		}
		if err != nil {
			return nil, nil, err
		}
		out[i] = h
	}
	return out, types, nil
}
