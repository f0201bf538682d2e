package main

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain/coins/btc"
	"github.com/openexplorer/blockbook/tools/benchindex"
	"github.com/openexplorer/blockbook/tools/querytime"
	"github.com/openexplorer/blockbook/tools/scalegen"
)

// TestRouteBench times a written list (a whale's page with full txs, the
// HD account without its xpub cache, a tx) over a tiny scale chain's
// index: every query answered, each sample written to the CSV.
func TestRouteBench(t *testing.T) {
	dir := t.TempDir()
	chainDir, indexDir := filepath.Join(dir, "chain"), filepath.Join(dir, "index")
	st, err := scalegen.Generate(chainDir, scalegen.Options{Txs: 2000, MaxBlockTxs: 40, Seed: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	chain, err := scalegen.Open(chainDir)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []*wire.MsgBlock
	for h := range chain.Tip() + 1 {
		raw, err := chain.Block(h)
		if err != nil {
			t.Fatal(err)
		}
		var b wire.MsgBlock
		if err := b.Deserialize(bytes.NewReader(raw)); err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, &b)
	}
	chain.Close()
	parser := btc.NewParser(&chaincfg.RegressionNetParams)
	if err := benchindex.Build(indexDir, parser, blocks); err != nil {
		t.Fatal(err)
	}
	whale, _, err := parser.AddressesFromAddrDesc(parser.OutputAddrDesc(scalegen.WhaleScript(0)))
	if err != nil {
		t.Fatal(err)
	}
	tx := blocks[len(blocks)/2].Transactions[1]
	specsFile, samples := filepath.Join(dir, "q.json"), filepath.Join(dir, "s.csv")
	if err := querytime.WriteSpecs(specsFile, []querytime.Spec{
		{Name: "whale txs", Paths: []string{"/api/v2/address/" + whale[0] + "?page=1&pageSize=25&details=txs"}},
		{Name: "xpub", Paths: []string{"/api/v2/xpub/" + st.Account.Xpub}, NoXpubCache: true},
		{Name: "tx", Paths: []string{"/api/v2/tx/" + btc.DisplayHash(tx.TxHash()).String()}},
	}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(samples)
	if err != nil {
		t.Fatal(err)
	}
	err = run(chainDir, indexDir, specsFile, 8<<20, 1, 2, querytime.Options{Runs: 2, Samples: f, Label: "x"})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(samples)
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// Per run: 1 cold and 2 warm for the page and the tx, 1 and 1 for the
	// xpub without its cache (as many warm as cold).
	if want := 2 * (3 + 2 + 3); len(rows) != want {
		t.Errorf("%d samples, want %d:\n%s", len(rows), want, b)
	}
}
