package esplora

import (
	"encoding/hex"
	"strconv"
	"strings"
)

// Scripts as Esplora shows them: the disassembly in rust-bitcoin's
// notation (OP_PUSHBYTES_n <hex>, OP_PUSHNUM_n, OP_CLTV...) and the output
// type names of electrs.

// opNames are the names of the opcodes that are not pushes, by byte.
var opNames = func() [256]string {
	var n [256]string
	named := map[byte]string{
		0x4f: "OP_PUSHNUM_NEG1", 0x50: "OP_RESERVED",
		0x61: "OP_NOP", 0x62: "OP_VER", 0x63: "OP_IF", 0x64: "OP_NOTIF", 0x65: "OP_VERIF", 0x66: "OP_VERNOTIF",
		0x67: "OP_ELSE", 0x68: "OP_ENDIF", 0x69: "OP_VERIFY", 0x6a: "OP_RETURN", 0x6b: "OP_TOALTSTACK",
		0x6c: "OP_FROMALTSTACK", 0x6d: "OP_2DROP", 0x6e: "OP_2DUP", 0x6f: "OP_3DUP", 0x70: "OP_2OVER",
		0x71: "OP_2ROT", 0x72: "OP_2SWAP", 0x73: "OP_IFDUP", 0x74: "OP_DEPTH", 0x75: "OP_DROP", 0x76: "OP_DUP",
		0x77: "OP_NIP", 0x78: "OP_OVER", 0x79: "OP_PICK", 0x7a: "OP_ROLL", 0x7b: "OP_ROT", 0x7c: "OP_SWAP",
		0x7d: "OP_TUCK", 0x7e: "OP_CAT", 0x7f: "OP_SUBSTR", 0x80: "OP_LEFT", 0x81: "OP_RIGHT", 0x82: "OP_SIZE",
		0x83: "OP_INVERT", 0x84: "OP_AND", 0x85: "OP_OR", 0x86: "OP_XOR", 0x87: "OP_EQUAL", 0x88: "OP_EQUALVERIFY",
		0x89: "OP_RESERVED1", 0x8a: "OP_RESERVED2", 0x8b: "OP_1ADD", 0x8c: "OP_1SUB", 0x8d: "OP_2MUL",
		0x8e: "OP_2DIV", 0x8f: "OP_NEGATE", 0x90: "OP_ABS", 0x91: "OP_NOT", 0x92: "OP_0NOTEQUAL", 0x93: "OP_ADD",
		0x94: "OP_SUB", 0x95: "OP_MUL", 0x96: "OP_DIV", 0x97: "OP_MOD", 0x98: "OP_LSHIFT", 0x99: "OP_RSHIFT",
		0x9a: "OP_BOOLAND", 0x9b: "OP_BOOLOR", 0x9c: "OP_NUMEQUAL", 0x9d: "OP_NUMEQUALVERIFY",
		0x9e: "OP_NUMNOTEQUAL", 0x9f: "OP_LESSTHAN", 0xa0: "OP_GREATERTHAN", 0xa1: "OP_LESSTHANOREQUAL",
		0xa2: "OP_GREATERTHANOREQUAL", 0xa3: "OP_MIN", 0xa4: "OP_MAX", 0xa5: "OP_WITHIN", 0xa6: "OP_RIPEMD160",
		0xa7: "OP_SHA1", 0xa8: "OP_SHA256", 0xa9: "OP_HASH160", 0xaa: "OP_HASH256", 0xab: "OP_CODESEPARATOR",
		0xac: "OP_CHECKSIG", 0xad: "OP_CHECKSIGVERIFY", 0xae: "OP_CHECKMULTISIG", 0xaf: "OP_CHECKMULTISIGVERIFY",
		0xb0: "OP_NOP1", 0xb1: "OP_CLTV", 0xb2: "OP_CSV", 0xba: "OP_CHECKSIGADD", 0xff: "OP_INVALIDOPCODE",
	}
	for b, name := range named {
		n[b] = name
	}
	for b := 0x51; b <= 0x60; b++ {
		n[b] = "OP_PUSHNUM_" + strconv.Itoa(b-0x50)
	}
	for b := 0xb3; b <= 0xb9; b++ {
		n[b] = "OP_NOP" + strconv.Itoa(b-0xb3+4)
	}
	for b := 0xbb; b <= 0xfe; b++ {
		n[b] = "OP_RETURN_" + strconv.Itoa(b)
	}
	return n
}()

// scriptAsm disassembles a script as rust-bitcoin does: a push that runs
// past the end ends the text with "<push past end>", a length field cut
// short with "<unexpected end>".
func scriptAsm(s []byte) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		op := s[i]
		i++
		n := 0
		name := opNames[op]
		switch {
		case op == 0:
			name = "OP_0"
		case op <= 0x4b:
			n, name = int(op), "OP_PUSHBYTES_"+strconv.Itoa(int(op))
		case op >= 0x4c && op <= 0x4e:
			lenBytes := [...]int{1, 2, 4}[op-0x4c]
			if i+lenBytes > len(s) {
				b.WriteString("<unexpected end>")
				return b.String()
			}
			for k := lenBytes - 1; k >= 0; k-- {
				n = n<<8 | int(s[i+k])
			}
			i += lenBytes
			name = [...]string{"OP_PUSHDATA1", "OP_PUSHDATA2", "OP_PUSHDATA4"}[op-0x4c]
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(name)
		if n == 0 {
			continue
		}
		b.WriteByte(' ')
		if n > len(s)-i {
			b.WriteString("<push past end>")
			return b.String()
		}
		b.WriteString(hex.EncodeToString(s[i : i+n]))
		i += n
	}
	return b.String()
}

// scriptType names an output script as electrs does.
func scriptType(s []byte) string {
	n := len(s)
	switch {
	case n == 0:
		return "empty"
	case s[0] == 0x6a:
		return "op_return"
	case (n == 67 && s[0] == 0x41 || n == 35 && s[0] == 0x21) && s[n-1] == 0xac:
		return "p2pk"
	case n == 25 && s[0] == 0x76 && s[1] == 0xa9 && s[2] == 0x14 && s[23] == 0x88 && s[24] == 0xac:
		return "p2pkh"
	case n == 23 && s[0] == 0xa9 && s[1] == 0x14 && s[22] == 0x87:
		return "p2sh"
	case n == 22 && s[0] == 0x00 && s[1] == 0x14:
		return "v0_p2wpkh"
	case n == 34 && s[0] == 0x00 && s[1] == 0x20:
		return "v0_p2wsh"
	case n == 34 && s[0] == 0x51 && s[1] == 0x20:
		return "v1_p2tr"
	}
	return "unknown"
}

// hasAddress reports whether Esplora shows an address for a script: the
// standard kinds and the witness programs of versions 1-16 (2-40 bytes).
func hasAddress(s []byte) bool {
	switch scriptType(s) {
	case "p2pkh", "p2sh", "v0_p2wpkh", "v0_p2wsh", "v1_p2tr":
		return true
	}
	n := len(s)
	return n >= 4 && n <= 42 && s[0] >= 0x51 && s[0] <= 0x60 && int(s[1]) == n-2
}

// lastPush is the last data push of a script (a scriptSig's redeem
// script), nil if the script ends with something else.
func lastPush(s []byte) []byte {
	var last []byte
	for i := 0; i < len(s); {
		op := s[i]
		i++
		n := 0
		switch {
		case op <= 0x4b:
			n = int(op)
		case op >= 0x4c && op <= 0x4e:
			k := [...]int{1, 2, 4}[op-0x4c]
			if i+k > len(s) {
				return nil
			}
			for j := k - 1; j >= 0; j-- {
				n = n<<8 | int(s[i+j])
			}
			i += k
		default:
			last = nil
			continue
		}
		if n > len(s)-i {
			return nil
		}
		last = s[i : i+n]
		i += n
	}
	return last
}
