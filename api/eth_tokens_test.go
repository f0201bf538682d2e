package api

import (
	"strings"
	"testing"
)

// A token id is a decimal uint256; anything else is a user error.
func TestParseTokenID(t *testing.T) {
	max := "115792089237316195423570985008687907853269984665640564039457584007913129639935"
	for in, ok := range map[string]bool{"0": true, "42": true, max: true, " 7 ": true,
		max[:len(max)-1] + "6": false, "-1": false, "+1": false, "0x10": false, "": false, "1e3": false, strings.Repeat("9", 79): false} {
		id, err := ParseTokenID(in)
		if (err == nil) != ok {
			t.Errorf("%q: %v %v, want ok %v", in, id, err, ok)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "Invalid token id") {
			t.Errorf("%q: %v", in, err)
		}
	}
}

// abiString reads an ABI-encoded string and refuses what is out of bounds.
func TestABIString(t *testing.T) {
	word := func(n int) string {
		return strings.Repeat("00", 31) + string("0123456789abcdef"[n>>4]) + string("0123456789abcdef"[n&15])
	}
	enc := func(s string) []byte {
		h := word(32) + word(len(s))
		b := make([]byte, 0, 64+len(s))
		for i := 0; i < len(h); i += 2 {
			var v byte
			for _, c := range h[i : i+2] {
				v = v<<4 | byte(strings.IndexRune("0123456789abcdef", c))
			}
			b = append(b, v)
		}
		return append(b, s...)
	}
	if s, ok := abiString(enc("ipfs://x/{id}")); !ok || s != "ipfs://x/{id}" {
		t.Errorf("decoded %q %v", s, ok)
	}
	good := enc("abc")
	for name, b := range map[string][]byte{"short": good[:40], "cut": good[:66], "empty": nil, "huge offset": append([]byte{1}, good[1:]...)} {
		if s, ok := abiString(b); ok {
			t.Errorf("%s: decoded %q", name, s)
		}
	}
}

// A contract's answer is untrusted bytes: never a panic.
func FuzzABIString(f *testing.F) {
	f.Add(make([]byte, 64))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, ok := abiString(b); ok && len(s) > len(b) {
			t.Fatalf("%d bytes decoded from %d", len(s), len(b))
		}
	})
}
