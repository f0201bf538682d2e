package tron

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/tools/trondouble"
)

func doubleBackend(t *testing.T, coin string, s *trondouble.Server) *Node {
	t.Helper()
	raw, _ := json.Marshal(s.Config(coin))
	cfg, err := bchain.ParseConfig(raw)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewBackend(coin, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b.Chain.(*Node)
}

// nodeAt is a client of a node answering everything at url.
func nodeAt(t *testing.T, url string) *Node {
	t.Helper()
	raw, _ := json.Marshal(map[string]any{"coin_name": "Tron", "rpc_url": url + "/jsonrpc",
		"tron_fullnode_http_url_template": url, "tron_solidity_http_url_template": url})
	cfg, err := bchain.ParseConfig(raw)
	if err != nil {
		t.Fatal(err)
	}
	n, err := NewNode(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// doubleChain is a mainnet client of a double serving a new chain with
// the given number of blocks (up to perBlock txs each).
func doubleChain(t *testing.T, o trondouble.Options, blocks, perBlock int) (*Node, *trondouble.Chain, *trondouble.Server) {
	t.Helper()
	c := trondouble.New(o)
	c.Mine(blocks, perBlock)
	s := trondouble.Serve(c)
	t.Cleanup(s.Close)
	return doubleBackend(t, "Tron", s), c, s
}

// A node on another network is refused before any block is read.
func TestWrongNetworkRefused(t *testing.T) {
	c := trondouble.New(trondouble.Options{Seed: 3})
	c.Mine(3, 2)
	s := trondouble.Serve(c)
	defer s.Close()
	ctx := context.Background()
	if _, _, err := doubleBackend(t, "Tron Testnet Nile", s).BestBlock(ctx); !errors.Is(err, bchain.ErrConfig) {
		t.Errorf("Nile against a mainnet node: %v", err)
	}
	h, hash, err := doubleBackend(t, "Tron", s).BestBlock(ctx)
	if err != nil || int64(h) != c.Tip().Number || hash != bchain.Hash(c.Tip().ID) {
		t.Errorf("mainnet: %d %s %v", h, hash, err)
	}
}

// Reorgs between the calls of one block: a block reorged away is not
// found, and infos of another block at the same height are refused.
func TestBlockAcrossReorg(t *testing.T) {
	n, c, s := doubleChain(t, trondouble.Options{Seed: 4, SolidDepth: 10}, 12, 5)
	ctx := context.Background()
	if _, _, err := n.BestBlock(ctx); err != nil {
		t.Fatal(err)
	}
	old := c.Tip()
	blk, err := n.Block(ctx, bchain.Hash(old.ID), 0)
	if err != nil || len(blk.Eth.Txs) != len(old.Txs) || int64(blk.Height) != old.Number {
		t.Fatalf("block %d: %+v %v", old.Number, blk, err)
	}
	var oldInfos []TxInfo
	if err := n.full.post(ctx, "/wallet/gettransactioninfobyblocknum", map[string]any{"num": old.Number}, &oldInfos); err != nil {
		t.Fatal(err)
	}
	if err := c.Reorg(2, 4); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Block(ctx, bchain.Hash(old.ID), 0); !errors.Is(err, bchain.ErrBlockNotFound) {
		t.Errorf("a reorged block: %v", err)
	}
	// Solidified heights are read from the solidity node, the others
	// over JSON-RPC; above the tip there is no block.
	for _, blk := range c.Blocks() {
		if h, err := n.BlockHash(ctx, uint32(blk.Number)); err != nil || h != bchain.Hash(blk.ID) {
			t.Errorf("hash at %d: %s %v", blk.Number, h, err)
		}
	}
	if s.Calls("/walletsolidity/getblock") < 2 {
		t.Error("no solidified hash read from the solidity node")
	}
	if _, err := n.BlockHash(ctx, uint32(c.Tip().Number)+1); !errors.Is(err, bchain.ErrBlockNotFound) {
		t.Errorf("above the tip: %v", err)
	}
	repl := c.Blocks()[old.Number]
	h, err := n.header(ctx, "eth_getBlockByHash", "0x"+bchain.Hash(repl.ID).String())
	if err != nil {
		t.Fatal(err)
	}
	var hb HTTPBlock
	if err := n.full.post(ctx, "/wallet/getblockbyid", map[string]any{"value": bchain.Hash(repl.ID).String()}, &hb); err != nil {
		t.Fatal(err)
	}
	if _, err := buildBlock(h, &hb, oldInfos, true); err == nil || !strings.Contains(err.Error(), "no info for tx") {
		t.Errorf("the replaced block's infos were taken: %v", err)
	}
}

// Node answers that are errors or malformed give errors, not panics.
func TestBadNodeAnswers(t *testing.T) {
	answers := map[string]string{
		"/walletsolidity/getblock": `{"Error": "class java.lang.NullPointerException : null"}`,
		"/wallet/getblockbyid":     `{"blockID": "zz"}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/jsonrpc" {
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"number":"0x5","hash":"0x00000000000000050000000000000000000000000000000000000000000000aa","parentHash":"0x","timestamp":"0x1","size":"0x1","transactions":[]}}`))
			return
		}
		_, _ = w.Write([]byte(answers[r.URL.Path]))
	}))
	defer srv.Close()
	n := nodeAt(t, srv.URL)
	ctx := context.Background()
	if _, _, err := n.BestBlock(ctx); err == nil || !strings.Contains(err.Error(), "NullPointerException") {
		t.Errorf("BestBlock: %v", err)
	}
	var h bchain.Hash
	h[7] = 5
	if _, err := n.Block(ctx, h, 5); err == nil {
		t.Error("a block with a bad id was taken")
	}
	// Malformed txs of a block.
	hdr := &rpcHeader{Hash: "0x" + strings.Repeat("00", 32), ParentHash: "0x" + strings.Repeat("00", 32), Transactions: []string{"a"}}
	for _, tx := range []string{
		`{"txID":"` + strings.Repeat("11", 32) + `","raw_data":{"contract":[]}}`,
		`{"txID":"` + strings.Repeat("11", 32) + `","raw_data":{"contract":[{"type":"TransferContract","parameter":{"value":{"owner_address":"41zz","to_address":"41"}}}]}}`,
		`{"txID":"xx","raw_data":{"contract":[{"type":"TransferContract","parameter":{"value":{}}}]}}`,
	} {
		var ht HTTPTx
		if err := json.Unmarshal([]byte(tx), &ht); err != nil {
			t.Fatal(err)
		}
		hb := &HTTPBlock{BlockID: strings.Repeat("00", 32), Transactions: []HTTPTx{ht}}
		infos := []TxInfo{{ID: ht.TxID}}
		if _, err := buildBlock(hdr, hb, infos, true); err == nil {
			t.Errorf("tx %s taken", tx)
		}
	}
}
