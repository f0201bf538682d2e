package runestone

import "errors"

// The runestone varint is unsigned LEB128 of at most 19 bytes holding a
// 128-bit value: 7 bits a byte, low first, the high bit set on every byte
// but the last.
var (
	errOverlong     = errors.New("varint too long")
	errOverflow     = errors.New("varint overflows 128 bits")
	errUnterminated = errors.New("varint unterminated")
)

// DecodeVarint reads one varint from the front of b: its value and length.
func DecodeVarint(b []byte) (U128, int, error) {
	var n U128
	for i, c := range b {
		if i > 18 {
			return U128{}, 0, errOverlong
		}
		v := uint64(c & 0x7f)
		// the 19th byte brings bits 126..132: only its 2 low bits fit
		if i == 18 && v&0x7c != 0 {
			return U128{}, 0, errOverflow
		}
		shift := uint(7 * i)
		switch {
		case shift < 64:
			n.Lo |= v << shift
			if shift > 57 {
				n.Hi |= v >> (64 - shift)
			}
		default:
			n.Hi |= v << (shift - 64)
		}
		if c&0x80 == 0 {
			return n, i + 1, nil
		}
	}
	return U128{}, 0, errUnterminated
}

// AppendVarint appends the varint of n to b.
func AppendVarint(b []byte, n U128) []byte {
	for n.Hi != 0 || n.Lo >= 0x80 {
		b = append(b, byte(n.Lo)|0x80)
		n.Lo = n.Lo>>7 | n.Hi<<57
		n.Hi >>= 7
	}
	return append(b, byte(n.Lo))
}
