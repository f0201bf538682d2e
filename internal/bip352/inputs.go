// Package bip352 is the Silent Payments (BIP352) arithmetic that an index
// server and a light wallet share: which inputs of a tx carry a public key
// for the shared secret, the tx's tweak (input_hash·A), and the receiver's
// scan of a tx's taproot outputs with a scan key, a spend key and labels,
// plus the sender's side for test chains. It knows nothing of the store:
// db/optional/silentpayments feeds it the index's txs and prevouts.
package bip352

import (
	"bytes"

	"github.com/btcsuite/btcd/address/v2"
	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/btcsuite/btcd/chainhash/v2"
)

// Input is one input of a tx as the BIP reads it: its outpoint, its
// scriptSig and witness, and the script of the output it spends.
type Input struct {
	PrevTxid   [32]byte // display order (the reverse of the serialized bytes)
	PrevVout   uint32
	ScriptSig  []byte
	Witness    [][]byte
	PrevScript []byte
}

// numsH is BIP341's NUMS point H (x-only): a taproot input whose control
// block names it as the internal key is left out of the sum.
var numsH = [32]byte{
	0x50, 0x92, 0x9b, 0x74, 0xc1, 0xa0, 0x49, 0x54, 0xb7, 0x8b, 0x4b, 0x60, 0x35, 0xe9, 0x7a, 0x5e,
	0x07, 0x8a, 0x5a, 0x0f, 0x28, 0xec, 0x96, 0xd5, 0x47, 0xbf, 0xee, 0x9a, 0xce, 0x80, 0x3a, 0xc0,
}

func isP2PKH(s []byte) bool {
	return len(s) == 25 && s[0] == 0x76 && s[1] == 0xa9 && s[2] == 0x14 && s[23] == 0x88 && s[24] == 0xac
}

func isP2SH(s []byte) bool {
	return len(s) == 23 && s[0] == 0xa9 && s[1] == 0x14 && s[22] == 0x87
}

func isP2WPKH(s []byte) bool { return len(s) == 22 && s[0] == 0x00 && s[1] == 0x14 }

// IsP2TR reports whether s is a taproot output script (OP_1 <32 bytes>).
func IsP2TR(s []byte) bool { return len(s) == 34 && s[0] == 0x51 && s[1] == 0x20 }

// UnknownWitness reports whether s is a witness program of version 2 to
// 16: a tx spending one is not scanned (the BIP's upgrade path).
func UnknownWitness(s []byte) bool {
	if len(s) < 4 || len(s) > 42 || s[0] < 0x52 || s[0] > 0x60 {
		return false
	}
	return int(s[1]) == len(s)-2
}

// compressedKey parses a 33-byte compressed key; uncompressed and hybrid
// keys are not eligible.
func compressedKey(b []byte) *btcec.PublicKey {
	if len(b) != 33 || (b[0] != 0x02 && b[0] != 0x03) {
		return nil
	}
	k, err := btcec.ParsePubKey(b)
	if err != nil {
		return nil
	}
	return k
}

// InputKey is the public key the input contributes to the tx's sum, or
// nil when the input is not of an eligible kind or carries no valid
// compressed key.
func InputKey(in *Input) *btcec.PublicKey {
	s := in.PrevScript
	switch {
	case isP2PKH(s):
		return p2pkhKey(in.ScriptSig, s[3:23])
	case isP2SH(s):
		// Only a scriptSig that is exactly a push of a P2WPKH program.
		if len(in.ScriptSig) == 23 && in.ScriptSig[0] == 22 && isP2WPKH(in.ScriptSig[1:]) {
			return lastWitnessKey(in.Witness)
		}
	case isP2WPKH(s):
		return lastWitnessKey(in.Witness)
	case IsP2TR(s):
		return taprootKey(in.Witness, s[2:])
	}
	return nil
}

// p2pkhKey finds the compressed key whose hash the output names anywhere
// in the scriptSig, from its end: the BIP asks for it even in a malleated
// scriptSig (a key hashing to the output's hash is the signing key).
func p2pkhKey(sig, hash []byte) *btcec.PublicKey {
	for end := len(sig); end >= 33; end-- {
		cand := sig[end-33 : end]
		if bytes.Equal(address.Hash160(cand), hash) {
			if k := compressedKey(cand); k != nil {
				return k
			}
		}
	}
	return nil
}

func lastWitnessKey(w [][]byte) *btcec.PublicKey {
	if len(w) == 0 {
		return nil
	}
	return compressedKey(w[len(w)-1])
}

// taprootKey is the output key of a taproot prevout, for key and script
// path spends alike, except a script path whose internal key is H.
func taprootKey(w [][]byte, xonly []byte) *btcec.PublicKey {
	if len(w) == 0 {
		return nil
	}
	if len(w) > 1 && len(w[len(w)-1]) > 0 && w[len(w)-1][0] == 0x50 {
		w = w[:len(w)-1] // the annex
	}
	if len(w) > 1 {
		cb := w[len(w)-1]
		if len(cb) >= 33 && bytes.Equal(cb[1:33], numsH[:]) {
			return nil
		}
	}
	k, err := schnorr.ParsePubKey(xonly)
	if err != nil {
		return nil
	}
	return k
}

// Tweak is a tx's tweak: input_hash·A, where A is the sum of its eligible
// inputs' keys and input_hash the tagged hash of its smallest outpoint and
// A, in compressed form. ok is false when the tx is not scanned: no
// eligible input, an input spending a witness version above 1, A at
// infinity, or an input_hash that is no valid scalar. The caller checks
// that the tx has a taproot output.
func Tweak(ins []Input) (tweak [33]byte, ok bool) {
	var sum btcec.JacobianPoint
	have := false
	for i := range ins {
		if UnknownWitness(ins[i].PrevScript) {
			return tweak, false
		}
		k := InputKey(&ins[i])
		if k == nil {
			continue
		}
		var p btcec.JacobianPoint
		k.AsJacobian(&p)
		if !have {
			sum, have = p, true
			continue
		}
		btcec.AddNonConst(&sum, &p, &sum)
	}
	if !have || infinity(&sum) {
		return tweak, false
	}
	sum.ToAffine()
	a := btcec.NewPublicKey(&sum.X, &sum.Y).SerializeCompressed()
	low := smallestOutpoint(ins)
	var h btcec.ModNScalar
	if overflow := h.SetByteSlice(chainhash.TaggedHash([]byte("BIP0352/Inputs"), low[:], a)[:]); overflow || h.IsZero() {
		return tweak, false
	}
	var t btcec.JacobianPoint
	btcec.ScalarMultNonConst(&h, &sum, &t)
	t.ToAffine()
	copy(tweak[:], btcec.NewPublicKey(&t.X, &t.Y).SerializeCompressed())
	return tweak, true
}

func infinity(p *btcec.JacobianPoint) bool {
	return (p.X.IsZero() && p.Y.IsZero()) || p.Z.IsZero()
}

// smallestOutpoint is the lexicographically smallest serialized outpoint
// (txid in serialized order ‖ u32le(vout)) among all the tx's inputs.
func smallestOutpoint(ins []Input) [36]byte {
	var best [36]byte
	for i := range ins {
		var o [36]byte
		for j := range 32 {
			o[j] = ins[i].PrevTxid[31-j]
		}
		v := ins[i].PrevVout
		o[32], o[33], o[34], o[35] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
		if i == 0 || bytes.Compare(o[:], best[:]) < 0 {
			best = o
		}
	}
	return best
}
