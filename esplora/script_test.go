package esplora

import (
	"encoding/hex"
	"strings"
	"testing"
)

// Disassembly and types of scripts as electrs shows them (texts from its
// answers on mainnet).
func TestScriptAsm(t *testing.T) {
	for _, c := range []struct{ hex, asm, typ string }{
		{"76a914f5da28aa5ed75c2e850a8b998e92a5bec005561e88ac", "OP_DUP OP_HASH160 OP_PUSHBYTES_20 f5da28aa5ed75c2e850a8b998e92a5bec005561e OP_EQUALVERIFY OP_CHECKSIG", "p2pkh"},
		{"a914011beb6fb8499e075a57027fb0a58384f2d3f78487", "OP_HASH160 OP_PUSHBYTES_20 011beb6fb8499e075a57027fb0a58384f2d3f784 OP_EQUAL", "p2sh"},
		{"6a24aa21a9ed63363f3620ab5e38b8860a50c84050e5ec31af3636bbd73f01ba9f14103100ee", "OP_RETURN OP_PUSHBYTES_36 aa21a9ed63363f3620ab5e38b8860a50c84050e5ec31af3636bbd73f01ba9f14103100ee", "op_return"},
		{"00146b8dbd32e5deb90d22934e1513bae6e70156cd50", "OP_0 OP_PUSHBYTES_20 6b8dbd32e5deb90d22934e1513bae6e70156cd50", "v0_p2wpkh"},
		{"5120" + strings.Repeat("11", 32), "OP_PUSHNUM_1 OP_PUSHBYTES_32 " + strings.Repeat("11", 32), "v1_p2tr"},
		{"0020" + strings.Repeat("22", 32), "OP_0 OP_PUSHBYTES_32 " + strings.Repeat("22", 32), "v0_p2wsh"},
		{"21" + "02" + strings.Repeat("33", 32) + "ac", "OP_PUSHBYTES_33 02" + strings.Repeat("33", 32) + " OP_CHECKSIG", "p2pk"},
		{"0340600a0463f77f600100000000000000c539", "OP_PUSHBYTES_3 40600a OP_PUSHBYTES_4 63f77f60 OP_PUSHBYTES_1 00 " + strings.Repeat("OP_0 ", 6) + "OP_RETURN_197 OP_PUSHBYTES_57 <push past end>", "unknown"},
		{"4c00", "OP_PUSHDATA1", "unknown"},
		{"4c02abcd4f60b1b2ba", "OP_PUSHDATA1 abcd OP_PUSHNUM_NEG1 OP_PUSHNUM_16 OP_CLTV OP_CSV OP_CHECKSIGADD", "unknown"},
		{"764d01", "OP_DUP<unexpected end>", "unknown"},
		{"", "", "empty"},
		{"52ae", "OP_PUSHNUM_2 OP_CHECKMULTISIG", "unknown"},
	} {
		s, err := hex.DecodeString(c.hex)
		if err != nil {
			t.Fatal(err)
		}
		if got := scriptAsm(s); got != c.asm {
			t.Errorf("asm of %s = %q, want %q", c.hex, got, c.asm)
		}
		if got := scriptType(s); got != c.typ {
			t.Errorf("type of %s = %q, want %q", c.hex, got, c.typ)
		}
	}
}
