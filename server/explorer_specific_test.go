package server

import (
	"context"
	"html"
	"log/slog"
	"math/big"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/static"
)

type specificFake struct {
	explorerFake
	tx *api.Tx
}

func (f *specificFake) Tx(context.Context, string) (*api.Tx, error) { return f.tx, nil }

// coinSpecific of a tx and of its outputs shows on the tx page as labelled
// rows, whatever the coin put there.
func TestExplorerCoinSpecific(t *testing.T) {
	txid := strings.Repeat("ab", 32)
	token := map[string]any{"tokenData": map[string]any{
		"category": "b38a33f750f84c5c169a6f23cb873e6e79605021585d4f3408789689ed87f366", "amount": "1200000",
		"nft": map[string]any{"capability": "minting", "commitment": strings.Repeat("cc", 60)},
	}}
	tx := &api.Tx{
		Txid: txid, BlockHeight: 10, Confirmations: 1,
		Value:        (*api.Amount)(big.NewInt(1000)),
		CoinSpecific: map[string]any{"type": 5, "payload": map[string]any{"version": 2, "height": 1028160}},
		Vout: []api.Vout{
			{N: 0, Value: (*api.Amount)(big.NewInt(1000)), Addresses: []string{"bitcoincash:qqf69dgc7p9vy4cvyg4nyexhnz4uhz3nvs6k0cfv98"}, IsAddress: true, CoinSpecific: token},
			{N: 1, Value: (*api.Amount)(big.NewInt(0)), Addresses: []string{"OP_RETURN"}},
		},
	}
	p := NewPublic(&specificFake{tx: tx}, PublicConfig{}, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	rec := httptest.NewRecorder()
	p.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/tx/"+txid, nil))
	body := html.UnescapeString(rec.Body.String())
	if rec.Code != 200 {
		t.Fatalf("status %d:\n%s", rec.Code, body)
	}
	for _, want := range []string{
		`id="tx-specific"`, "payload › height", "1028160", ">type<", ">5<",
		"tokenData › category", "b38a33f750f84c5c169a6f23cb873e6e79605021585d4f3408789689ed87f366",
		"tokenData › amount", "1200000", "tokenData › nft › capability", "minting",
		`title="` + strings.Repeat("cc", 60) + `"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(body, `<dl class="specific">`); n != 1 {
		t.Errorf("%d outputs show coin-specific data, want 1", n)
	}
}

func TestSpecificRows(t *testing.T) {
	if rows := specificRows(nil); rows != nil {
		t.Errorf("nil: %v", rows)
	}
	if rows := specificRows(func() {}); rows != nil {
		t.Errorf("unmarshalable: %v", rows)
	}
	type nameOp struct {
		Op    string `json:"op"`
		Name  string `json:"name"`
		Value string `json:"value"`
		Empty []int  `json:"empty"`
		Nil   *int   `json:"nil"`
		Yes   bool   `json:"yes"`
	}
	rows := specificRows(&nameOp{Op: "name_update", Name: "d/example", Empty: []int{}, Yes: true})
	got := map[string]string{}
	for _, r := range rows {
		got[r.Key] = r.Value
	}
	want := map[string]string{"op": "name_update", "name": "d/example", "value": "(empty)", "empty": "none", "yes": "true"}
	if len(got) != len(want) {
		t.Errorf("rows %v", rows)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	many := map[string]any{}
	for i := 0; i < 100; i++ {
		many[strings.Repeat("k", i+1)] = []any{i, i}
	}
	if rows := specificRows(many); len(rows) != maxSpecificRows+1 || !strings.Contains(rows[maxSpecificRows].Value, "more fields") {
		t.Errorf("%d rows, last %v", len(rows), rows[len(rows)-1])
	}
}

func TestSpecificLine(t *testing.T) {
	if got := specificLine(nil); got != "" {
		t.Errorf("nil: %q", got)
	}
	v := map[string]any{"tokenData": map[string]any{"amount": "5", "category": "ab", "nft": map[string]any{"capability": "none", "commitment": ""}}}
	want := "tokenData › amount: 5 · tokenData › category: ab · tokenData › nft › capability: none · …"
	if got := specificLine(v); got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// Tx lists (address, block and mempool pages) show an output's
// coinSpecific on one line.
func TestTxCardCoinSpecific(t *testing.T) {
	e := &explorer{assets: loadAssets(static.Assets)}
	pages := e.parseTemplates()
	tx := &api.Tx{Txid: strings.Repeat("cd", 32), BlockHeight: -1, Value: (*api.Amount)(big.NewInt(1000)),
		Vin: []api.Vin{{Txid: strings.Repeat("ef", 32), Value: (*api.Amount)(big.NewInt(2000)), Addresses: []string{"a"}, IsAddress: true}},
		Vout: []api.Vout{{Value: (*api.Amount)(big.NewInt(1000)), Addresses: []string{"b"}, IsAddress: true,
			CoinSpecific: map[string]any{"tokenData": map[string]any{"amount": "7", "category": "beef"}}}}}
	var buf strings.Builder
	if err := pages["mempool"].ExecuteTemplate(&buf, "txcard", tx); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `<span class="specific-line mono">tokenData › amount: 7 · tokenData › category: beef</span>`) {
		t.Errorf("txcard:\n%s", buf.String())
	}
}
