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

// SendOutputs are the x-only taproot keys paying each recipient in turn
// (recipients sharing a scan key take k = 0, 1, … in their order).
func SendOutputs(ins []SendInput, rcpts []Recipient) ([][32]byte, error) {
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
		return nil, fmt.Errorf("%w: the inputs' keys sum to zero", ErrBadKey)
	}
	var ag btcec.JacobianPoint
	btcec.ScalarBaseMultNonConst(&a, &ag)
	sumKey := compressed(&ag)
	low := smallestOutpoint(bip)
	var h btcec.ModNScalar
	if h.SetByteSlice(chainhash.TaggedHash([]byte("BIP0352/Inputs"), low[:], sumKey[:])[:]) || h.IsZero() {
		return nil, fmt.Errorf("%w: input_hash", ErrBadKey)
	}
	h.Mul(&a) // input_hash·a
	next := map[[33]byte]uint32{}
	out := make([][32]byte, 0, len(rcpts))
	for _, r := range rcpts {
		sk, bm := compressedKey(r.Scan), compressedKey(r.Spend)
		if sk == nil || bm == nil {
			return nil, fmt.Errorf("%w: recipient keys", ErrBadKey)
		}
		var sp, ecdh, bmp, tg, p btcec.JacobianPoint
		sk.AsJacobian(&sp)
		btcec.ScalarMultNonConst(&h, &sp, &ecdh)
		secret := compressed(&ecdh)
		var scanKey [33]byte
		copy(scanKey[:], r.Scan)
		k := next[scanKey]
		next[scanKey] = k + 1
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
