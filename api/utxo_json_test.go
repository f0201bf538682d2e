package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// UtxoList writes the bytes encoding/json writes for a []Utxo, through
// EncodeJSON (with the Encoder's newline, appended to what the buffer
// holds) and MarshalJSON (json.Marshal of it, inside another value as the
// websocket sends it): every optional field set and unset, amounts
// outside uint64 and nil, and strings encoding/json escapes.
func TestUtxoListMatchesEncodingJSON(t *testing.T) {
	// The encoder writes Utxo's fields by hand: a field added to Utxo must
	// be added to UtxoList's appendJSON and to the "all fields" case.
	if n := reflect.TypeOf(Utxo{}).NumField(); n != 10 {
		t.Fatalf("Utxo has %d fields, the hand-written encoder knows 10: update appendJSON and this test", n)
	}
	txid := func(i int) string { return fmt.Sprintf("%064x", i*7919) }
	many := make([]Utxo, 300)
	for i := range many {
		many[i] = Utxo{Txid: txid(i), Vout: uint32(i % 7), Value: NewAmount(uint64(i) * 1000), Height: int64(i % 3 * 100),
			Confirmations: uint32(i % 5), Coinbase: i%11 == 0}
	}
	cases := map[string][]Utxo{
		"nil":         nil,
		"empty":       {},
		"many":        many,
		"all fields":  {{Txid: txid(1), Vout: math.MaxUint32, Value: NewAmount(math.MaxUint64), Height: 800_000, Confirmations: 7, Address: "bc1qxyz", Path: "m/84'/0'/0'/1/5", LockTime: 12, Coinbase: true}},
		"zeros":       {{Txid: txid(0), Value: NewAmount(0)}},
		"nil value":   {{Txid: txid(2)}},
		"big value":   {{Txid: txid(3), Value: (*Amount)(new(big.Int).Lsh(big.NewInt(1), 70))}},
		"negative":    {{Txid: txid(4), Value: (*Amount)(big.NewInt(-5)), Height: -1}},
		"html":        {{Txid: "<a&b>", Value: NewAmount(1), Address: "<script>", Path: "m/&"}},
		"quotes":      {{Txid: txid(5), Value: NewAmount(1), Address: `a"b\c`}, {Txid: txid(6), Value: NewAmount(2)}},
		"non-ASCII":   {{Txid: txid(7), Value: NewAmount(1), Path: "é\u2028"}},
		"control":     {{Txid: "\x00\x1f", Value: NewAmount(1)}},
		"runes":       {{Txid: txid(8), Value: NewAmount(546), Runes: []RuneBalance{{ID: "840000:1", SpacedName: "A•B<", Amount: "10", Divisibility: 2}}}},
		"empty runes": {{Txid: txid(9), Value: NewAmount(546), Runes: []RuneBalance{}}},
	}
	for name, us := range cases {
		var want, got bytes.Buffer
		if err := json.NewEncoder(&want).Encode(us); err != nil {
			t.Fatal(err)
		}
		got.WriteString("before|")
		if err := UtxoList(us).EncodeJSON(&got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if g := bytes.TrimPrefix(got.Bytes(), []byte("before|")); !bytes.Equal(g, want.Bytes()) {
			t.Errorf("%s: EncodeJSON\n%s\nwant\n%s", name, g, want.Bytes())
		}
		type envelope struct {
			ID   string `json:"id"`
			Data any    `json:"data"`
		}
		wantWS, err := json.Marshal(envelope{"7", us})
		if err != nil {
			t.Fatal(err)
		}
		gotWS, err := json.Marshal(envelope{"7", UtxoList(us)})
		if err != nil || !bytes.Equal(gotWS, wantWS) {
			t.Errorf("%s: marshalled %s (%v), want %s", name, gotWS, err, wantWS)
		}
	}
}

// appendConfirmedUtxos renders as NewAmount and Hash.String do, the
// amounts independent of each other though they share their storage.
func TestAppendConfirmedUtxosRendersAlike(t *testing.T) {
	v := &view{tip: db.Tip{Height: 100}, hasTip: true}
	us := []db.Utxo{
		{Height: 100, Txid: bchain.Hash{1, 2, 3}, Vout: 1, Value: 0},
		{Height: 90, Txid: bchain.Hash{0xff}, Vout: 0, Value: math.MaxUint64, Coinbase: true},
		{Height: 1, Txid: bchain.Hash{31: 9}, Vout: 70, Value: 1 << 33},
	}
	lead := Utxo{Txid: "pending"}
	out := appendConfirmedUtxos(v, []Utxo{lead}, us)
	if len(out) != 4 || out[0].Txid != "pending" {
		t.Fatalf("got %+v", out)
	}
	for i, u := range us {
		want := Utxo{Txid: u.Txid.String(), Vout: u.Vout, Value: NewAmount(u.Value), Height: int64(u.Height),
			Confirmations: v.confirmations(u.Height), Coinbase: u.Coinbase}
		w, _ := json.Marshal(want)
		g, _ := json.Marshal(out[i+1])
		if !bytes.Equal(g, w) {
			t.Errorf("output %d: %s, want %s", i, g, w)
		}
	}
	(*big.Int)(out[1].Value).Add((*big.Int)(out[1].Value), big.NewInt(1<<40))
	if out[2].Value.String() != "18446744073709551615" || out[3].Value.String() != "8589934592" {
		t.Errorf("changing one amount changed another: %s %s", out[2].Value, out[3].Value)
	}
}
