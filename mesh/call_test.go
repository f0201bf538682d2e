package mesh_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/tools/apitest"
	"github.com/openexplorer/blockbook/tools/meshcheck"
)

// TestCall serves /call's methods, listed in /network/options, against the
// raw chain and the fixture node's fee rates; bad methods and parameters
// get Mesh errors.
func TestCall(t *testing.T) {
	f := newFixture(t)
	var opts struct {
		Allow struct {
			CallMethods []string `json:"call_methods"`
		} `json:"allow"`
	}
	if err := f.client.Call("/network/options", nil, &opts); err != nil {
		t.Fatal(err)
	}
	if want := []string{"estimate_fee", "raw_transaction"}; !reflect.DeepEqual(opts.Allow.CallMethods, want) {
		t.Errorf("call_methods %v, want %v", opts.Allow.CallMethods, want)
	}
	type answer struct {
		Result     map[string]any `json:"result"`
		Idempotent bool           `json:"idempotent"`
	}
	h := 1
	for len(f.Block(h).Transactions) < 2 {
		h++
	}
	tx := f.Block(h).Transactions[1]
	var buf bytes.Buffer
	if err := tx.Serialize(&buf); err != nil {
		t.Fatal(err)
	}
	var raw answer
	if err := f.client.Call("/call", map[string]any{"method": "raw_transaction",
		"parameters": map[string]any{"transaction_identifier": map[string]any{"hash": strings.ToUpper(tx.TxHash().String())}}}, &raw); err != nil {
		t.Fatal(err)
	}
	if raw.Result["hex"] != hex.EncodeToString(buf.Bytes()) || !raw.Idempotent {
		t.Errorf("raw_transaction of %s: %+v", tx.TxHash(), raw)
	}
	for target, params := range map[int]map[string]any{2: {}, 6: {"confirmation_target": 6}} {
		var fee answer
		if err := f.client.Call("/call", map[string]any{"method": "estimate_fee", "parameters": params}, &fee); err != nil {
			t.Fatal(err)
		}
		if fee.Result["fee_per_kvbyte"] != strconv.FormatInt(apitest.FeeRate(target), 10) || fee.Result["confirmation_target"] != float64(target) || fee.Idempotent {
			t.Errorf("estimate_fee %v: %+v, want %d", params, fee, apitest.FeeRate(target))
		}
	}
	for name, c := range map[string]struct {
		body map[string]any
		code int
	}{
		"unknown method":     {map[string]any{"method": "getblock", "parameters": map[string]any{}}, 19},
		"no method":          {map[string]any{"parameters": map[string]any{}}, 19},
		"unknown parameter":  {map[string]any{"method": "estimate_fee", "parameters": map[string]any{"blocks": 2}}, 2},
		"bad target":         {map[string]any{"method": "estimate_fee", "parameters": map[string]any{"confirmation_target": -1}}, 2},
		"no txid":            {map[string]any{"method": "raw_transaction", "parameters": map[string]any{}}, 2},
		"bad txid":           {map[string]any{"method": "raw_transaction", "parameters": map[string]any{"transaction_identifier": map[string]any{"hash": "xy"}}}, 5},
		"unknown tx":         {map[string]any{"method": "raw_transaction", "parameters": map[string]any{"transaction_identifier": map[string]any{"hash": strings.Repeat("ab", 32)}}}, 6},
		"parameters a array": {map[string]any{"method": "estimate_fee", "parameters": []any{1}}, 2},
	} {
		err := f.client.Call("/call", c.body, nil)
		var ae *meshcheck.AnswerError
		if !errors.As(err, &ae) || ae.Code != c.code {
			t.Errorf("%s: %v, want Mesh error %d", name, err, c.code)
		}
	}
}
