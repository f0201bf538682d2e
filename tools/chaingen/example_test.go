package chaingen_test

import (
	"context"
	"fmt"
	"os"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
)

// A typical integration test: build the demo chain, feed it to btcd, point
// the indexer at the node and compare what it reports with the ledger.
func Example() {
	ctx := context.Background()
	g := chaingen.New(&chaincfg.RegressionNetParams, "my-test")
	if err := g.Demo(chaingen.DefaultDemo()); err != nil {
		panic(err)
	}
	dir, _ := os.MkdirTemp("", "node")
	defer os.RemoveAll(dir)
	node, err := regtest.Start(ctx, regtest.Options{Dir: dir, TxIndex: true})
	if err != nil {
		panic(err)
	}
	defer node.Stop()
	if err := g.Submit(ctx, node, 1); err != nil {
		panic(err)
	}

	l := g.Ledger()
	addr, _ := g.Address(chaingen.P2TR, chaingen.DemoIndex)
	a := l.Addresses[addr]
	fmt.Println(l.TipHeight, a.TxCount(), a.Balance)
	// ... start the indexer against node.RPCURL and compare its answers.
}
