package calldata

import (
	"encoding/hex"
	"math/big"
	"strconv"
	"strings"
)

// Param is one decoded parameter: its type as the signature spells it and
// its values as text (several for arrays, flattened in order; none for an
// empty array), as Blockbook's parsedData.params.
type Param struct {
	Type   string
	Values []string
}

// Decoded is Blockbook's parsedData of a tx's input data: MethodID is the
// selector as 0x hex ("" for a tx without data), Name the readable name
// (DisplayName) and Function the signature; Name, Function and Params are
// empty when no known signature decodes the data.
type Decoded struct {
	MethodID string
	Name     string
	Function string
	Params   []Param
}

// AddressFormat renders a 20-byte address value.
type AddressFormat func(a [20]byte) string

// Decode decodes a tx's input data with the first of sigs (the signatures
// of its selector, in the index's order) whose parameter types consume the
// arguments exactly: every 32-byte word of them, as Blockbook requires, so
// that of several signatures sharing a selector only one that fits the
// data is taken. As in Blockbook, data without a selector (under 4 bytes)
// decodes to nil, empty data to the name "Transfer", and tuple, fixed-point
// and function types are not decoded (such a signature never matches).
func Decode(data []byte, sigs []Signature, addr AddressFormat) *Decoded {
	if len(data) == 0 {
		return &Decoded{Name: "Transfer"}
	}
	if len(data) < 4 {
		return nil
	}
	out := &Decoded{MethodID: "0x" + hex.EncodeToString(data[:4])}
	for _, s := range sigs {
		if params, ok := decodeArgs(data[4:], s.Params, addr); ok {
			out.Name, out.Function, out.Params = DisplayName(s.Name), s.Function(), params
			break
		}
	}
	return out
}

// decodeArgs decodes the arguments (the data after the selector) as the
// types, or reports that they do not fit them.
func decodeArgs(args []byte, types []string, addr AddressFormat) ([]Param, bool) {
	ts := make([]*abiType, len(types))
	for i, s := range types {
		t, ok := parseType(s, 0)
		if !ok {
			return nil, false
		}
		ts[i] = t
	}
	d := &decoder{args: args, used: make([]bool, len(args)/32), addr: addr, budget: 4*len(args) + 1024}
	params := make([]Param, len(ts))
	head := 0
	for i, t := range ts {
		vals, ok := d.value(t, head, 0, nil)
		if !ok {
			return nil, false
		}
		params[i] = Param{Type: types[i], Values: vals}
		head += t.headWords()
	}
	for _, u := range d.used {
		if !u {
			return nil, false
		}
	}
	return params, true
}

type kind uint8

const (
	kUint kind = iota
	kInt
	kBool
	kAddress
	kFixedBytes // bytes1..bytes32
	kString
	kBytes
	kArray // T[k]
	kSlice // T[]
)

const (
	maxArrayLen = 1 << 16 // a static array's length in a signature
	maxDepth    = 8       // nested array dimensions
	maxSteps    = 1 << 16 // values visited per decode
	maxHead     = 1 << 30 // saturates headWords
)

type abiType struct {
	kind kind
	size int // bytes of kFixedBytes, bits of ints, length of kArray
	elem *abiType
}

// parseType reads an elementary type or an array of one; tuples and the
// types Blockbook does not decode give false.
func parseType(s string, depth int) (*abiType, bool) {
	if strings.HasSuffix(s, "]") {
		open := strings.LastIndexByte(s, '[')
		if open <= 0 || depth >= maxDepth {
			return nil, false
		}
		elem, ok := parseType(s[:open], depth+1)
		if !ok {
			return nil, false
		}
		n := s[open+1 : len(s)-1]
		if n == "" {
			return &abiType{kind: kSlice, elem: elem}, true
		}
		k, err := strconv.Atoi(n)
		if err != nil || k < 1 || k > maxArrayLen || n[0] == '0' {
			return nil, false
		}
		return &abiType{kind: kArray, size: k, elem: elem}, true
	}
	switch s {
	case "address":
		return &abiType{kind: kAddress}, true
	case "bool":
		return &abiType{kind: kBool}, true
	case "string":
		return &abiType{kind: kString}, true
	case "bytes":
		return &abiType{kind: kBytes}, true
	}
	for _, p := range []struct {
		prefix   string
		k        kind
		min, max int
		step     int
	}{{"bytes", kFixedBytes, 1, 32, 1}, {"uint", kUint, 8, 256, 8}, {"int", kInt, 8, 256, 8}} {
		if n, ok := strings.CutPrefix(s, p.prefix); ok && n != "" && n[0] != '0' {
			v, err := strconv.Atoi(n)
			if err != nil || v < p.min || v > p.max || v%p.step != 0 {
				return nil, false
			}
			return &abiType{kind: p.k, size: v}, true
		}
	}
	return nil, false
}

// dynamic reports whether values of t live in the tail (the head holds an
// offset).
func (t *abiType) dynamic() bool {
	switch t.kind {
	case kString, kBytes, kSlice:
		return true
	case kArray:
		return t.elem.dynamic()
	}
	return false
}

// headWords is the number of head words a value of t takes.
func (t *abiType) headWords() int {
	if t.kind != kArray || t.dynamic() {
		return 1
	}
	return min(t.size*t.elem.headWords(), maxHead)
}

type decoder struct {
	args   []byte
	used   []bool // per 32-byte word of args: read by some value
	addr   AddressFormat
	steps  int
	budget int // bytes of text the values may still take
}

func (d *decoder) word(i int) ([]byte, bool) {
	if i < 0 || i >= len(d.used) {
		return nil, false
	}
	d.used[i] = true
	return d.args[i*32 : i*32+32], true
}

// number reads a word as a non-negative int no larger than the arguments.
func (d *decoder) number(i int) (int, bool) {
	w, ok := d.word(i)
	if !ok {
		return 0, false
	}
	for _, b := range w[:24] {
		if b != 0 {
			return 0, false
		}
	}
	n := new(big.Int).SetBytes(w[24:])
	if !n.IsInt64() || n.Int64() > int64(len(d.args)) {
		return 0, false
	}
	return int(n.Int64()), true
}

func (d *decoder) emit(vals []string, v string) ([]string, bool) {
	d.budget -= len(v) + 1
	return append(vals, v), d.budget >= 0
}

// value appends the values of a t whose head is word i; offsets in the
// head are relative to byte base of the arguments.
func (d *decoder) value(t *abiType, i, base int, vals []string) ([]string, bool) {
	if d.steps++; d.steps > maxSteps {
		return nil, false
	}
	if t.dynamic() {
		off, ok := d.number(i)
		if !ok || (base+off)%32 != 0 || base+off > len(d.args) {
			return nil, false
		}
		return d.tail(t, (base+off)/32, vals)
	}
	if t.kind == kArray {
		head := i
		for range t.size {
			var ok bool
			if vals, ok = d.value(t.elem, head, base, vals); !ok {
				return nil, false
			}
			head += t.elem.headWords()
		}
		return vals, true
	}
	w, ok := d.word(i)
	if !ok {
		return nil, false
	}
	var v string
	switch t.kind {
	case kUint:
		v = new(big.Int).SetBytes(w).String()
	case kInt:
		x := new(big.Int).SetBytes(w)
		if w[0]&0x80 != 0 {
			x.Sub(x, new(big.Int).Lsh(big.NewInt(1), 256))
		}
		v = x.String()
	case kBool:
		v = strconv.FormatBool(new(big.Int).SetBytes(w).Sign() != 0)
	case kAddress:
		v = d.addr([20]byte(w[12:]))
	case kFixedBytes:
		v = "0x" + hex.EncodeToString(w[:t.size])
	}
	return d.emit(vals, v)
}

// tail decodes a dynamic value whose data starts at word j.
func (d *decoder) tail(t *abiType, j int, vals []string) ([]string, bool) {
	switch t.kind {
	case kString, kBytes:
		n, ok := d.number(j)
		words := (n + 31) / 32
		if !ok || j+1+words > len(d.used) {
			return nil, false
		}
		for k := j + 1; k <= j+words; k++ {
			d.used[k] = true
		}
		content := d.args[(j+1)*32 : (j+1)*32+n]
		switch {
		case n == 0:
			return d.emit(vals, "") // Blockbook's empty bytes too, not "0x"
		case t.kind == kString:
			return d.emit(vals, string(content))
		default:
			return d.emit(vals, "0x"+hex.EncodeToString(content))
		}
	case kSlice:
		n, ok := d.number(j)
		if !ok || n > len(d.used)-j-1 {
			return nil, false
		}
		return d.elems(t.elem, n, j+1, vals)
	default: // a static-length array of dynamic values
		return d.elems(t.elem, t.size, j, vals)
	}
}

// elems decodes n values of t whose heads start at word j; their offsets
// are relative to that word.
func (d *decoder) elems(t *abiType, n, j int, vals []string) ([]string, bool) {
	head := j
	for range n {
		var ok bool
		if vals, ok = d.value(t, head, j*32, vals); !ok {
			return nil, false
		}
		head += t.headWords()
	}
	return vals, true
}
