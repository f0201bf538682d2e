package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"

	"github.com/openexplorer/blockbook/tools/chaingen"
)

// whaleBlocks and whaleTxs are -whaleblocks and -whaletxs: the shape of
// the whale chain (chaingen.Whale, as cmd/syncbench -chain whale makes
// it) queried without -chain. The default is syncbench's chain; a short
// one has large blocks: 125 blocks and ~54,000 txs asked give 11,862 txs
// (the first blocks with txs lack coins for more), the last block 2,410
// of them, for the Mesh /block benchmark. Asking more per block overflows
// the 4 MWU weight limit (2,900 and 3,050 per block: 4.2 and 4.1 MWU).
var whaleBlocks, whaleTxs int

// whaleChain returns the cached whale chain file of that shape,
// generating it the first time (as syncbench does, the same seed).
func whaleChain() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "openexplorer-blockbook", "bench", fmt.Sprintf("whale-%d-%d.blk", whaleBlocks, whaleTxs))
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	fmt.Fprintf(os.Stderr, "generating the whale chain of %d blocks with ~%d txs (once; cached in %s)\n", whaleBlocks, whaleTxs, path)
	start := time.Now()
	g := chaingen.New(&chaincfg.RegressionNetParams, "whale")
	if err := g.Whale(chaingen.WhaleBenchSpec(&chaincfg.RegressionNetParams, whaleBlocks, whaleTxs)); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	if err := chaingen.WriteBlocksFile(path, g.Blocks()); err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, "generated in %v\n", time.Since(start).Round(time.Second))
	return path, nil
}
