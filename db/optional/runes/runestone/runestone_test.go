package runestone

import (
	"reflect"
	"testing"
)

func TestVarintRoundTrip(t *testing.T) {
	for _, v := range []U128{{}, U64(1), U64(127), U64(128), U64(1<<63 + 5), {Hi: 1}, {Hi: 1 << 62, Lo: 9}, MaxU128} {
		b := AppendVarint(nil, v)
		got, n, err := DecodeVarint(b)
		if err != nil || got != v || n != len(b) {
			t.Errorf("%s: %x decodes to %s, %d, %v", v, b, got, n, err)
		}
	}
	if b := AppendVarint(nil, MaxU128); len(b) != 19 || b[18] != 0x03 {
		t.Errorf("max varint %x", b)
	}
	for _, bad := range [][]byte{{0x80}, {}, append(AppendVarint(nil, MaxU128)[:18], 0x04)} {
		if _, _, err := DecodeVarint(bad); err == nil {
			t.Errorf("%x decoded", bad)
		}
	}
}

func TestEncipherRoundTrip(t *testing.T) {
	for i, tx := range craftedCases()[:4] {
		a := Decipher(tx)
		if a == nil || a.Runestone == nil {
			t.Fatalf("case %d: %+v", i, a)
		}
		again := Decipher(append([][]byte{a.Runestone.Encipher()}, tx[1:]...))
		if !reflect.DeepEqual(a, again) {
			t.Errorf("case %d: %+v re-enciphered is %+v", i, a.Runestone, again.Runestone)
		}
	}
}

func TestSpacedRuneErrors(t *testing.T) {
	for _, s := range []string{"", "•A", "A•", "A••B", "a", "A•B•", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGHIJ•K"} {
		if r, err := ParseSpacedRune(s); err == nil {
			t.Errorf("%q parsed as %v", s, r)
		}
	}
}

// FuzzDecipher decodes arbitrary payloads and scripts: never a panic, and
// a valid runestone enciphers back to itself.
func FuzzDecipher(f *testing.F) {
	for _, tx := range craftedCases() {
		f.Add(tx[0], uint8(len(tx)))
	}
	f.Fuzz(func(t *testing.T, script []byte, outputs uint8) {
		n := int(outputs%8) + 1
		for _, s := range [][]byte{script, Script(script)} {
			outs := make([][]byte, n)
			outs[0] = s
			for i := 1; i < n; i++ {
				outs[i] = []byte{0x51}
			}
			a := Decipher(outs)
			if a == nil || a.Runestone == nil {
				continue
			}
			outs[0] = a.Runestone.Encipher()
			if again := Decipher(outs); !reflect.DeepEqual(a, again) {
				t.Fatalf("%x: %+v re-enciphered decodes to %+v", s, a.Runestone, again)
			}
		}
	})
}
