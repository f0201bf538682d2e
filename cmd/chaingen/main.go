// Command chaingen writes deterministic regtest chains to a block file and
// submits such files to a node.
//
//	chaingen -out chain.blk -blocks 800 -txs 150000 [-seed chaingen]
//	chaingen -submit chain.blk -rpc http://127.0.0.1:18443 -rpcuser u -rpcpass p
//
// Generating twice with the same flags produces byte-identical files.
// Submitting resumes after the node's tip if the node already has a prefix
// of the file's chain.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/wire/v2"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaingen:", err)
		os.Exit(1)
	}
}

var params = &chaincfg.RegressionNetParams

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("chaingen", flag.ContinueOnError)
	out := fs.String("out", "", "write a generated chain to this block file")
	blocks := fs.Int("blocks", 800, "blocks to generate (including the 110 coinbase-only ones)")
	txs := fs.Int("txs", 150_000, "approximate number of non-coinbase transactions")
	seed := fs.String("seed", "chaingen", "seed for keys and random choices")
	submit := fs.String("submit", "", "submit the chain in this block file to a node")
	rpcURL := fs.String("rpc", "http://127.0.0.1:18443", "node RPC URL (with -submit)")
	user := fs.String("rpcuser", "", "node RPC user (with -submit)")
	pass := fs.String("rpcpass", "", "node RPC password (with -submit)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case (*out == "") == (*submit == ""):
		return errors.New("use exactly one of -out and -submit")
	case *out != "":
		return generate(*out, *blocks, *txs, *seed, stdout)
	default:
		return submitFile(ctx, *submit, regtest.NewClient(*rpcURL, *user, *pass), stdout)
	}
}

func generate(path string, blocks, txs int, seed string, stdout io.Writer) error {
	start := time.Now()
	g := chaingen.New(params, seed)
	if err := g.Demo(chaingen.BenchSpec(params, blocks, txs)); err != nil {
		return err
	}
	genTime := time.Since(start)
	if err := chaingen.WriteBlocksFile(path, g.Blocks()); err != nil {
		return err
	}
	h, hash := g.Tip()
	report(stdout, "wrote %s: %d blocks, %d txs, tip %s (generated in %v)\n",
		path, h, countTxs(g.Blocks()), hash, genTime.Round(time.Millisecond))
	return nil
}

// report prints a progress line. A failed write to the terminal is no
// reason to stop generating or submitting, so its error is dropped.
func report(w io.Writer, format string, args ...any) {
	_, _ = fmt.Fprintf(w, format, args...)
}

func countTxs(blocks []*wire.MsgBlock) int {
	n := 0
	for _, b := range blocks[1:] {
		n += len(b.Transactions) - 1
	}
	return n
}

func submitFile(ctx context.Context, path string, c *regtest.Client, stdout io.Writer) error {
	blocks, err := chaingen.ReadBlocksFile(path)
	if err != nil {
		return err
	}
	if len(blocks) == 0 || blocks[0].BlockHash() != *params.GenesisHash {
		return fmt.Errorf("%s does not start with the regtest genesis block", path)
	}
	from, err := resumeHeight(ctx, c, blocks)
	if err != nil {
		return err
	}
	start := time.Now()
	for h := from; h < len(blocks); h++ {
		if err := c.SubmitBlock(ctx, blocks[h]); err != nil {
			return fmt.Errorf("block %d: %w", h, err)
		}
		if h%100 == 0 {
			report(stdout, "submitted block %d/%d\n", h, len(blocks)-1)
		}
	}
	report(stdout, "node has the chain up to block %d (%d submitted in %v)\n",
		len(blocks)-1, len(blocks)-from, time.Since(start).Round(time.Millisecond))
	return nil
}

// resumeHeight returns the first block the node lacks, refusing nodes that
// follow a different chain.
func resumeHeight(ctx context.Context, c *regtest.Client, blocks []*wire.MsgBlock) (int, error) {
	height, hash, err := c.BestBlock(ctx)
	if err != nil {
		return 0, err
	}
	if int(height) >= len(blocks) {
		return 0, fmt.Errorf("node is at height %d, beyond the file's %d blocks", height, len(blocks)-1)
	}
	if want := blocks[height].BlockHash().String(); hash != want {
		return 0, fmt.Errorf("node tip %d %s is not block %s of the file", height, hash, want)
	}
	return int(height) + 1, nil
}
