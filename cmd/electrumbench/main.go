// Command electrumbench measures blockbook's Electrum server (not run in
// CI).
//
// It generates a regtest chain in which one address is paid by -histtxs
// txs and another holds -utxos unspent outputs, loads it into a btcd node,
// runs the blockbook binary with -electrum against it, and times, on one
// connection each, Electrum's blockchain.scripthash.get_history and
// listunspent of those addresses beside the REST calls for the same data
// (/api/v2/address paged through every txid, /api/v2/utxo). Then it opens
// -conns Electrum connections, each subscribed to 5 script hashes of its
// own, sends payments to subscribed script hashes with sendrawtransaction
// and mines blocks holding them, and reports the notification latency
// (from just before the node was given the tx or block to the arrival of
// the script hash notification; wall clock, all on one machine).
//
//	go build -o bin/blockbook . && go run ./cmd/electrumbench -blockbook bin/blockbook
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/openexplorer/blockbook/tools/benchproc"
	"github.com/openexplorer/blockbook/tools/regtest"
)

type benchOpts struct {
	bin      string
	chain    chainSpec
	samples  int
	conns    int
	dial     int
	rounds   int
	txs      int
	outputs  int
	keep     bool
	skipSubs bool
	wait     time.Duration
	eaddr    string // the server's Electrum TCP address
	base     string // the server's public URL
}

func main() {
	var o benchOpts
	flag.StringVar(&o.bin, "blockbook", "bin/blockbook", "blockbook binary")
	flag.IntVar(&o.chain.histTxs, "histtxs", 25_000, "txs paying the history address")
	flag.IntVar(&o.chain.utxos, "utxos", 400, "unspent outputs of the UTXO address")
	flag.IntVar(&o.chain.perBlock, "perblock", 2_500, "payments per generated block")
	flag.IntVar(&o.samples, "samples", 50, "timed calls of each query")
	flag.IntVar(&o.conns, "conns", 5_000, "subscribed Electrum connections")
	flag.IntVar(&o.dial, "dial", 64, "concurrent dials")
	flag.IntVar(&o.rounds, "rounds", 5, "rounds of payments, each mined in a block")
	flag.IntVar(&o.txs, "txs", 20, "payments per round")
	flag.IntVar(&o.outputs, "outputs", 50, "outputs per payment, each to a subscribed script hash")
	flag.DurationVar(&o.wait, "wait", 30*time.Second, "how long to wait for a phase's notifications before counting the rest missing")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory (blockbook log, node data)")
	flag.BoolVar(&o.skipSubs, "nosubs", false, "only the query latencies")
	flag.Parse()
	if o.chain.histTxs < o.chain.utxos || o.chain.perBlock < 1 || o.samples < 1 || o.conns < 1 ||
		o.rounds*o.txs*o.outputs > o.conns*subsPerConn {
		fmt.Fprintln(os.Stderr, "electrumbench: need -histtxs ≥ -utxos, -perblock, -samples, -conns ≥ 1 and rounds×txs×outputs ≤ 5×conns")
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "electrumbench:", err)
		os.Exit(1)
	}
}

// run builds the chain and the stack, then measures.
//
// Long: the benchmark's steps in the order they run; split up, the
// sequence would be scattered over helpers that run once.
func run(o benchOpts) error {
	ctx := context.Background()
	limit := benchproc.RaiseNoFile()
	fmt.Printf("open-file limit %d; load before: %s\n", limit, loadAvg())
	work, err := os.MkdirTemp("", "electrumbench-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Println("work directory:", work)
	} else {
		defer os.RemoveAll(work)
	}
	start := time.Now()
	g, err := buildChain(o.chain)
	if err != nil {
		return err
	}
	fmt.Printf("chain of %d blocks generated in %v\n", g.Height(), time.Since(start).Round(time.Millisecond))
	node, err := regtest.Start(ctx, regtest.Options{Dir: filepath.Join(work, "node")})
	if err != nil {
		return err
	}
	defer node.Stop()
	start = time.Now()
	if err := g.Submit(ctx, node, 1); err != nil {
		return err
	}
	fmt.Printf("submitted to btcd in %v\n", time.Since(start).Round(time.Millisecond))
	eaddr, err := benchproc.FreeAddr()
	if err != nil {
		return err
	}
	o.eaddr = eaddr
	h, _ := g.Tip()
	start = time.Now()
	srv, err := benchproc.Start(ctx, benchproc.Options{Bin: o.bin, Work: work, Node: node, Height: uint32(h),
		Mempool: true, Timeout: 20 * time.Minute, Args: []string{"-electrum=" + eaddr,
			// every connection comes from 127.0.0.1
			fmt.Sprintf("-electrummaxconnsperip=%d", o.conns+100), fmt.Sprintf("-electrummaxconns=%d", o.conns+100)}})
	if err != nil {
		return err
	}
	defer srv.Stop()
	o.base = "http://" + srv.Public
	fmt.Printf("blockbook synced in %v\n", time.Since(start).Round(time.Millisecond))
	time.Sleep(2 * time.Second) // let the post-sync work settle before measuring

	q, err := measureQueries(eaddr, "http://"+srv.Public, g.Params(), o)
	if err != nil {
		return fmt.Errorf("%w (blockbook log: %s; run with -keep to keep it)", err, srv.LogPath)
	}
	printQueries(o, q)
	if o.skipSubs {
		return nil
	}
	rssBefore, _ := benchproc.Mem(srv.Pid())
	tr := newTracker()
	start = time.Now()
	conns, err := openSubscribers(eaddr, o.conns, o.dial, tr)
	if err != nil {
		return fmt.Errorf("%w (blockbook log: %s)", err, srv.LogPath)
	}
	defer closeAll(conns)
	connected := time.Since(start)
	time.Sleep(2 * time.Second)
	rssWith, _ := benchproc.Mem(srv.Pid())
	fmt.Printf("\n%d connections × %d subscriptions opened in %v; server RSS %d MiB before, %d MiB with them; load %s\n",
		o.conns, subsPerConn, connected.Round(time.Millisecond), rssBefore>>20, rssWith>>20, loadAvg())
	res, err := runRounds(ctx, g, node, tr, o)
	if err != nil {
		return fmt.Errorf("%w (blockbook log: %s)", err, srv.LogPath)
	}
	printNotify(o, res)
	fmt.Printf("load after: %s\n", loadAvg())
	return nil
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	if len(b) > 0 && b[len(b)-1] == '\n' {
		b = b[:len(b)-1]
	}
	return string(b)
}
