package runestone

import (
	"errors"
	"math/big"
	"math/bits"
)

// U128 is an unsigned 128-bit integer, the width of every runestone
// integer (amounts, rune names, tags).
type U128 struct{ Hi, Lo uint64 }

// U64 makes a U128 of a uint64.
func U64(v uint64) U128 { return U128{Lo: v} }

// IsZero reports whether u is 0.
func (u U128) IsZero() bool { return u.Hi == 0 && u.Lo == 0 }

// Cmp compares u and v: -1, 0 or 1.
func (u U128) Cmp(v U128) int {
	switch {
	case u.Hi < v.Hi || (u.Hi == v.Hi && u.Lo < v.Lo):
		return -1
	case u == v:
		return 0
	}
	return 1
}

// Add returns u+v and whether it did not overflow.
func (u U128) Add(v U128) (U128, bool) {
	lo, c := bits.Add64(u.Lo, v.Lo, 0)
	hi, c := bits.Add64(u.Hi, v.Hi, c)
	return U128{hi, lo}, c == 0
}

// Sub returns u-v and whether it did not underflow.
func (u U128) Sub(v U128) (U128, bool) {
	lo, b := bits.Sub64(u.Lo, v.Lo, 0)
	hi, b := bits.Sub64(u.Hi, v.Hi, b)
	return U128{hi, lo}, b == 0
}

// Mul returns u*v and whether it did not overflow.
func (u U128) Mul(v U128) (U128, bool) {
	if u.Hi != 0 && v.Hi != 0 {
		return U128{}, false
	}
	hi, lo := bits.Mul64(u.Lo, v.Lo)
	h1, l1 := bits.Mul64(u.Hi, v.Lo)
	h2, l2 := bits.Mul64(u.Lo, v.Hi)
	if h1 != 0 || h2 != 0 {
		return U128{}, false
	}
	hi, c1 := bits.Add64(hi, l1, 0)
	hi, c2 := bits.Add64(hi, l2, 0)
	return U128{hi, lo}, c1 == 0 && c2 == 0
}

// DivMod64 divides u by a non-zero d.
func (u U128) DivMod64(d uint64) (q U128, r uint64) {
	q.Hi, r = bits.Div64(0, u.Hi, d)
	q.Lo, r = bits.Div64(r, u.Lo, d)
	return q, r
}

// Uint64 returns u and whether it fits a uint64.
func (u U128) Uint64() (uint64, bool) { return u.Lo, u.Hi == 0 }

// Big returns u as a big.Int.
func (u U128) Big() *big.Int {
	b := new(big.Int).SetUint64(u.Hi)
	b.Lsh(b, 64)
	return b.Or(b, new(big.Int).SetUint64(u.Lo))
}

// String is u in decimal.
func (u U128) String() string { return u.Big().String() }

// MarshalJSON writes u as a decimal string: JSON numbers lose precision
// past 2^53 in most readers.
func (u U128) MarshalJSON() ([]byte, error) { return []byte(`"` + u.String() + `"`), nil }

var errU128 = errors.New("not an unsigned 128-bit decimal integer")

// ParseU128 reads a decimal U128.
func ParseU128(s string) (U128, error) {
	b, ok := new(big.Int).SetString(s, 10)
	if !ok || b.Sign() < 0 || b.BitLen() > 128 || s == "" || s[0] == '+' {
		return U128{}, errU128
	}
	lo := new(big.Int).And(b, new(big.Int).SetUint64(^uint64(0)))
	return U128{Hi: new(big.Int).Rsh(b, 64).Uint64(), Lo: lo.Uint64()}, nil
}

// MaxU128 is 2^128-1.
var MaxU128 = U128{^uint64(0), ^uint64(0)}
