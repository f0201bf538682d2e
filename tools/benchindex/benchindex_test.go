package benchindex

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/rocksdb"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// Build indexes the whole chain, and a second Build on the complete
// directory leaves it as it is.
func TestBuild(t *testing.T) {
	params := &chaincfg.RegressionNetParams
	g := chaingen.New(params, "benchindex")
	if err := g.Extend(20, 3); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "index")
	parser := btc.NewParser(params)
	if err := Build(dir, parser, g.Blocks()); err != nil {
		t.Fatal(err)
	}
	stamp := filepath.Join(dir, "untouched")
	if err := os.WriteFile(stamp, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Build(dir, parser, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stamp); err != nil {
		t.Fatalf("a complete build was redone: %v", err)
	}
	d, err := rocksdb.Open(db.Options{Path: dir, ChainType: bchain.ChainBitcoinType, Coin: "Regtest", Network: "regtest"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tip, ok, err := db.ReadTip(d)
	h, hash := g.Tip()
	if err != nil || !ok || tip.Height != uint32(h) || tip.Hash.String() != hash.String() {
		t.Fatalf("tip %+v %v %v, want %d %s", tip, ok, err, h, hash)
	}
}
