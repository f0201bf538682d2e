package bip352

// scan.go: the receiver's side. A wallet that holds b_scan and B_spend
// finds its outputs in a tx from the tx's tweak alone, with one EC
// multiplication per tx.

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/btcsuite/btcd/chainhash/v2"
)

// KMax is the BIP's per-group recipient limit: a scan stops after KMax
// matches of one tx.
const KMax = 2323

// ErrBadKey is a scan or spend key, a label or a tweak that is not valid.
var ErrBadKey = errors.New("bip352: invalid key")

// Scanner finds a wallet's outputs: its scan private key, its spend
// public key and the labels it uses (the change label m = 0 always).
type Scanner struct {
	scan   btcec.ModNScalar
	spend  btcec.JacobianPoint
	labels map[[33]byte]label
}

type label struct {
	m     uint32
	tweak btcec.ModNScalar
}

// Match is one output a scan found: the x-only output key, the private key
// tweak that spends it with b_spend (t_k plus the label's tweak) and the
// label (Labeled false for the unlabeled address).
type Match struct {
	Output  [32]byte
	KeyTwk  [32]byte
	Label   uint32
	Labeled bool
}

// NewScanner makes a scanner from the 32-byte scan private key, the
// 33-byte compressed spend public key and the labels m in use.
func NewScanner(scanPriv []byte, spendPub []byte, labels []uint32) (*Scanner, error) {
	s := &Scanner{labels: map[[33]byte]label{}}
	if len(scanPriv) != 32 || s.scan.SetByteSlice(scanPriv) || s.scan.IsZero() {
		return nil, fmt.Errorf("%w: scan key is not a 32-byte scalar", ErrBadKey)
	}
	k := compressedKey(spendPub)
	if k == nil {
		return nil, fmt.Errorf("%w: spend key is not a compressed point", ErrBadKey)
	}
	k.AsJacobian(&s.spend)
	for _, m := range append([]uint32{0}, labels...) {
		lt, err := LabelTweak(scanPriv, m)
		if err != nil {
			return nil, err
		}
		var p btcec.JacobianPoint
		btcec.ScalarBaseMultNonConst(&lt, &p)
		s.labels[compressed(&p)] = label{m: m, tweak: lt}
	}
	return s, nil
}

// LabelTweak is hash_BIP0352/Label(b_scan ‖ u32be(m)) as a scalar.
func LabelTweak(scanPriv []byte, m uint32) (btcec.ModNScalar, error) {
	var t btcec.ModNScalar
	h := chainhash.TaggedHash([]byte("BIP0352/Label"), scanPriv, binary.BigEndian.AppendUint32(nil, m))
	if t.SetByteSlice(h[:]) || t.IsZero() {
		return t, fmt.Errorf("%w: label %d", ErrBadKey, m)
	}
	return t, nil
}

// compressed serializes a point (which it normalizes).
func compressed(p *btcec.JacobianPoint) [33]byte {
	var out [33]byte
	q := *p
	q.ToAffine()
	copy(out[:], btcec.NewPublicKey(&q.X, &q.Y).SerializeCompressed())
	return out
}

func xonly(p *btcec.JacobianPoint) [32]byte {
	c := compressed(p)
	var out [32]byte
	copy(out[:], c[1:])
	return out
}

// sharedTweak is t_k = hash_BIP0352/SharedSecret(ser(ecdh) ‖ u32be(k)).
func sharedTweak(ecdh []byte, k uint32) (btcec.ModNScalar, error) {
	var t btcec.ModNScalar
	h := chainhash.TaggedHash([]byte("BIP0352/SharedSecret"), ecdh, binary.BigEndian.AppendUint32(nil, k))
	if t.SetByteSlice(h[:]) || t.IsZero() {
		return t, fmt.Errorf("%w: t_%d is not a valid scalar", ErrBadKey, k)
	}
	return t, nil
}

// Scan finds the wallet's outputs among a tx's taproot output keys, given
// the tx's tweak (input_hash·A).
func (s *Scanner) Scan(tweak []byte, outputs [][32]byte) ([]Match, error) {
	tk := compressedKey(tweak)
	if tk == nil {
		return nil, fmt.Errorf("%w: tweak is not a compressed point", ErrBadKey)
	}
	var tp, ecdh btcec.JacobianPoint
	tk.AsJacobian(&tp)
	btcec.ScalarMultNonConst(&s.scan, &tp, &ecdh)
	secret := compressed(&ecdh)
	left := make([]*[32]byte, len(outputs))
	for i := range outputs {
		left[i] = &outputs[i]
	}
	var found []Match
	for k := uint32(0); k < KMax; k++ {
		t, err := sharedTweak(secret[:], k)
		if err != nil {
			return found, err
		}
		var tg, pk btcec.JacobianPoint
		btcec.ScalarBaseMultNonConst(&t, &tg)
		btcec.AddNonConst(&s.spend, &tg, &pk)
		m, at := s.matchOne(&pk, &t, left)
		if at < 0 {
			break
		}
		found = append(found, m)
		left = append(left[:at], left[at+1:]...)
	}
	return found, nil
}

// matchOne looks for P_k among the outputs left, directly or through a
// label (output − P_k, then −output − P_k); at is -1 when none matches.
func (s *Scanner) matchOne(pk *btcec.JacobianPoint, t *btcec.ModNScalar, left []*[32]byte) (Match, int) {
	want := xonly(pk)
	for i, out := range left {
		if *out == want {
			return Match{Output: *out, KeyTwk: t.Bytes()}, i
		}
	}
	var negPk btcec.JacobianPoint
	negPk.Set(pk)
	negPk.ToAffine()
	negPk.Y.Negate(1).Normalize()
	for i, out := range left {
		key, err := schnorr.ParsePubKey(out[:])
		if err != nil {
			continue
		}
		var o btcec.JacobianPoint
		key.AsJacobian(&o)
		for range 2 {
			var d btcec.JacobianPoint
			btcec.AddNonConst(&o, &negPk, &d)
			if !infinity(&d) {
				if l, ok := s.labels[compressed(&d)]; ok {
					var twk btcec.ModNScalar
					twk.Add2(t, &l.tweak)
					return Match{Output: *out, KeyTwk: twk.Bytes(), Label: l.m, Labeled: true}, i
				}
			}
			o.ToAffine()
			o.Y.Negate(1).Normalize() // the other Y of the x-only output
		}
	}
	return Match{}, -1
}
