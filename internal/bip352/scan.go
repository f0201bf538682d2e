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
	// left holds the outputs not matched yet, by key (a key may repeat).
	left := make(map[[32]byte]int, len(outputs))
	for _, o := range outputs {
		left[o]++
	}
	var found []Match
	for k := uint32(0); k < KMax && len(left) > 0; k++ {
		t, err := sharedTweak(secret[:], k)
		if err != nil {
			return found, err
		}
		var tg, pk btcec.JacobianPoint
		btcec.ScalarBaseMultNonConst(&t, &tg)
		btcec.AddNonConst(&s.spend, &tg, &pk)
		m, ok := s.matchOne(&pk, &t, outputs, left)
		if !ok {
			break
		}
		found = append(found, m)
		if left[m.Output]--; left[m.Output] == 0 {
			delete(left, m.Output)
		}
	}
	return found, nil
}

// matchOne looks for P_k among the outputs left, directly or through a
// label (output − P_k, then −output − P_k), in the outputs' order.
func (s *Scanner) matchOne(pk *btcec.JacobianPoint, t *btcec.ModNScalar, outputs [][32]byte, left map[[32]byte]int) (Match, bool) {
	if want := xonly(pk); left[want] > 0 {
		return Match{Output: want, KeyTwk: t.Bytes()}, true
	}
	var negPk btcec.JacobianPoint
	negPk.Set(pk)
	negPk.ToAffine()
	negPk.Y.Negate(1).Normalize()
	for _, out := range outputs {
		if left[out] == 0 {
			continue
		}
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
					return Match{Output: out, KeyTwk: twk.Bytes(), Label: l.m, Labeled: true}, true
				}
			}
			o.ToAffine()
			o.Y.Negate(1).Normalize() // the other Y of the x-only output
		}
	}
	return Match{}, false
}
