package main

import (
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/v2"

	"github.com/openexplorer/blockbook/tools/chaingen"
)

// chainKind is the generated chain's mix (-chain): "bench" or "whale".
var chainKind = "bench"

// chainName names the cached chain file and node directory; each mix has
// its own, so switching -chain never reuses the other's node.
func chainName(blocks, txs int) string {
	if chainKind == "whale" {
		return fmt.Sprintf("whale-%d-%d", blocks, txs)
	}
	return fmt.Sprintf("regtest-%d-%d", blocks, txs)
}

// generateWhale writes the whale-heavy chain (chaingen.Whale) to path.
func generateWhale(path string, blocks, txs int) error {
	g := chaingen.New(&chaincfg.RegressionNetParams, "whale")
	if err := g.Whale(chaingen.WhaleBenchSpec(&chaincfg.RegressionNetParams, blocks, txs)); err != nil {
		return err
	}
	return chaingen.WriteBlocksFile(path, g.Blocks())
}
