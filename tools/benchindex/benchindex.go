// Package benchindex builds the index of a generated chain directly with
// the bulk loader (no node, no blockbook process), once per directory:
// what the query benchmarks (cmd/querybench, cmd/xpubbench) measure
// against.
package benchindex

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/rocksdb"
)

// doneMark is the file a complete build leaves in its directory; a
// directory without it (an interrupted build) is built again.
const doneMark = "BENCH-COMPLETE"

// Build indexes blocks (heights 0, 1, …) into dir as a regtest index
// with the bulk loader in one round (one sorted file per column family,
// as after compaction), unless dir already holds a complete build.
func Build(dir string, parser *btc.Parser, blocks []*wire.MsgBlock) error {
	done := filepath.Join(dir, doneMark)
	if _, err := os.Stat(done); err == nil {
		return nil
	}
	fmt.Fprintf(os.Stderr, "indexing the chain (once; cached in %s)\n", dir)
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	d, err := rocksdb.Open(db.Options{Path: dir, ChainType: bchain.ChainBitcoinType, Coin: "Regtest", Network: "regtest",
		Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	err = load(d, parser, blocks)
	d.Close()
	if err != nil {
		return fmt.Errorf("indexing the chain into %s: %w", dir, err)
	}
	return os.WriteFile(done, nil, 0o644)
}

// load connects the blocks through one bulk-load round.
func load(d *db.DB, parser *btc.Parser, blocks []*wire.MsgBlock) error {
	x, err := db.NewUtxoIndex(d, parser, 300, db.FilterParams{})
	if err != nil {
		return err
	}
	l, err := x.NewBulkLoader(db.BulkOptions{RoundBytes: 1 << 30, CacheBytes: 1 << 30, Workers: 2})
	if err != nil {
		return err
	}
	for h, b := range blocks {
		var buf bytes.Buffer
		if err := b.Serialize(&buf); err != nil {
			return err
		}
		blk, err := parser.ParseBlock(buf.Bytes())
		if err != nil {
			return fmt.Errorf("block %d: %w", h, err)
		}
		blk.Height = uint32(h)
		if err := l.ConnectBlock(blk); err != nil {
			return err
		}
	}
	_, err = l.Finish()
	return err
}
