// Package optindex is the test kit of the optional indexes
// (db/optional/...): an empty in-memory regtest index with one of them on,
// block connects, the byte comparison of two indexes, and the regtest
// parser's reading of generated blocks.
package optindex

import (
	"bytes"
	"fmt"
	"log/slog"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/memdb"
)

// New opens an empty in-memory regtest index keeping keep blocks of undo
// data, with idx switched on.
func New(t testing.TB, idx db.OptionalIndex, keep int) *db.UtxoIndex {
	t.Helper()
	d, err := memdb.Open(db.Options{Path: t.TempDir(), ChainType: bchain.ChainBitcoinType, Coin: "Regtest", Network: "regtest",
		Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	x, err := db.NewUtxoIndex(d, btc.NewParser(&chaincfg.RegressionNetParams), keep, db.FilterParams{})
	if err != nil {
		t.Fatal(err)
	}
	if on, err := x.EnableOptional(idx, true); err != nil || !on {
		t.Fatalf("enable %s: %v %v", idx.Name(), on, err)
	}
	return x
}

// Connect connects blocks one by one.
func Connect(t testing.TB, x *db.UtxoIndex, blocks []*bchain.Block) {
	t.Helper()
	for _, b := range blocks {
		if err := x.ConnectBlock(b); err != nil {
			t.Fatalf("connect %d: %v", b.Height, err)
		}
	}
}

// RequireIdentical fails the test where two indexes' families differ.
func RequireIdentical(t testing.TB, a, b *db.UtxoIndex) {
	t.Helper()
	diffs, err := db.Diff(a.DB(), b.DB(), db.ColumnFamilies(bchain.ChainBitcoinType), 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Error(d)
	}
}

// Parse reads blocks (indexed by height) with the regtest parser.
func Parse(blocks []*wire.MsgBlock) ([]*bchain.Block, error) {
	p := btc.NewParser(&chaincfg.RegressionNetParams)
	out := make([]*bchain.Block, 0, len(blocks))
	for h, mb := range blocks {
		var buf bytes.Buffer
		if err := mb.Serialize(&buf); err != nil {
			return nil, err
		}
		blk, err := p.ParseBlock(buf.Bytes())
		if err != nil {
			return nil, fmt.Errorf("block %d: %w", h, err)
		}
		blk.Height = uint32(h)
		out = append(out, blk)
	}
	return out, nil
}

// RequireBulkEqualsPerBlock loads blocks[:bulk] with the bulk loader (in
// many small rounds, and in one) and connects the rest one by one, and
// requires the index to equal per-block connects of every block.
func RequireBulkEqualsPerBlock(t testing.TB, idx db.OptionalIndex, blocks []*bchain.Block, bulk int) {
	t.Helper()
	ref := New(t, idx, 10)
	Connect(t, ref, blocks)
	for _, opts := range []db.BulkOptions{{RoundBytes: 64 << 10, CacheBytes: 1}, {RoundBytes: 1 << 30, CacheBytes: 1 << 30}} {
		x := New(t, idx, 10)
		l, err := x.NewBulkLoader(opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range blocks[:bulk] {
			if err := l.ConnectBlock(b); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := l.Finish(); err != nil {
			t.Fatal(err)
		}
		Connect(t, x, blocks[bulk:])
		RequireIdentical(t, x, ref)
	}
}
