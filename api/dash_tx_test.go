package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	_ "github.com/openexplorer/blockbook/bchain/coins/dash" // registers Dash
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/tools/apitest"
)

// Real Dash testnet special txs (Dash's documentation records them with
// dashd's getrawtransaction answer): an asset unlock, which has no inputs
// and pays the payload's fee of 70000 duffs from the credit pool, and a
// ProRegTx.
const (
	dashAssetUnlockTxid = "fb1b419b2b909f2ddb7fabee91d8e1aa7bb8e7114c83712ff20ba1859ec57b30"
	dashAssetUnlockHex  = "03000900000190cff40500000000232103d2c317552f5617f534065b9693fd4d7a8925daacdb9d44e908f9ffb0d285ea61ac000000009101650000000000000070110100db0400006f0f4a04d9a37a8c7791e90428d596d0caf5dc85292537ff92ffd361300c3101a533b35ae1d7685c6c795b7344963d48589d536a1c2b22e6a580b46439adaaf851b4243b48be81d508ef3ff622bcba26030b5bf8aa404dd3b5876727f4112a9daf99f27d250059679ae5abd30bc3029deeeb7267c1fa6204f6976a3a7a2512ea"
)

// dashdTxStandIn answers getrawtransaction for the txs given, in dashd's
// JSON-RPC form (no dashd runs here); any other call is a node error.
func dashdTxStandIn(t *testing.T, txs map[string]string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			ID     any    `json:"id"`
			Method string `json:"method"`
			Params []any  `json:"params"`
		}
		_ = json.Unmarshal(body, &req)
		resp := map[string]any{"id": req.ID, "result": nil, "error": map[string]any{"code": -32601, "message": "Method not found"}}
		if req.Method == "getrawtransaction" && len(req.Params) > 0 {
			if raw, ok := txs[req.Params[0].(string)]; ok {
				resp["result"], resp["error"] = raw, nil
			} else {
				resp["error"] = map[string]any{"code": -5, "message": "No such mempool or blockchain transaction"}
			}
		}
		if resp["error"] != nil {
			w.WriteHeader(http.StatusInternalServerError)
		}
		_ = json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestDashSpecialTxThroughAPI renders a real asset unlock tx through the
// query service: coinSpecific carries the decoded payload, and the fee is
// the payload's fee as dashd reports it.
func TestDashSpecialTxThroughAPI(t *testing.T) {
	url := dashdTxStandIn(t, map[string]string{dashAssetUnlockTxid: dashAssetUnlockHex})
	data, _ := json.Marshal(map[string]any{"coin_name": "Dash Testnet", "rpc_url": url, "block_notifications": "none"})
	cfg, err := bchain.ParseConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bchain.NewBackend(cfg, bchain.Env{Log: apitest.Quiet()})
	if err != nil {
		t.Fatal(err)
	}
	store := apitest.OpenStore(t, db.Options{ChainType: bchain.ChainBitcoinType, Coin: "Dash Testnet", Network: "test"})
	s := api.NewUtxoService(store, b, nil, api.Config{Log: apitest.Quiet(), Build: api.BuildInfo{Version: "test"}})
	tx, err := s.Tx(context.Background(), dashAssetUnlockTxid)
	if err != nil {
		t.Fatal(err)
	}
	if tx.Txid != dashAssetUnlockTxid || tx.Version != 3 || len(tx.Vin) != 0 || len(tx.Vout) != 1 {
		t.Fatalf("tx %+v", tx)
	}
	if tx.Value.String() != "99930000" || tx.ValueIn == nil || tx.ValueIn.String() != "0" || tx.Fees == nil || tx.Fees.String() != "70000" {
		t.Errorf("value %v valueIn %v fees %v, want 99930000, 0, 70000", tx.Value, tx.ValueIn, tx.Fees)
	}
	wire, err := json.Marshal(tx)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		CoinSpecific struct {
			Type          int    `json:"type"`
			TypeName      string `json:"typeName"`
			AssetUnlockTx struct {
				Index           uint64 `json:"index"`
				Fee             string `json:"fee"`
				RequestedHeight uint32 `json:"requestedHeight"`
				QuorumHash      string `json:"quorumHash"`
			} `json:"assetUnlockTx"`
		} `json:"coinSpecific"`
	}
	if err := json.Unmarshal(wire, &got); err != nil {
		t.Fatal(err)
	}
	cs := got.CoinSpecific
	if cs.Type != 9 || cs.TypeName != "assetUnlockTx" || cs.AssetUnlockTx.Index != 101 || cs.AssetUnlockTx.Fee != "70000" ||
		cs.AssetUnlockTx.RequestedHeight != 1243 || cs.AssetUnlockTx.QuorumHash != "01310c3061d3ff92ff37252985dcf5cad096d52804e991778c7aa3d9044a0f6f" {
		t.Errorf("coinSpecific %s", wire)
	}
}
