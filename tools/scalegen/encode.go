package scalegen

import (
	"crypto/sha256"
	"encoding/binary"
)

// Script kinds of generated outputs, in the order they appeared on mainnet.
const (
	kindP2PK uint8 = iota
	kindP2PKH
	kindP2SH // P2SH-wrapped P2WPKH, the common P2SH use
	kindP2WPKH
	kindP2WSH
	kindP2TR
	numKinds
)

var kindNames = [numKinds]string{"p2pk", "p2pkh", "p2sh", "p2wpkh", "p2wsh", "p2tr"}

// Filler for input scripts. Signatures are not checked by the indexer, so
// they only need the right shape and size.
var (
	fakeSig    = append([]byte{0x30, 0x45}, make([]byte, 69)...)               // DER-sized + sighash byte
	fakeSchnor = make([]byte, 64)                                              // taproot key-path signature
	fakeMS     = append(append([]byte{0x52, 0x21}, make([]byte, 33)...), 0x21) // start of a 2-of-3 multisig
)

func init() {
	fakeSig[len(fakeSig)-1] = 0x01
	fakeMS = append(fakeMS, make([]byte, 33)...)
	fakeMS = append(append(fakeMS, 0x21), make([]byte, 33)...)
	fakeMS = append(fakeMS, 0x53, 0xae)
}

// keyBytes fills b with bytes derived from an address id (splitmix64), so
// that every address has its own stable script.
func keyBytes(b []byte, id uint32) {
	x := uint64(id)*0x9e3779b97f4a7c15 + 0x632be59bd9b4e5
	for i := 0; i < len(b); i += 8 {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], z)
		copy(b[i:], w[:])
	}
}

// appendPkScript appends the output script of address id of kind k.
func appendPkScript(dst []byte, k uint8, id uint32) []byte {
	if isAccount(id) { // derived, always P2WPKH
		_, hash := accountKey(id)
		return append(append(dst, 0x00, 0x14), hash[:]...)
	}
	var key [32]byte
	keyBytes(key[:], id)
	switch k {
	case kindP2PK:
		dst = append(dst, 0x21, 0x02)
		dst = append(dst, key[:32]...)
		return append(dst, 0xac)
	case kindP2PKH:
		dst = append(dst, 0x76, 0xa9, 0x14)
		dst = append(dst, key[:20]...)
		return append(dst, 0x88, 0xac)
	case kindP2SH:
		dst = append(dst, 0xa9, 0x14)
		dst = append(dst, key[:20]...)
		return append(dst, 0x87)
	case kindP2WPKH:
		dst = append(dst, 0x00, 0x14)
		return append(dst, key[:20]...)
	case kindP2WSH:
		dst = append(dst, 0x00, 0x20)
		return append(dst, key[:]...)
	default: // P2TR
		dst = append(dst, 0x51, 0x20)
		return append(dst, key[:]...)
	}
}

func pkScriptLen(k uint8) int {
	return [numKinds]int{35, 25, 23, 22, 34, 34}[k]
}

// isWitness reports whether spending kind k needs witness data.
func isWitness(k uint8) bool { return k >= kindP2SH }

func appendVarInt(b []byte, n uint64) []byte {
	switch {
	case n < 0xfd:
		return append(b, byte(n))
	case n <= 0xffff:
		return binary.LittleEndian.AppendUint16(append(b, 0xfd), uint16(n))
	case n <= 0xffffffff:
		return binary.LittleEndian.AppendUint32(append(b, 0xfe), uint32(n))
	}
	return binary.LittleEndian.AppendUint64(append(b, 0xff), n)
}

func appendPush(b, data []byte) []byte {
	return append(append(b, byte(len(data))), data...)
}

// appendScriptSig appends the (length-prefixed) input script spending kind k.
func appendScriptSig(b []byte, k uint8, id uint32) []byte {
	switch k {
	case kindP2PK:
		return appendPush(appendVarInt(b, uint64(1+len(fakeSig))), fakeSig)
	case kindP2PKH:
		var pub [33]byte
		pub[0] = 0x02
		keyBytes(pub[1:], id)
		b = appendVarInt(b, uint64(2+len(fakeSig)+33))
		return appendPush(appendPush(b, fakeSig), pub[:])
	case kindP2SH:
		var redeem [22]byte
		redeem[1] = 0x14
		keyBytes(redeem[2:], id^0x5a5a5a5a)
		b = appendVarInt(b, 23)
		return appendPush(b, redeem[:])
	}
	return append(b, 0) // native segwit: empty script
}

// appendWitness appends the witness stack spending kind k (an empty stack
// for non-witness kinds).
func appendWitness(b []byte, k uint8, id uint32) []byte {
	switch k {
	case kindP2SH, kindP2WPKH:
		var pub [33]byte
		if isAccount(id) {
			pub, _ = accountKey(id)
		} else {
			pub[0] = 0x03
			keyBytes(pub[1:], id)
		}
		return appendPush(appendPush(append(b, 2), fakeSig), pub[:])
	case kindP2WSH:
		b = append(b, 4, 0)
		b = appendPush(appendPush(b, fakeSig), fakeSig)
		return appendPush(b, fakeMS)
	case kindP2TR:
		return appendPush(append(b, 1), fakeSchnor)
	}
	return append(b, 0)
}

// dsha is Bitcoin's double SHA-256.
func dsha(parts ...[]byte) [32]byte {
	h := sha256.New()
	for _, p := range parts {
		h.Write(p)
	}
	var first [32]byte
	h.Sum(first[:0])
	return sha256.Sum256(first[:])
}

// merkleRoot computes the block's merkle root from its txids.
func merkleRoot(ids [][32]byte) [32]byte {
	level := append([][32]byte(nil), ids...)
	var buf [64]byte
	for len(level) > 1 {
		if len(level)%2 == 1 {
			level = append(level, level[len(level)-1])
		}
		next := level[:0]
		for i := 0; i < len(level); i += 2 {
			copy(buf[:32], level[i][:])
			copy(buf[32:], level[i+1][:])
			next = append(next, dsha(buf[:]))
		}
		level = next
	}
	return level[0]
}
