package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/mesh"
	"github.com/openexplorer/blockbook/tools/querytime"
)

// meshBench is -mesh: time the Mesh front too.
var meshBench bool

// timeMesh times the Mesh front's heavy reads on the same index: /block
// of the chain's largest block, /account/balance of the busiest address
// at a block a quarter and three quarters up the blocks with txs (the two
// ways the balance is computed), and the first page of /search/transactions for it.
func timeMesh(front func(func(*api.UtxoService) http.Handler) opener, blockTxs []int, whale string, cold, warm int) error {
	open := front(func(svc *api.UtxoService) http.Handler {
		return mesh.New(svc, svc, svc, mesh.Options{Blockchain: "Regtest", Network: "regtest", Symbol: "rBTC", Decimals: 8,
			Log: slog.New(slog.DiscardHandler)})
	})
	largest := 0
	for h, n := range blockTxs {
		if n > blockTxs[largest] {
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
	tip := len(blockTxs) - 1
	// Past heights a quarter and three quarters up the blocks with txs
	// (a short whale chain's first hundred blocks are coinbases only).
	first := 0
	for first < tip && blockTxs[first] < 2 {
		first++
	}
	low, high := first+(tip-first)/4, first+3*(tip-first)/4
	// How api.LedgerBalance computes it: from the tip in the newer half
	// of the chain, else summed up from the genesis.
	way := func(h int) string {
		if h >= tip/2 {
			return "from the tip"
		}
		return "sum up"
	}
	queries := []struct {
		name string
		req  string
	}{
		{fmt.Sprintf("mesh /block %d (%d txs)", largest, blockTxs[largest]),
			post("/block", map[string]any{"block_identifier": map[string]any{"index": largest}})},
		{fmt.Sprintf("mesh /account/balance at %d (%s)", low, way(low)),
			post("/account/balance", map[string]any{"account_identifier": account, "block_identifier": map[string]any{"index": low}})},
		{fmt.Sprintf("mesh /account/balance at %d (%s)", high, way(high)),
			post("/account/balance", map[string]any{"account_identifier": account, "block_identifier": map[string]any{"index": high}})},
		{"mesh /search/transactions (first 100)", post("/search/transactions", map[string]any{"account_identifier": account})},
	}
	for _, q := range queries {
		if err := querytime.TimeQuery(open, q.name, []string{q.req}, cold, warm); err != nil {
			return err
		}
	}
	return nil
}
