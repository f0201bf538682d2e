package nmc

import (
	"encoding/hex"
	"unicode"
	"unicode/utf8"

	"github.com/btcsuite/btcd/txscript/v2"
)

// Name operation opcodes: Namecoin reuses OP_1..OP_3 at the start of an
// output script.
const (
	opNameNew         = txscript.OP_1
	opNameFirstUpdate = txscript.OP_2
	opNameUpdate      = txscript.OP_3
)

// NameOp describes a name operation the way Namecoin Core's RPC does in an
// output's "nameOp": op is name_new, name_firstupdate or name_update; name
// and value are text when they are printable UTF-8 (encoding "utf8"), else
// hex (encoding "hex"); name_new shows only the hash it commits to, and
// name_firstupdate also the salt (rand) that opens that commitment.
type NameOp struct {
	Op            string `json:"op"`
	Hash          string `json:"hash,omitempty"`
	Rand          string `json:"rand,omitempty"`
	Name          string `json:"name,omitempty"`
	NameEncoding  string `json:"name_encoding,omitempty"`
	Value         string `json:"value,omitempty"`
	ValueEncoding string `json:"value_encoding,omitempty"`
}

// Specific is a name output's coinSpecific.
type Specific struct {
	NameOp *NameOp `json:"nameOp"`
}

// ParseNameScript recognizes a name operation at the start of an output
// script: the operation's opcode, its pushed arguments (one for name_new,
// three for name_firstupdate, two for name_update), and the OP_DROP /
// OP_2DROP / OP_NOP run that discards them. It returns the operation and
// the script after the drops, or nil when script is no name operation.
func ParseNameScript(script []byte) (*NameOp, []byte) {
	if len(script) == 0 || script[0] < opNameNew || script[0] > opNameUpdate {
		return nil, nil
	}
	tok := txscript.MakeScriptTokenizer(0, script[1:])
	var args [][]byte
	dropped := false
	for tok.Next() {
		switch op := tok.Opcode(); {
		case op == txscript.OP_DROP || op == txscript.OP_2DROP || op == txscript.OP_NOP:
			dropped = true
		case dropped:
			rest := script[1+int(tok.ByteIndex())-scriptLen(op, tok.Data()):]
			return nameOp(script[0], args), checkArgs(script[0], args, rest)
		case op <= txscript.OP_PUSHDATA4:
			args = append(args, tok.Data())
		default:
			return nil, nil
		}
	}
	if tok.Err() != nil || !dropped {
		return nil, nil
	}
	return nameOp(script[0], args), checkArgs(script[0], args, []byte{})
}

// scriptLen is the encoded length of the opcode just read, so the rest of
// the script can start at it.
func scriptLen(op byte, data []byte) int {
	switch {
	case op < txscript.OP_PUSHDATA1 && op > txscript.OP_0:
		return 1 + len(data)
	case op == txscript.OP_PUSHDATA1:
		return 2 + len(data)
	case op == txscript.OP_PUSHDATA2:
		return 3 + len(data)
	case op == txscript.OP_PUSHDATA4:
		return 5 + len(data)
	}
	return 1
}

// wantArgs is the number of arguments each operation takes.
var wantArgs = map[byte]int{opNameNew: 1, opNameFirstUpdate: 3, opNameUpdate: 2}

func checkArgs(op byte, args [][]byte, rest []byte) []byte {
	if len(args) != wantArgs[op] {
		return nil
	}
	return rest
}

func nameOp(op byte, args [][]byte) *NameOp {
	if len(args) != wantArgs[op] {
		return nil
	}
	switch op {
	case opNameNew:
		return &NameOp{Op: "name_new", Hash: hex.EncodeToString(args[0])}
	case opNameFirstUpdate:
		n := &NameOp{Op: "name_firstupdate", Rand: hex.EncodeToString(args[1])}
		n.Name, n.NameEncoding = text(args[0])
		n.Value, n.ValueEncoding = text(args[2])
		return n
	default:
		n := &NameOp{Op: "name_update"}
		n.Name, n.NameEncoding = text(args[0])
		n.Value, n.ValueEncoding = text(args[1])
		return n
	}
}

// text renders bytes as text when they are UTF-8 without control
// characters (other than whitespace in values), else as hex.
func text(b []byte) (string, string) {
	if !utf8.Valid(b) {
		return hex.EncodeToString(b), "hex"
	}
	for _, r := range string(b) {
		if unicode.IsControl(r) && r != '\n' && r != '\r' && r != '\t' {
			return hex.EncodeToString(b), "hex"
		}
	}
	return string(b), "utf8"
}
