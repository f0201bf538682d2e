package bch

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// rpcStub answers JSON-RPC calls with recorded results, the way Bitcoin
// Cash Node and Bitcoin ABC send them (no estimatesmartfee; estimatefee
// without arguments; amounts in the coin's unit).
func rpcStub(t *testing.T, results map[string]string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params []any           `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		res, ok := results[req.Method]
		if req.Method == "estimatefee" && len(req.Params) != 0 {
			ok = false // these nodes take no arguments
		}
		if !ok {
			_, _ = w.Write([]byte(`{"result":null,"error":{"code":-32601,"message":"Method not found"},"id":` + string(req.ID) + `}`))
			return
		}
		_, _ = w.Write([]byte(`{"result":` + res + `,"error":null,"id":` + string(req.ID) + `}`))
	}))
	t.Cleanup(srv.Close)
	return srv
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
		srv := rpcStub(t, c.results)
		raw, _ := json.Marshal(map[string]any{"coin_name": c.coin, "rpc_url": srv.URL})
		b, err := bchain.NewBackend(&bchain.Config{CoinName: c.coin, RPCURL: srv.URL, Raw: raw}, bchain.Env{Log: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.Fees.EstimateFee(context.Background(), 6, true)
		if err != nil || got != c.want {
			t.Errorf("%s %v: %d %v, want %d", c.coin, c.results, got, err, c.want)
		}
	}
	srv := rpcStub(t, map[string]string{"estimatefee": "0"})
	raw, _ := json.Marshal(map[string]any{"coin_name": "Bcash", "rpc_url": srv.URL})
	b, _ := bchain.NewBackend(&bchain.Config{CoinName: "Bcash", RPCURL: srv.URL, Raw: raw}, bchain.Env{Log: slog.New(slog.DiscardHandler)})
	if _, err := b.Fees.EstimateFee(context.Background(), 6, true); err == nil || errors.Is(err, bchain.ErrInvalidData) {
		t.Errorf("no estimate and no relay fee: %v", err)
	}
}
