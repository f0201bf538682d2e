package main

import (
	"maps"
	"path/filepath"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/v2"

	"github.com/openexplorer/blockbook/bchain/coins/btc"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// The independent bound builds as many rows of each family as the sync's
// own bound on the demo chain (every script type, P2PK, OP_RETURN,
// same-block spends, taproot filters), so that it bounds the same work.
func TestIndependentBoundRows(t *testing.T) {
	g := chaingen.New(&chaincfg.RegressionNetParams, "indep")
	if err := g.Demo(chaingen.DefaultDemo()); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "chain.blk")
	if err := chaingen.WriteBlocksFile(file, g.Blocks()); err != nil {
		t.Fatal(err)
	}
	raws, err := rawBlocks(file)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	filters := db.FilterParams{P: 20, Scripts: db.FilterScriptsTaprootNoOrdinals, ZeroedKey: true}
	if _, err := lowerBoundRaw(raws, btc.NewParser(&chaincfg.RegressionNetParams), "Regtest", "regtest", filepath.Join(dir, "sync"), filters); err != nil {
		t.Fatal(err)
	}
	_, rows, err := independentBound(raws, filepath.Join(dir, "indep"), true)
	if err != nil {
		t.Fatal(err)
	}
	want, err := countRows(filepath.Join(dir, "sync"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := countRows(filepath.Join(dir, "indep"))
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range got {
		total += n
	}
	if !maps.Equal(got, want) || total != rows || want[db.CFAddresses] == 0 || want[db.CFBlockFilter] == 0 {
		t.Fatalf("rows per family: independent %v (%d built), sync's bound %v", got, rows, want)
	}
}
