package main

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/rocksdb"
	"github.com/openexplorer/blockbook/tools/benchindex"
	"github.com/openexplorer/blockbook/tools/querytime"
	"github.com/openexplorer/blockbook/tools/scalegen"
)

// TestScaleQueries runs scale mode's query list once over a tiny scale
// chain (4,000 txs, indexed by the bulk loader): every query must be
// answered (200), the list must hold issue 46's queries and the HD
// account's, and the UTXO lists must be of the addresses scaleTargets
// says, with the counts it prints, checked here against the index.
func TestScaleQueries(t *testing.T) {
	dir := t.TempDir()
	chainDir, indexDir := filepath.Join(dir, "chain"), filepath.Join(dir, "index")
	if _, err := scalegen.Generate(chainDir, scalegen.Options{Txs: 4000, MaxBlockTxs: 40, Seed: 7}, nil); err != nil {
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
	parser := btc.NewParser(params)
	if err := benchindex.Build(indexDir, parser, blocks); err != nil {
		t.Fatal(err)
	}
	runs, only, dbCache, txidCacheMB = 1, nil, 8<<20, db.DefaultTxidCacheMB
	specsFile := filepath.Join(dir, "queries.json")
	if err := runScale(chainDir, indexDir, true, 1, 2, specsFile); err != nil {
		t.Fatal(err)
	}
	specs, err := querytime.ReadSpecs(specsFile)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	got := strings.Join(names, "\n")
	for _, want := range []string{
		`address page 1 \(details=txids, 1000 per page\)`, `address page 1 \(details=txs, 1000 per page\)`,
		`address page 1 \(details=txs, 25 per page\)`, `xpub page 1 \(details=txids, 1000 per page\)`,
		`xpub page 1 \(details=txids\), cache off`, `utxo of whale \d \((\d+) UTXOs\)`,
		`utxo of an address with (\d+)`, `utxo of the address with the most \((\d+)\)`, `tx lookup \(5 txs`,
	} {
		if !regexp.MustCompile("(?m)^" + want).MatchString(got) {
			t.Errorf("no query %q in the list:\n%s", want, got)
		}
	}
	d, err := rocksdb.Open(db.Options{Path: indexDir, ChainType: bchain.ChainBitcoinType, Coin: "Regtest", Network: "regtest",
		ReadOnly: true, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	utxos := func(addr string) int {
		desc, err := parser.AddrDescFromAddress(addr)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		if err := db.IterateUtxos(d, desc, func(*db.Utxo) (bool, error) { n++; return true, nil }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	var whaleMax int
	for w := range scalegen.NumWhales {
		a, _, _ := parser.AddressesFromAddrDesc(parser.OutputAddrDesc(scalegen.WhaleScript(w)))
		whaleMax = max(whaleMax, utxos(a[0]))
	}
	for _, s := range specs {
		m := regexp.MustCompile(`^utxo of (whale \d \((\d+) UTXOs\)|an address with (\d+)|the address with the most \((\d+)\))`).FindStringSubmatch(s.Name)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[2] + m[3] + m[4])
		if c := utxos(strings.TrimPrefix(s.Paths[0], "/api/v2/utxo/")); c != n || n == 0 {
			t.Errorf("%s: the address has %d UTXOs in the index", s.Name, c)
		}
		if m[2] != "" && n != whaleMax {
			t.Errorf("%s: the whales' largest UTXO list has %d", s.Name, whaleMax)
		}
	}
	t.Log(got)
}
