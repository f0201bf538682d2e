// Package groestl implements the Grøstl-512 hash function (the final,
// tweaked version submitted to the SHA-3 competition), which Groestlcoin
// uses for block ids and base58 checksums.
//
// The state is an 8×16 byte matrix filled column by column; a 128-byte
// message block m updates the chaining value h as P(h⊕m) ⊕ Q(m) ⊕ h, and
// the digest is the last 64 bytes of P(h) ⊕ h. P and Q are 14 rounds of
// AddRoundConstant, SubBytes (the AES S-box), ShiftBytes and MixBytes.
package groestl

import (
	"encoding/binary"
	"hash"
)

const (
	// Size is the length of a Grøstl-512 digest in bytes.
	Size = 64
	// BlockSize is Grøstl-512's message block length in bytes.
	BlockSize = 128
	rows      = 8
	cols      = 16
	rounds    = 14
)

// state holds the matrix as 16 columns, row 0 in each column's most
// significant byte: message byte i is row i%8 of column i/8.
type state [cols]uint64

func load(b []byte) state {
	var s state
	for c := range s {
		s[c] = binary.BigEndian.Uint64(b[c*rows:])
	}
	return s
}

type digest struct {
	h      state
	buf    [BlockSize]byte
	n      int    // bytes buffered in buf
	blocks uint64 // message blocks compressed so far
}

// New returns a Grøstl-512 hash.
func New() hash.Hash {
	d := &digest{}
	d.Reset()
	return d
}

// Sum512 returns the Grøstl-512 digest of data.
func Sum512(data []byte) [Size]byte {
	d := &digest{}
	d.Reset()
	d.write(data)
	var out [Size]byte
	d.Sum(out[:0])
	return out
}

func (d *digest) Size() int      { return Size }
func (d *digest) BlockSize() int { return BlockSize }

// Reset sets the chaining value to the IV: the digest length in bits
// (512) as a big-endian number in the last bytes of an all-zero state.
func (d *digest) Reset() {
	d.h = state{}
	d.h[cols-1] = Size * 8
	d.n, d.blocks = 0, 0
}

// Write absorbs p; it never fails.
func (d *digest) Write(p []byte) (int, error) {
	d.write(p)
	return len(p), nil
}

func (d *digest) write(p []byte) {
	if d.n > 0 {
		k := copy(d.buf[d.n:], p)
		d.n += k
		p = p[k:]
		if d.n < BlockSize {
			return
		}
		d.compress(d.buf[:])
		d.n = 0
	}
	for len(p) >= BlockSize {
		d.compress(p[:BlockSize])
		p = p[BlockSize:]
	}
	d.n = copy(d.buf[:], p)
}

// Sum appends the digest of what was written so far; d is unchanged.
func (d *digest) Sum(in []byte) []byte {
	c := *d
	// Padding: a 1 bit, zeros, and the number of blocks (padding
	// included) as a 64-bit big-endian number ending the last block.
	var pad [2 * BlockSize]byte
	pad[0] = 0x80
	padLen := BlockSize - c.n
	if padLen < 9 {
		padLen += BlockSize
	}
	blocks := c.blocks + uint64((c.n+padLen)/BlockSize)
	binary.BigEndian.PutUint64(pad[padLen-8:padLen], blocks)
	c.write(pad[:padLen])
	// Output transformation: the last 512 bits of P(h) ⊕ h.
	x := c.h
	permute(&x, false)
	for i := cols - Size/rows; i < cols; i++ {
		in = binary.BigEndian.AppendUint64(in, x[i]^c.h[i])
	}
	return in
}

// compress applies f(h, m) = P(h⊕m) ⊕ Q(m) ⊕ h to one message block.
func (d *digest) compress(m []byte) {
	q := load(m)
	var p state
	for i := range p {
		p[i] = d.h[i] ^ q[i]
	}
	permute(&p, false)
	permute(&q, true)
	for i := range d.h {
		d.h[i] ^= p[i] ^ q[i]
	}
	d.blocks++
}

// Row shifts of the 1024-bit permutations P and Q: row i rotates left by
// shift[i] columns.
var (
	shiftP = [rows]int{0, 1, 2, 3, 4, 5, 6, 11}
	shiftQ = [rows]int{1, 3, 5, 11, 0, 2, 4, 6}
	// srcP[c][i] / srcQ[c][i]: the column whose row i lands in column c.
	srcP, srcQ [cols][rows]int
)

// permute applies P (q false) or Q (q true) in place. Each round adds the
// round constant, then SubBytes, ShiftBytes and MixBytes go together
// through the column tables: the new column c is the XOR over rows i of
// table[i][S-box input from row i of column c+shift[i]].
func permute(s *state, q bool) {
	src := &srcP
	if q {
		src = &srcQ
	}
	var t state
	for r := uint64(0); r < rounds; r++ {
		// AddRoundConstant: P XORs (column<<4)^round into row 0; Q
		// complements every byte and XORs (column<<4)^round into row 7.
		for c := range s {
			k := uint64(c)<<4 ^ r
			if q {
				s[c] ^= ^k
			} else {
				s[c] ^= k << 56
			}
		}
		for c := range t {
			sc := &src[c]
			t[c] = table[0][byte(s[sc[0]]>>56)] ^ table[1][byte(s[sc[1]]>>48)] ^
				table[2][byte(s[sc[2]]>>40)] ^ table[3][byte(s[sc[3]]>>32)] ^
				table[4][byte(s[sc[4]]>>24)] ^ table[5][byte(s[sc[5]]>>16)] ^
				table[6][byte(s[sc[6]]>>8)] ^ table[7][byte(s[sc[7]])]
		}
		*s = t
	}
}

// table[i][x] is the column MixBytes makes of S-box(x) in row i (zeros
// elsewhere): output row k gets mixRow[(i-k) mod 8]·S(x).
var table [rows][256]uint64

func init() {
	buildSbox()
	for c := 0; c < cols; c++ {
		for i := 0; i < rows; i++ {
			srcP[c][i] = (c + shiftP[i]) % cols
			srcQ[c][i] = (c + shiftQ[i]) % cols
		}
	}
	for i := 0; i < rows; i++ {
		for x := 0; x < 256; x++ {
			var v uint64
			for k := 0; k < rows; k++ {
				v |= uint64(gmul(mixRow[(i-k+rows)%rows], sbox[x])) << (56 - 8*k)
			}
			table[i][x] = v
		}
	}
}

// mixRow is the first row of the MixBytes circulant matrix; row i is it
// rotated right by i.
var mixRow = [rows]byte{2, 2, 3, 4, 5, 3, 5, 7}

// sbox is the AES S-box, built from its definition: the inverse in
// GF(2^8) (0 for 0) followed by the AES affine map.
var sbox [256]byte

func buildSbox() {
	for x := 0; x < 256; x++ {
		var inv byte
		for y := 1; x != 0 && y < 256; y++ {
			if gmul(byte(x), byte(y)) == 1 {
				inv = byte(y)
				break
			}
		}
		s := inv ^ rotl(inv, 1) ^ rotl(inv, 2) ^ rotl(inv, 3) ^ rotl(inv, 4) ^ 0x63
		sbox[x] = s
	}
}

func rotl(b byte, n uint) byte { return b<<n | b>>(8-n) }

// gmul multiplies in GF(2^8) modulo x^8+x^4+x^3+x+1.
func gmul(a, b byte) byte {
	var p byte
	for b != 0 {
		if b&1 != 0 {
			p ^= a
		}
		hi := a & 0x80
		a <<= 1
		if hi != 0 {
			a ^= 0x1b
		}
		b >>= 1
	}
	return p
}
