package calldata

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
)

func eip55(a [20]byte) string { return common.Address(a).Hex() }

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.TrimPrefix(s, "0x"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustSigs(t testing.TB, texts ...string) []Signature {
	t.Helper()
	out := make([]Signature, len(texts))
	for i, s := range texts {
		var err error
		if out[i], err = ParseSignature(s); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

type wireParam struct {
	Type   string   `json:"type"`
	Values []string `json:"values"`
}

type wireDecoded struct {
	MethodID string      `json:"methodId"`
	Name     string      `json:"name"`
	Function string      `json:"function"`
	Params   []wireParam `json:"params"`
}

func wire(d *Decoded) *wireDecoded {
	if d == nil {
		return nil
	}
	w := &wireDecoded{MethodID: d.MethodID, Name: d.Name, Function: d.Function}
	for _, p := range d.Params {
		w.Params = append(w.Params, wireParam(p))
	}
	return w
}

// Mainnet calls and what Blockbook decodes them to, every signature tried
// on every call as Blockbook's own test does: the same answers.
func TestBlockbookVectors(t *testing.T) {
	raw, err := os.ReadFile("testdata/blockbook_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Signatures []string
		Cases      []struct {
			Name, Data string
			Want       wireDecoded
		}
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	sigs := mustSigs(t, v.Signatures...)
	if len(v.Cases) < 10 {
		t.Fatalf("%d cases", len(v.Cases))
	}
	for _, c := range v.Cases {
		got := wire(Decode(mustHex(t, c.Data), sigs, eip55))
		if !reflect.DeepEqual(got, &c.Want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.Name, got, c.Want)
		}
	}
}

func TestDecodeEdges(t *testing.T) {
	store := mustSigs(t, "store(bytes)")
	for name, c := range map[string]struct {
		data string
		sigs []Signature
		want *Decoded
	}{
		"no data":          {"", nil, &Decoded{Name: "Transfer"}},
		"short":            {"0xaabbcc", store, nil},
		"selector only":    {"0xaabbccdd", nil, &Decoded{MethodID: "0xaabbccdd"}},
		"no args, no sigs": {"0xaabbccdd", store, &Decoded{MethodID: "0xaabbccdd"}},
		// Blockbook's regressions: content past the last whole word, and a
		// length that overflows when doubled.
		"misaligned": {"0xaabbccdd" + word(0x20) + word(0x21) + "0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f2021",
			store, &Decoded{MethodID: "0xaabbccdd"}},
		"huge length": {"0xaabbccdd" + word(0x20) + "0000000000000000000000000000000000000000000000007fffffffffffffc0",
			store, &Decoded{MethodID: "0xaabbccdd"}},
		"offset past the end": {"0xaabbccdd" + word(0x40) + word(0), store, &Decoded{MethodID: "0xaabbccdd"}},
		"unaligned offset":    {"0xaabbccdd" + word(0x21) + word(0) + word(0), store, &Decoded{MethodID: "0xaabbccdd"}},
		"empty bytes": {"0xaabbccdd" + word(0x20) + word(0), store,
			&Decoded{MethodID: "0xaabbccdd", Name: "Store", Function: "store(bytes)", Params: []Param{{"bytes", []string{""}}}}},
		"tuple never matches": {"0xaabbccdd" + word(1) + word(2), mustSigs(t, "f((uint256,uint256))"), &Decoded{MethodID: "0xaabbccdd"}},
		"negative int": {"0xaabbccdd" + strings.Repeat("ff", 32) + word(5), mustSigs(t, "f(int8,int256)"),
			&Decoded{MethodID: "0xaabbccdd", Name: "F", Function: "f(int8, int256)", Params: []Param{{"int8", []string{"-1"}}, {"int256", []string{"5"}}}}},
		"bool, bytes4 and an empty array": {"0xaabbccdd" + word(7) + "deadbeef" + strings.Repeat("00", 28) + word(0x60) + word(0), mustSigs(t, "f(bool,bytes4,address[])"),
			&Decoded{MethodID: "0xaabbccdd", Name: "F", Function: "f(bool, bytes4, address[])",
				Params: []Param{{"bool", []string{"true"}}, {"bytes4", []string{"0xdeadbeef"}}, {"address[]", nil}}}},
	} {
		got := Decode(mustHex(t, c.data), c.sigs, eip55)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v, want %+v", name, got, c.want)
		}
	}
}

// Of signatures sharing a selector the first that consumes the arguments
// exactly is taken (the index keeps them in Blockbook's order).
func TestDecodeSharedSelector(t *testing.T) {
	data := mustHex(t, "0x12345678"+word(1)+word(2))
	one, two, other := "a(uint256)", "b(uint256,uint256)", "c(uint8,bool)"
	if got := Decode(data, mustSigs(t, one, two, other), eip55); got.Function != "b(uint256, uint256)" {
		t.Errorf("only b fits: %+v", got)
	}
	if got := Decode(data, mustSigs(t, other, two), eip55); got.Function != "c(uint8, bool)" || got.Params[1].Values[0] != "true" {
		t.Errorf("the first that fits: %+v", got)
	}
	if got := Decode(data, mustSigs(t, one), eip55); got.Name != "" || got.Params != nil {
		t.Errorf("none fits: %+v", got)
	}
}

func word(v int) string {
	return strings.Repeat("0", 56) + hex.EncodeToString([]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

func TestDisplayName(t *testing.T) {
	for in, want := range map[string]string{
		"transfer": "Transfer", "transferFrom": "Transfer From", "addLiquidityETHToContract": "Add Liquidity ETH To Contract",
		"atomicMatch_": "Atomic Match_", "aBc": "ABc", "mint2Tokens": "Mint2 Tokens", "safeTransferFrom": "Safe Transfer From", "x": "X",
	} {
		if got := DisplayName(in); got != want {
			t.Errorf("DisplayName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseSignature(t *testing.T) {
	for in, want := range map[string][]string{
		"_gonsPerFragment()":                        nil,
		"batchTransferTokenB(address[],uint256)":    {"address[]", "uint256"},
		"f(address,(uint8,bytes32,bytes32),bytes)":  {"address", "(uint8,bytes32,bytes32)", "bytes"},
		"g((uint256,(address,bool)[])[2],string[])": {"(uint256,(address,bool)[])[2]", "string[]"},
	} {
		s, err := ParseSignature(in)
		if err != nil || !slices.Equal(s.Params, want) || s.Text() != in {
			t.Errorf("%s: %+v %v", in, s, err)
		}
	}
	for _, bad := range []string{"", "()", "f", "f(", "1f()", "f(uint256", "f(uint256))", "f(a,,b)", "f(uint256 x)", "<b>()", "f(a)b", "f(a[[1]])", "f(,)"} {
		if _, err := ParseSignature(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// The standard ABIs give the selectors every wallet knows.
func TestStandardSelectors(t *testing.T) {
	sigs, err := Standard()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]uint32{}
	for _, s := range sigs {
		have[s.Text()] = Selector(s.Text())
	}
	for text, sel := range map[string]uint32{
		"transfer(address,uint256)": 0xa9059cbb, "transferFrom(address,address,uint256)": 0x23b872dd, "approve(address,uint256)": 0x095ea7b3,
		"safeTransferFrom(address,address,uint256)": 0x42842e0e, "safeTransferFrom(address,address,uint256,bytes)": 0xb88d4fde,
		"setApprovalForAll(address,bool)": 0xa22cb465, "safeTransferFrom(address,address,uint256,uint256,bytes)": 0xf242432a,
		"safeBatchTransferFrom(address,address,uint256[],uint256[],bytes)": 0x2eb2c2d6, "deposit(uint256,address)": 0x6e553f65,
		"mint(uint256,address)": 0x94bf804d, "withdraw(uint256,address,address)": 0xb460af94, "redeem(uint256,address,address)": 0xba087652,
		"deposit()": 0xd0e30db0, "withdraw(uint256)": 0x2e1a7d4d,
	} {
		if got, ok := have[text]; !ok || got != sel {
			t.Errorf("%s: %08x (listed %v), want %08x", text, got, ok, sel)
		}
	}
}
