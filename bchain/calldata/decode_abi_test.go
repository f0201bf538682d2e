package calldata

import (
	"encoding/hex"
	"fmt"
	"math/big"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
)

// randType makes a random ABI type that Blockbook decodes (no tuples).
func randType(r *rand.Rand, depth int) string {
	if depth < 2 && r.IntN(4) == 0 {
		elem := randType(r, depth+1)
		if r.IntN(2) == 0 {
			return elem + "[]"
		}
		return fmt.Sprintf("%s[%d]", elem, 1+r.IntN(3))
	}
	switch r.IntN(7) {
	case 0:
		return "address"
	case 1:
		return "bool"
	case 2:
		return "string"
	case 3:
		return "bytes"
	case 4:
		return fmt.Sprintf("bytes%d", 1+r.IntN(32))
	case 5:
		return fmt.Sprintf("uint%d", 8*(1+r.IntN(32)))
	}
	return fmt.Sprintf("int%d", 8*(1+r.IntN(32)))
}

// randValue fills a Go value of t's type (as go-ethereum packs it) and
// returns the values Blockbook's parsedData shows for it.
func randValue(r *rand.Rand, t abi.Type) (reflect.Value, []string) {
	v := reflect.New(t.GetType()).Elem()
	switch t.T {
	case abi.IntTy, abi.UintTy:
		b := make([]byte, t.Size/8)
		fill(r, b)
		x := new(big.Int).SetBytes(b)
		if t.T == abi.IntTy {
			x.Sub(x, new(big.Int).Lsh(big.NewInt(1), uint(t.Size-1)))
		}
		switch v.Kind() {
		case reflect.Pointer:
			v.Set(reflect.ValueOf(x))
		case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			v.SetInt(x.Int64())
		default:
			v.SetUint(x.Uint64())
		}
		return v, []string{x.String()}
	case abi.BoolTy:
		b := r.IntN(2) == 1
		v.SetBool(b)
		return v, []string{fmt.Sprint(b)}
	case abi.AddressTy:
		var a common.Address
		fill(r, a[:])
		v.Set(reflect.ValueOf(a))
		return v, []string{a.Hex()}
	case abi.FixedBytesTy:
		b := make([]byte, t.Size)
		fill(r, b)
		reflect.Copy(v, reflect.ValueOf(b))
		return v, []string{"0x" + hex.EncodeToString(b)}
	case abi.BytesTy, abi.StringTy:
		b := make([]byte, r.IntN(70))
		for i := range b {
			b[i] = byte(' ' + r.IntN(90))
		}
		text := string(b)
		if t.T == abi.BytesTy {
			v.SetBytes(b)
			text = "0x" + hex.EncodeToString(b)
		} else {
			v.SetString(text)
		}
		if len(b) == 0 {
			text = ""
		}
		return v, []string{text}
	case abi.SliceTy, abi.ArrayTy:
		n := t.Size
		if t.T == abi.SliceTy {
			n = r.IntN(4)
			v.Set(reflect.MakeSlice(v.Type(), n, n))
		}
		var shown []string
		for i := range n {
			e, s := randValue(r, *t.Elem)
			v.Index(i).Set(e)
			shown = append(shown, s...)
		}
		return v, shown
	}
	panic(t.String())
}

func fill(r *rand.Rand, b []byte) {
	for i := range b {
		b[i] = byte(r.IntN(256))
	}
}

// Calls encoded by go-ethereum's ABI packer from random types and values
// decode to the values packed, as Blockbook shows them, and a signature
// without the last parameter does not take the call.
func TestDecodeMatchesGoEthereum(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 1))
	for i := range 3000 {
		n := r.IntN(5)
		types := make([]string, n)
		var args abi.Arguments
		var vals []any
		var want []Param
		for j := range n {
			types[j] = randType(r, 0)
			at, err := abi.NewType(types[j], "", nil)
			if err != nil {
				t.Fatalf("%s: %v", types[j], err)
			}
			args = append(args, abi.Argument{Type: at})
			v, shown := randValue(r, at)
			vals = append(vals, v.Interface())
			want = append(want, Param{Type: types[j], Values: shown})
		}
		packed, err := args.Pack(vals...)
		if err != nil {
			t.Fatalf("pack %v: %v", types, err)
		}
		sig := Signature{Name: "f", Params: types}
		data := append([]byte{0xaa, 0xbb, 0xcc, 0xdd}, packed...)
		got := Decode(data, []Signature{sig}, eip55)
		if got.Function != sig.Function() || !paramsEqual(got.Params, want) {
			t.Fatalf("case %d %s:\n got %+v\nwant %+v\ndata %x", i, sig.Text(), got.Params, want, data)
		}
		// The last parameter's head word is then read by nothing.
		if n > 0 {
			if d := Decode(data, []Signature{{Name: "g", Params: slices.Clone(types[:n-1])}}, eip55); d.Name != "" {
				t.Fatalf("case %d: g%v took %s's data", i, types[:n-1], sig.Text())
			}
		}
	}
}

func paramsEqual(a, b []Param) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Type != b[i].Type || strings.Join(a[i].Values, "\x00") != strings.Join(b[i].Values, "\x00") || len(a[i].Values) != len(b[i].Values) {
			return false
		}
	}
	return true
}

// Whatever the data and the signature, decoding neither panics nor takes
// long, and a match reads every word of the arguments.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{0xaa, 0xbb, 0xcc, 0xdd}, "f(bytes)")
	f.Add(append([]byte{1, 2, 3, 4}, make([]byte, 96)...), "f(uint256[][],string)")
	f.Add(append([]byte{1, 2, 3, 4}, make([]byte, 64)...), "f(string[2],bytes32)")
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		sig, err := ParseSignature(text)
		if err != nil {
			return
		}
		d := Decode(data, []Signature{sig}, eip55)
		if len(data) >= 4 && d.Name != "" && len(d.Params) != len(sig.Params) {
			t.Fatalf("%d params for %s", len(d.Params), text)
		}
	})
}
