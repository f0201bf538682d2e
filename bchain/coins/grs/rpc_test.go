package grs

import (
	"context"
	"encoding/hex"
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
	node := btctest.NewNode(t, func(method string, params []any) (any, *btctest.RPCError) {
		switch {
		case method == "getblock" && len(params) == 2 && params[0] == rec.Hash:
			return rec.Block, nil
		case method == "getblock":
			return nil, &btctest.RPCError{Code: -5, Message: "Block not found"}
		case method == "getrawtransaction":
			return nil, &btctest.RPCError{Code: -5, Message: "No such mempool or blockchain transaction. Use gettransaction for wallet transactions."}
		}
		return nil, btctest.MethodNotFound
	})
	b, err := btctest.Backend(t, map[string]any{"coin_name": "Groestlcoin", "rpc_url": node.URL, "block_notifications": "none"})
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
