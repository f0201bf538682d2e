package zec

import (
	"encoding/binary"
	"math/bits"
)

// BLAKE2b-256 with a 16-byte personalization, as ZIP-244 hashes tx parts.
// golang.org/x/crypto/blake2b has no personalization parameter, so the
// function is written here from RFC 7693 (unkeyed, 32-byte digest).

var blakeIV = [8]uint64{
	0x6a09e667f3bcc908, 0xbb67ae8584caa73b, 0x3c6ef372fe94f82b, 0xa54ff53a5f1d36f1,
	0x510e527fade682d1, 0x9b05688c2b3e6c1f, 0x1f83d9abfb41bd6b, 0x5be0cd19137e2179,
}

var blakeSigma = [12][16]byte{
	{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
	{14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
	{11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
	{7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
	{9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
	{2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
	{12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
	{13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
	{6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
	{10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
	{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
	{14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
}

// blake2bState is an incremental BLAKE2b hasher for one digest.
type blake2bState struct {
	h     [8]uint64
	t     uint64 // bytes compressed so far (messages here stay far below 2^64)
	buf   [128]byte
	n     int // bytes waiting in buf
	outSz int
}

// newBlake2b starts a BLAKE2b hash of outSz bytes (1..64) with a 16-byte
// personalization (the parameter block's last two words).
func newBlake2b(outSz int, person []byte) *blake2bState {
	s := &blake2bState{h: blakeIV, outSz: outSz}
	s.h[0] ^= 0x01010000 ^ uint64(outSz)
	var p [16]byte
	copy(p[:], person)
	s.h[6] ^= binary.LittleEndian.Uint64(p[0:8])
	s.h[7] ^= binary.LittleEndian.Uint64(p[8:16])
	return s
}

// Write adds data; it never fails.
func (s *blake2bState) Write(data []byte) (int, error) {
	total := len(data)
	for len(data) > 0 {
		// The last block must be compressed with the final flag, so a full
		// buffer is only compressed once more data arrives.
		if s.n == len(s.buf) {
			s.t += uint64(len(s.buf))
			s.compress(s.buf[:], false)
			s.n = 0
		}
		k := copy(s.buf[s.n:], data)
		s.n += k
		data = data[k:]
	}
	return total, nil
}

// Sum finishes the hash; the state must not be used afterwards.
func (s *blake2bState) Sum() []byte {
	s.t += uint64(s.n)
	clear(s.buf[s.n:])
	s.compress(s.buf[:], true)
	out := make([]byte, 64)
	for i, w := range s.h {
		binary.LittleEndian.PutUint64(out[i*8:], w)
	}
	return out[:s.outSz]
}

func (s *blake2bState) compress(block []byte, last bool) {
	var m [16]uint64
	for i := range m {
		m[i] = binary.LittleEndian.Uint64(block[i*8:])
	}
	var v [16]uint64
	copy(v[:8], s.h[:])
	copy(v[8:], blakeIV[:])
	v[12] ^= s.t
	if last {
		v[14] = ^v[14]
	}
	g := func(a, b, c, d int, x, y uint64) {
		v[a] += v[b] + x
		v[d] = bits.RotateLeft64(v[d]^v[a], -32)
		v[c] += v[d]
		v[b] = bits.RotateLeft64(v[b]^v[c], -24)
		v[a] += v[b] + y
		v[d] = bits.RotateLeft64(v[d]^v[a], -16)
		v[c] += v[d]
		v[b] = bits.RotateLeft64(v[b]^v[c], -63)
	}
	for r := range 12 {
		sg := &blakeSigma[r]
		g(0, 4, 8, 12, m[sg[0]], m[sg[1]])
		g(1, 5, 9, 13, m[sg[2]], m[sg[3]])
		g(2, 6, 10, 14, m[sg[4]], m[sg[5]])
		g(3, 7, 11, 15, m[sg[6]], m[sg[7]])
		g(0, 5, 10, 15, m[sg[8]], m[sg[9]])
		g(1, 6, 11, 12, m[sg[10]], m[sg[11]])
		g(2, 7, 8, 13, m[sg[12]], m[sg[13]])
		g(3, 4, 9, 14, m[sg[14]], m[sg[15]])
	}
	for i := range 8 {
		s.h[i] ^= v[i] ^ v[i+8]
	}
}

// personalHash is BLAKE2b-256 of the concatenated parts under person.
func personalHash(person string, parts ...[]byte) []byte {
	s := newBlake2b(32, []byte(person))
	for _, p := range parts {
		_, _ = s.Write(p)
	}
	return s.Sum()
}
