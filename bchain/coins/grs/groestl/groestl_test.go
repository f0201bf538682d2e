package groestl

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
)

// Known answers. The empty message is the submission's KAT (Len = 0); the
// others were computed with an independent JavaScript implementation
// (groestl-hash-js) and cover one-block, exactly-one-block and
// multi-block messages.
func TestKnownAnswers(t *testing.T) {
	seq := make([]byte, 1000)
	for i := range seq {
		seq[i] = byte(i % 251)
	}
	for _, c := range []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "6d3ad29d279110eef3adbd66de2a0345a77baede1557f5d099fce0c03d6dc2ba8e6d4a6633dfbd66053c20faa87d1a11f39a7fbe4a6c2f009801370308fc4ad8"},
		{"fox", []byte("The quick brown fox jumps over the lazy dog"), "badc1f70ccd69e0cf3760c3f93884289da84ec13c70b3d12a53a7a8a4a513f99715d46288f55e1dbf926e6d084a0538e4eebfc91cf2b21452921ccde9131718d"},
		{"128 a", []byte(strings.Repeat("a", 128)), "67aaf4835a3bfac29dc0413172af0f73d5c452c4ab7318535c6b4c4fa9fb87d4a5aaeba1a39ff272b795d6e3f72ecd8d3537e2b94a1682ac7c485ed324de8036"},
		{"1000 bytes", seq, "3467cf6189535c316e6a4e9081fabe6b308758f7a515ea76205dc62d711d5daf0478628fbcd8fa3e4fe348173f2b5f8c77e4bb34a8a3fa0c1ad24511be15c87d"},
	} {
		got := Sum512(c.in)
		if hex.EncodeToString(got[:]) != c.want {
			t.Errorf("%s: got %x, want %s", c.name, got, c.want)
		}
	}
}

// Writing in pieces of any size gives the one-shot digest, and Sum leaves
// the hash usable.
func TestIncremental(t *testing.T) {
	msg := make([]byte, 777)
	for i := range msg {
		msg[i] = byte(i * 7)
	}
	want := Sum512(msg)
	for _, step := range []int{1, 3, 64, 127, 128, 129, 500} {
		h := New()
		for off := 0; off < len(msg); off += step {
			end := min(off+step, len(msg))
			h.Write(msg[off:end])
			if off == 256 {
				h.Sum(nil) // must not disturb the state
			}
		}
		if got := h.Sum(nil); !bytes.Equal(got, want[:]) {
			t.Errorf("step %d: got %x, want %x", step, got, want)
		}
		h.Reset()
		h.Write(msg)
		if got := h.Sum(nil); !bytes.Equal(got, want[:]) {
			t.Errorf("step %d after Reset: got %x", step, got)
		}
	}
	if New().Size() != Size || New().BlockSize() != BlockSize {
		t.Error("sizes")
	}
}

// The S-box built from its definition is AES's.
func TestSbox(t *testing.T) {
	for x, want := range map[byte]byte{0x00: 0x63, 0x01: 0x7c, 0x53: 0xed, 0xff: 0x16, 0x8d: 0x5d} {
		if sbox[x] != want {
			t.Errorf("sbox[%#x] = %#x, want %#x", x, sbox[x], want)
		}
	}
}

func BenchmarkSum512Header(b *testing.B) {
	hdr := make([]byte, 80)
	b.SetBytes(80)
	for i := 0; i < b.N; i++ {
		Sum512(hdr)
	}
}
