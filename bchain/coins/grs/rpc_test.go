package grs

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc/btctest"
)

// The node path of a Groestlcoin backend: a block fetched with
// getblock (verbosity 0) is decoded with Grøstl ids and matched to the
// hash asked for, and a confirmed tx the node cannot find by id is read
// from its block by its single-SHA-256 txid. The node answers as
// groestlcoind does (JSON-RPC, error -5 for an unknown tx); no
// Groestlcoin node can run in the test suite.
func TestNodeGroestlcoin(t *testing.T) {
	var rec struct {
		Hash, Block string
		Tx          []string
	}
	btctest.ReadJSON(t, "electrumx_mainnet_2000000.json", &rec)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params []any           `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		resp := map[string]any{"id": req.ID, "result": nil, "error": nil}
		switch {
		case req.Method == "getblock" && len(req.Params) == 2 && req.Params[0] == rec.Hash:
			resp["result"] = rec.Block
		case req.Method == "getblock":
			resp["error"] = map[string]any{"code": -5, "message": "Block not found"}
		case req.Method == "getrawtransaction":
			resp["error"] = map[string]any{"code": -5, "message": "No such mempool or blockchain transaction. Use gettransaction for wallet transactions."}
		default:
			resp["error"] = map[string]any{"code": -32601, "message": "Method not found"}
		}
		_ = json.NewEncoder(w).Encode(resp)
	}))
	defer srv.Close()
	cfgJSON, _ := json.Marshal(map[string]any{"coin_name": "Groestlcoin", "rpc_url": srv.URL, "block_notifications": "none"})
	cfg, err := bchain.ParseConfig(cfgJSON)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bchain.NewBackend(cfg, bchain.Env{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hash, _ := bchain.ParseHash(rec.Hash)
	blk, err := b.Chain.Block(ctx, hash, 2000000)
	if err != nil || blk.Hash != hash || blk.Height != 2000000 || len(blk.Txs) != len(rec.Tx) {
		t.Fatalf("block: %v %v", blk, err)
	}
	txid, _ := bchain.ParseHash(rec.Tx[1])
	raw, err := b.Txs.RawTx(ctx, txid, hash)
	if err != nil {
		t.Fatalf("tx %s from its block: %v", rec.Tx[1], err)
	}
	if hex.EncodeToString(raw) != hex.EncodeToString(blk.Txs[1].Raw) {
		t.Errorf("tx %s: got another tx's bytes", rec.Tx[1])
	}
	if _, err := b.Txs.RawTx(ctx, hash, hash); err == nil {
		t.Error("a txid not in the block was found")
	}
}
