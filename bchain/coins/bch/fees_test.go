package bch

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc/btctest"
)

// bchNode stands in for Bitcoin Cash Node and Bitcoin ABC: recorded
// results in the coin's unit, no estimatesmartfee, and estimatefee refused
// with arguments (these nodes take none).
func bchNode(t *testing.T, results map[string]string) *btctest.Node {
	t.Helper()
	return btctest.NewNode(t, func(method string, params []any) (any, *btctest.RPCError) {
		res, ok := results[method]
		if !ok || method == "estimatefee" && len(params) != 0 {
			return nil, btctest.MethodNotFound
		}
		return json.RawMessage(res), nil
	})
}

func feeBackend(t *testing.T, coin string, node *btctest.Node) *bchain.Backend {
	t.Helper()
	b, err := btctest.Backend(t, map[string]any{"coin_name": coin, "rpc_url": node.URL})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestFeeEstimates(t *testing.T) {
	for _, c := range []struct {
		coin    string
		results map[string]string
		want    int64
	}{
		{"Bcash", map[string]string{"estimatefee": "0.00001000"}, 1000},
		{"ECash", map[string]string{"estimatefee": "10.00"}, 1000},
		// No estimate: the relay fee.
		{"Bcash", map[string]string{"estimatefee": "-1", "getnetworkinfo": `{"relayfee":0.00001000}`}, 1000},
		{"ECash", map[string]string{"estimatefee": "0", "getnetworkinfo": `{"relayfee":20.00}`}, 2000},
	} {
		b := feeBackend(t, c.coin, bchNode(t, c.results))
		got, err := b.Fees.EstimateFee(context.Background(), 6, true)
		if err != nil || got != c.want {
			t.Errorf("%s %v: %d %v, want %d", c.coin, c.results, got, err, c.want)
		}
	}
	b := feeBackend(t, "Bcash", bchNode(t, map[string]string{"estimatefee": "0"}))
	if _, err := b.Fees.EstimateFee(context.Background(), 6, true); err == nil || errors.Is(err, bchain.ErrInvalidData) {
		t.Errorf("no estimate and no relay fee: %v", err)
	}
}
