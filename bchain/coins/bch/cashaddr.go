package bch

import (
	"errors"
	"fmt"
	"strings"
)

// CashAddr (the Bitcoin Cash address format): a human-readable prefix, a
// colon, then base32 of a version byte and a hash, followed by a 40-bit
// BCH-code checksum over the prefix and the payload.

const cashAlphabet = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"

var cashIndex = func() [128]int8 {
	var t [128]int8
	for i := range t {
		t[i] = -1
	}
	for i, c := range cashAlphabet {
		t[c] = int8(i)
	}
	return t
}()

// CashAddr address types (the version byte's bits 3-6).
const (
	cashP2PKH          = 0
	cashP2SH           = 1
	cashTokenP2PKH     = 2 // token-aware P2PKH (CashTokens wallets)
	cashTokenP2SH      = 3 // token-aware P2SH
	cashChecksumLength = 8
)

// cashHashSizes maps the version byte's size bits to the hash length.
var cashHashSizes = [8]int{20, 24, 28, 32, 40, 48, 56, 64}

func cashPolymod(values []byte) uint64 {
	c := uint64(1)
	for _, d := range values {
		c0 := byte(c >> 35)
		c = ((c & 0x07ffffffff) << 5) ^ uint64(d)
		if c0&0x01 != 0 {
			c ^= 0x98f2bc8e61
		}
		if c0&0x02 != 0 {
			c ^= 0x79b76d99e2
		}
		if c0&0x04 != 0 {
			c ^= 0xf33e5fb3c4
		}
		if c0&0x08 != 0 {
			c ^= 0xae2eabe2a8
		}
		if c0&0x10 != 0 {
			c ^= 0x1e4f43e470
		}
	}
	return c ^ 1
}

// prefixValues is the checksum input of a prefix: the low 5 bits of each
// character and a zero separator.
func prefixValues(prefix string) []byte {
	out := make([]byte, 0, len(prefix)+1)
	for i := 0; i < len(prefix); i++ {
		out = append(out, prefix[i]&0x1f)
	}
	return append(out, 0)
}

// convertBits regroups a byte slice of from-bit values into to-bit values.
func convertBits(data []byte, from, to uint, pad bool) ([]byte, error) {
	var acc, bits uint
	maxv := uint(1)<<to - 1
	out := make([]byte, 0, len(data)*int(from)/int(to)+1)
	for _, v := range data {
		if uint(v)>>from != 0 {
			return nil, errors.New("invalid data range")
		}
		acc = acc<<from | uint(v)
		bits += from
		for bits >= to {
			bits -= to
			out = append(out, byte(acc>>bits&maxv))
		}
	}
	if pad {
		if bits > 0 {
			out = append(out, byte(acc<<(to-bits)&maxv))
		}
	} else if bits >= from || acc<<(to-bits)&maxv != 0 {
		return nil, errors.New("invalid padding")
	}
	return out, nil
}

// encodeCashAddr encodes a hash of an address type under prefix (without
// the colon). The hash length must be one CashAddr defines.
func encodeCashAddr(prefix string, typ byte, hash []byte) string {
	size := -1
	for i, n := range cashHashSizes {
		if n == len(hash) {
			size = i
		}
	}
	if size < 0 {
		return ""
	}
	payload, _ := convertBits(append([]byte{typ<<3 | byte(size)}, hash...), 8, 5, true)
	values := append(prefixValues(prefix), payload...)
	sum := cashPolymod(append(values, make([]byte, cashChecksumLength)...))
	var b strings.Builder
	b.Grow(len(prefix) + 1 + len(payload) + cashChecksumLength)
	b.WriteString(prefix)
	b.WriteByte(':')
	for _, v := range payload {
		b.WriteByte(cashAlphabet[v])
	}
	for i := 0; i < cashChecksumLength; i++ {
		b.WriteByte(cashAlphabet[(sum>>(5*(7-i)))&0x1f])
	}
	return b.String()
}

// decodeCashAddr decodes addr, which either carries a prefix or, without
// one, is checked against defaultPrefix. It returns the prefix, the address
// type and the hash. Mixed case is refused, as the format requires.
func decodeCashAddr(addr, defaultPrefix string) (string, byte, []byte, error) {
	lower := strings.ToLower(addr)
	if lower != addr && strings.ToUpper(addr) != addr {
		return "", 0, nil, errors.New("mixed case")
	}
	prefix, body := defaultPrefix, lower
	if i := strings.LastIndexByte(lower, ':'); i >= 0 {
		prefix, body = lower[:i], lower[i+1:]
	}
	if prefix == "" || len(body) <= cashChecksumLength {
		return "", 0, nil, errors.New("too short")
	}
	values := make([]byte, len(body))
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c >= 128 || cashIndex[c] < 0 {
			return "", 0, nil, fmt.Errorf("invalid character %q", c)
		}
		values[i] = byte(cashIndex[c])
	}
	if cashPolymod(append(prefixValues(prefix), values...)) != 0 {
		return "", 0, nil, errors.New("checksum mismatch")
	}
	data, err := convertBits(values[:len(values)-cashChecksumLength], 5, 8, false)
	if err != nil || len(data) == 0 {
		return "", 0, nil, fmt.Errorf("payload: %v", err)
	}
	version := data[0]
	if version&0x80 != 0 {
		return "", 0, nil, errors.New("reserved version bit set")
	}
	hash := data[1:]
	if len(hash) != cashHashSizes[version&7] {
		return "", 0, nil, fmt.Errorf("hash of %d bytes, version byte says %d", len(hash), cashHashSizes[version&7])
	}
	return prefix, version >> 3, hash, nil
}
