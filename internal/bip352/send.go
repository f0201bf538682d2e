package bip352

// send.go: the sender's side, which test chains use to pay silent
// payment addresses.

import (
	"fmt"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/chainhash/v2"
)

// SendInput is one input of a tx being built: its outpoint and, for an
// eligible input, its private key (Taproot: the key of a taproot output,
// negated by the BIP when its point has an odd Y). Key is nil for an input
// that takes no part in the shared secret.
type SendInput struct {
	PrevTxid [32]byte // display order
	PrevVout uint32
	Key      *btcec.PrivateKey
	Taproot  bool
}

// Recipient is a silent payment address: the scan key and the (labeled)
// spend key B_m, both compressed.
type Recipient struct {
	Scan, Spend []byte
}

// LabeledSpend is B_m = B_spend + hash_BIP0352/Label(b_scan ‖ m)·G.
func LabeledSpend(scanPriv, spendPub []byte, m uint32) ([]byte, error) {
	b := compressedKey(spendPub)
	if b == nil {
		return nil, fmt.Errorf("%w: spend key", ErrBadKey)
	}
	lt, err := LabelTweak(scanPriv, m)
	if err != nil {
		return nil, err
	}
	var bp, lg, sum btcec.JacobianPoint
	b.AsJacobian(&bp)
	btcec.ScalarBaseMultNonConst(&lt, &lg)
	btcec.AddNonConst(&bp, &lg, &sum)
	c := compressed(&sum)
	return c[:], nil
}

// senderSecret is input_hash·a, from the eligible inputs' private keys
// a_i (taproot ones negated to even Y) and every input's outpoint.
func senderSecret(ins []SendInput) (btcec.ModNScalar, error) {
	var a btcec.ModNScalar
	bip := make([]Input, len(ins))
	for i, in := range ins {
		bip[i] = Input{PrevTxid: in.PrevTxid, PrevVout: in.PrevVout}
		if in.Key == nil {
			continue
		}
		k := in.Key.Key
		if in.Taproot && in.Key.PubKey().SerializeCompressed()[0] == 0x03 {
			k.Negate()
		}
		a.Add(&k)
	}
	if a.IsZero() {
		return a, fmt.Errorf("%w: the inputs' keys sum to zero", ErrBadKey)
	}
	var ag btcec.JacobianPoint
	btcec.ScalarBaseMultNonConst(&a, &ag)
	sumKey := compressed(&ag)
	low := smallestOutpoint(bip)
	var h btcec.ModNScalar
	if h.SetByteSlice(chainhash.TaggedHash([]byte("BIP0352/Inputs"), low[:], sumKey[:])[:]) || h.IsZero() {
		return h, fmt.Errorf("%w: input_hash", ErrBadKey)
	}
	return *h.Mul(&a), nil
}

// SendTweak is the tweak (input_hash·A) of a tx with these inputs, as the
// sender knows it: (input_hash·a)·G.
func SendTweak(ins []SendInput) ([33]byte, error) {
	h, err := senderSecret(ins)
	if err != nil {
		return [33]byte{}, err
	}
	var p btcec.JacobianPoint
	btcec.ScalarBaseMultNonConst(&h, &p)
	return compressed(&p), nil
}

// SendOutputs are the x-only taproot keys paying each recipient in turn
// (recipients sharing a scan key take k = 0, 1, … in their order). More
// than KMax recipients with one scan key fail, as the BIP's sender does.
func SendOutputs(ins []SendInput, rcpts []Recipient) ([][32]byte, error) {
	h, err := senderSecret(ins)
	if err != nil {
		return nil, err
	}
	next := map[[33]byte]uint32{}
	secrets := map[[33]byte][33]byte{} // scan key → ECDH shared secret
	out := make([][32]byte, 0, len(rcpts))
	for _, r := range rcpts {
		sk, bm := compressedKey(r.Scan), compressedKey(r.Spend)
		if sk == nil || bm == nil {
			return nil, fmt.Errorf("%w: recipient keys", ErrBadKey)
		}
		scanKey := [33]byte(r.Scan)
		secret, ok := secrets[scanKey]
		if !ok {
			var sp, ecdh btcec.JacobianPoint
			sk.AsJacobian(&sp)
			btcec.ScalarMultNonConst(&h, &sp, &ecdh)
			secret = compressed(&ecdh)
			secrets[scanKey] = secret
		}
		k := next[scanKey]
		if k == KMax {
			return nil, fmt.Errorf("%w: more than %d recipients share a scan key", ErrBadKey, KMax)
		}
		next[scanKey] = k + 1
		var bmp, tg, p btcec.JacobianPoint
		t, err := sharedTweak(secret[:], k)
		if err != nil {
			return nil, err
		}
		bm.AsJacobian(&bmp)
		btcec.ScalarBaseMultNonConst(&t, &tg)
		btcec.AddNonConst(&bmp, &tg, &p)
		out = append(out, xonly(&p))
	}
	return out, nil
}

// SpendKey is the private key of an output a scan found: b_spend plus the
// match's tweak.
func SpendKey(spend *btcec.PrivateKey, m Match) *btcec.PrivateKey {
	var t btcec.ModNScalar
	t.SetBytes(&m.KeyTwk)
	t.Add(&spend.Key)
	return btcec.PrivKeyFromScalar(&t)
}
