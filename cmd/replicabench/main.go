// Command replicabench measures API replicas (-replica; not run in CI).
//
// It builds a chain (the demo chain plus -blocks blocks of -txs payments),
// submits it to a btcd regtest node and syncs the blockbook binary to it
// (the primary), starts two replicas on the primary's datadir and nginx in
// front of them (tools/nginxlb), then:
//
//   - runs a fixed REST mix (status, block-index, block, address with txids,
//     address basic, utxo) with -conns concurrent keep-alive clients for
//     -duration through the balancer in front of the primary alone, the
//     primary and one replica, and the primary and two replicas, printing
//     requests/s and the CPU time (user+sys) of every process involved,
//     the load generator included: on a small machine the cores are shared,
//     and that accounting is what bounds the scaling;
//
//   - submits -syncblocks more blocks and, while the primary syncs them
//     (with the REST mix still running through the balancer), records when
//     each height first shows on the primary and on each replica (status
//     polled every 20 ms) and prints the replicas' lag.
//
//     go build -o bin/blockbook . && go run ./cmd/replicabench -blockbook bin/blockbook
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"

	"github.com/openexplorer/blockbook/tools/benchproc"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
)

type benchOpts struct {
	bin        string
	blocks     int
	txs        int
	syncBlocks int
	duration   time.Duration
	conns      int
	keep       bool
}

func main() {
	var o benchOpts
	flag.StringVar(&o.bin, "blockbook", "bin/blockbook", "blockbook binary")
	flag.IntVar(&o.blocks, "blocks", 300, "blocks added to the demo chain before the measurements")
	flag.IntVar(&o.txs, "txs", 10, "payments per added block")
	flag.IntVar(&o.syncBlocks, "syncblocks", 200, "blocks submitted while the replicas' lag is measured")
	flag.DurationVar(&o.duration, "duration", 15*time.Second, "measured time per configuration")
	flag.IntVar(&o.conns, "conns", 16, "concurrent REST clients")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory (logs, node data, index)")
	flag.Parse()
	if o.blocks < 1 || o.txs < 1 || o.syncBlocks < 1 || o.conns < 1 || o.duration <= 0 {
		fmt.Fprintln(os.Stderr, "replicabench: -blocks, -txs, -syncblocks, -conns and -duration must be positive")
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "replicabench:", err)
		os.Exit(1)
	}
}

func run(o benchOpts) error {
	ctx := context.Background()
	work, err := os.MkdirTemp("", "replicabench-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Println("work directory:", work)
	} else {
		defer os.RemoveAll(work)
	}
	g := chaingen.New(&chaincfg.RegressionNetParams, "replicabench")
	if err := g.Demo(chaingen.DefaultDemo()); err != nil {
		return err
	}
	if err := g.Extend(o.blocks, o.txs); err != nil {
		return err
	}
	base := g.Height()
	ledger := g.Ledger()
	if err := g.Extend(o.syncBlocks, o.txs); err != nil {
		return err
	}
	node, err := regtest.Start(ctx, regtest.Options{Dir: filepath.Join(work, "node")})
	if err != nil {
		return err
	}
	defer func() { _ = node.Stop() }()
	if err := chaingen.SubmitBlocks(ctx, node, g.Blocks()[:base+1], 1); err != nil {
		return err
	}
	fmt.Printf("chain: %d blocks (%d more for the lag run), %d addresses\n", base, o.syncBlocks, len(ledger.Addresses))
	start := time.Now()
	primary, err := benchproc.Start(ctx, benchproc.Options{Bin: o.bin, Work: mkdir(work, "primary"), Node: node, Height: uint32(base)})
	if err != nil {
		return err
	}
	defer primary.Stop()
	fmt.Printf("primary synced in %s\n", time.Since(start).Round(time.Millisecond))
	var reps []*replicaProc
	for i := range 2 {
		r, err := startReplica(ctx, o.bin, filepath.Join(work, "primary"), mkdir(work, fmt.Sprintf("replica%d", i+1)), uint32(base))
		if err != nil {
			return err
		}
		defer r.stop()
		reps = append(reps, r)
	}
	mix := restMix(ledger, uint32(base))
	procs := []proc{{"primary", primary.Pid()}, {"replica 1", reps[0].pid()}, {"replica 2", reps[1].pid()}, {"btcd", node.Pid()}}
	for n := 0; n <= len(reps); n++ {
		servers := []string{primary.Public}
		for _, r := range reps[:n] {
			servers = append(servers, r.public)
		}
		if err := measure(ctx, o, work, fmt.Sprintf("%d replicas", n), servers, mix, procs); err != nil {
			return err
		}
	}
	return measureLag(ctx, o, work, g, base, node, primary, reps, mix, procs)
}

func mkdir(parent, name string) string {
	dir := filepath.Join(parent, name)
	_ = os.MkdirAll(dir, 0o755)
	return dir
}
