package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"testing"
)

// EncodeJSON writes what a json.Encoder writes, for answers whose txids it
// writes itself and for those it leaves to encoding/json: short lists,
// strings that need escaping, fields after the list, HTML characters
// elsewhere in the answer.
func TestAddressEncodeJSONMatchesEncoder(t *testing.T) {
	hexTxids := func(n int, prefix string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%s%064x", prefix, i*7919)
		}
		return out
	}
	base := func() Address {
		return Address{Paging: Paging{Page: 1, TotalPages: 27, ItemsOnPage: 1000}, Address: "bcrt1qkrcmrfqmxp7w3jwkhfpluh44kld0326j8fuecy",
			Balance: NewAmount(12345), TotalReceived: NewAmount(99999999), TotalSent: (*Amount)(big.NewInt(0)),
			UnconfirmedBalance: NewAmount(0), Txs: 26333}
	}
	cases := map[string]func(*Address){
		"a thousand txids": func(a *Address) { a.Txids = hexTxids(1000, "") },
		"0x txids":         func(a *Address) { a.Txids = hexTxids(40, "0x") },
		"a short list":     func(a *Address) { a.Txids = hexTxids(3, "") },
		"no list":          func(*Address) {},
		"an empty list":    func(a *Address) { a.Txids = []string{} },
		"fields after the list": func(a *Address) {
			a.Txids, a.UsedTokens, a.SecondaryValue = hexTxids(20, ""), 4, 1.25
			a.Tokens = []Token{{Name: "<&>", Path: "m/84'/1'/0'/0/1", Transfers: 2}}
		},
		"HTML in a txid":      func(a *Address) { a.Txids = append(hexTxids(20, ""), "<a&b>") },
		"a quote in a txid":   func(a *Address) { a.Txids = append(hexTxids(20, ""), `a"b\c`) },
		"non-ASCII in a txid": func(a *Address) { a.Txids = append(hexTxids(20, ""), "é\u2028") },
		"the mark itself":     func(a *Address) { a.Txids = append(hexTxids(20, ""), "\x00") },
		"a mark-like address": func(a *Address) { a.Txids, a.Address = hexTxids(20, ""), `"txids":["`+"\x00"+`"]` },
		"HTML in the address": func(a *Address) { a.Txids, a.Address = hexTxids(20, ""), "<script>&" },
	}
	for name, edit := range cases {
		a := base()
		edit(&a)
		var want, got bytes.Buffer
		if err := json.NewEncoder(&want).Encode(&a); err != nil {
			t.Fatal(err)
		}
		got.WriteString("before|") // EncodeJSON appends to what buf holds
		if err := a.EncodeJSON(&got); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if g := bytes.TrimPrefix(got.Bytes(), []byte("before|")); !bytes.Equal(g, want.Bytes()) {
			t.Errorf("%s:\n got %.300s\nwant %.300s", name, g, want.Bytes())
		}
	}
}
