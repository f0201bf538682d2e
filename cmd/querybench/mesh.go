package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/mesh"
)

// meshBench is -mesh: time the Mesh front too.
var meshBench bool

// timeMesh times the Mesh front's heavy reads on the same index: /block
// of the chain's largest block, /account/balance of the busiest address
// at a block a quarter and three quarters up the chain (the two ways the
// balance is computed), and the first page of /search/transactions for it.
func timeMesh(front func(func(*api.UtxoService) http.Handler) opener, blocks []*wire.MsgBlock, whale string, cold, warm int) error {
	open := front(func(svc *api.UtxoService) http.Handler {
		return mesh.New(svc, svc, svc, mesh.Options{Blockchain: "Regtest", Network: "regtest", Symbol: "rBTC", Decimals: 8,
			Log: slog.New(slog.DiscardHandler)})
	})
	largest := 0
	for h, b := range blocks {
		if len(b.Transactions) > len(blocks[largest].Transactions) {
			largest = h
		}
	}
	network := map[string]any{"blockchain": "Regtest", "network": "regtest"}
	post := func(path string, body map[string]any) string {
		body["network_identifier"] = network
		b, _ := json.Marshal(body)
		return "POST " + path + " " + string(b)
	}
	account := map[string]any{"address": whale}
	tip := len(blocks) - 1
	queries := []struct {
		name string
		req  string
	}{
		{fmt.Sprintf("mesh /block %d (%d txs)", largest, len(blocks[largest].Transactions)),
			post("/block", map[string]any{"block_identifier": map[string]any{"index": largest}})},
		{fmt.Sprintf("mesh /account/balance at %d (sum up)", tip/4),
			post("/account/balance", map[string]any{"account_identifier": account, "block_identifier": map[string]any{"index": tip / 4}})},
		{fmt.Sprintf("mesh /account/balance at %d (from the tip)", 3*tip/4),
			post("/account/balance", map[string]any{"account_identifier": account, "block_identifier": map[string]any{"index": 3 * tip / 4}})},
		{"mesh /search/transactions (first 100)", post("/search/transactions", map[string]any{"account_identifier": account})},
	}
	for _, q := range queries {
		if err := timeQuery(open, q.name, []string{q.req}, cold, warm); err != nil {
			return err
		}
	}
	return nil
}
