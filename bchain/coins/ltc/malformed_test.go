package ltc

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc/btctest"
)

// extStart returns the offset of a block's MWEB extension block.
func extStart(t *testing.T, raw []byte) int {
	t.Helper()
	blk, _, err := parseBlock(raw)
	if err != nil {
		t.Fatal(err)
	}
	last := blk.Txs[len(blk.Txs)-1].Raw
	for off := 0; off+len(last) <= len(raw); off++ {
		if &raw[off] == &last[0] {
			return off + len(last)
		}
	}
	t.Fatal("last tx not inside the block")
	return 0
}

func wantInvalid(t *testing.T, what string, raw []byte) {
	t.Helper()
	_, err := NewParser(RegtestParams).ParseBlock(raw)
	if !errors.Is(err, bchain.ErrInvalidData) {
		t.Errorf("%s: error %v, want invalid data", what, err)
	}
}

func TestMalformedMWEBBlocks(t *testing.T) {
	raw := btctest.ReadHex(t, "regtest-437.hex")
	ext := extStart(t, raw)
	// Every truncation inside the extension block (and of the txs) fails.
	for n := len(raw) - 1; n >= 80; n-- {
		wantInvalid(t, "truncated", raw[:n:n])
	}
	mutate := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), raw...)) }
	wantInvalid(t, "presence flag 2", mutate(func(b []byte) []byte { b[ext] = 2; return b }))
	wantInvalid(t, "trailing byte", mutate(func(b []byte) []byte { return append(b, 0) }))
	// With the extension block's presence flag cleared, its body is trailing garbage.
	wantInvalid(t, "absent extension with data", mutate(func(b []byte) []byte { b[ext] = 0; return b }))
	// A block ending in a HogEx must carry its extension block.
	wantInvalid(t, "HogEx without extension", raw[:ext:ext])
	// Extension data after a block whose last tx is not a HogEx.
	genesis := btctest.ReadHex(t, "testnet-0.hex")
	wantInvalid(t, "extension without HogEx", append(append([]byte(nil), genesis...), raw[ext:]...))
	// A kernel with an unknown feature bit: block 437's only kernel starts
	// after its header, one input and one output; find it by its features
	// byte (0x15: fee, peg-out, stealth excess) searching from the end.
	k := strings.LastIndex(string(raw[ext:]), "\x01\x15")
	if k < 0 {
		t.Fatal("kernel not found")
	}
	_, err := NewParser(RegtestParams).ParseBlock(mutate(func(b []byte) []byte { b[ext+k+1] |= 0x40; return b }))
	if !errors.Is(err, bchain.ErrInvalidData) || !strings.Contains(err.Error(), "unknown kernel features 0x55") {
		t.Errorf("unknown kernel feature: %v", err)
	}
}

func TestMWEBOnlyTx(t *testing.T) {
	p := NewParser(RegtestParams)
	for _, name := range []string{"mwebonly-1.hex", "mwebonly-2.hex"} {
		raw := btctest.ReadHex(t, name)
		if _, err := p.ParseTx(raw); !errors.Is(err, errMWEBOnly) {
			t.Errorf("%s: error %v, want the MWEB-only error", name, err)
		}
		for n := len(raw) - 1; n > 0; n-- {
			if _, err := p.ParseTx(raw[:n:n]); !errors.Is(err, bchain.ErrInvalidData) {
				t.Fatalf("%s cut to %d bytes: error %v", name, n, err)
			}
		}
	}
	for _, bad := range []string{
		"0200000000",                   // flag byte missing
		"020000000000",                 // zero flags
		"020000000002000000000000",     // unknown flag
		"02000000000800000200000000",   // MWEB presence flag 2
		"0200000000080000000000000000", // HogEx (null MWEB tx) without outputs
	} {
		b, _ := hex.DecodeString(bad)
		if _, err := p.ParseTx(b); !errors.Is(err, bchain.ErrInvalidData) {
			t.Errorf("%s: error %v", bad, err)
		}
	}
}

// The node wrapper hides exactly the MWEB-only txs.
func TestIsMWEBOnly(t *testing.T) {
	for _, name := range []string{"mwebonly-1.hex", "mwebonly-2.hex"} {
		if !isMWEBOnly(btctest.ReadHex(t, name)) {
			t.Errorf("%s not recognized as MWEB-only", name)
		}
	}
	blk, _, err := parseBlock(btctest.ReadHex(t, "regtest-432.hex"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range blk.Txs {
		if isMWEBOnly(blk.Txs[i].Raw) {
			t.Errorf("tx %d (canonical) taken for MWEB-only", i)
		}
	}
}
