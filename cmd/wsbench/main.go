// Command wsbench measures blockbook's websocket API under many concurrent
// wallet connections (not run in CI).
//
// It starts a btcd regtest node with a generated demo chain, runs the
// blockbook binary against it, opens -conns websocket connections from
// -procs client processes (this binary re-executed in client mode; each
// process raises its open-file limit to the hard limit), subscribes every
// connection to new blocks and to 5 addresses of its own, then sends
// payments to subscribed addresses with sendrawtransaction and mines blocks
// holding them. It prints the notification latencies (wall clock; all
// processes share the machine), the messages delivered per second and the
// server's memory before and with the connections.
//
//	go build -o bin/blockbook . && go run ./cmd/wsbench -blockbook bin/blockbook
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/tools/benchproc"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
)

// seed derives the chain's keys and the subscribed addresses.
const seed = "wsbench"

type benchOpts struct {
	bin         string
	conns       int
	procs       int
	blocks      int
	txs         int // per block
	outputs     int // per tx, each to a different connection
	dial        int
	compress    bool
	newBlockTxs bool
	keep        bool
}

func main() {
	var o benchOpts
	var c clientOpts
	client := flag.Bool("client", false, "internal: run as a client process")
	flag.StringVar(&o.bin, "blockbook", "bin/blockbook", "blockbook binary")
	flag.IntVar(&o.conns, "conns", 15000, "concurrent websocket connections")
	flag.IntVar(&o.procs, "procs", 0, "client processes (default: one per 4000 connections)")
	flag.IntVar(&o.blocks, "blocks", 5, "blocks to mine")
	flag.IntVar(&o.txs, "txs", 20, "payments sent before each block")
	flag.IntVar(&o.outputs, "outputs", 50, "outputs per payment, each to an address of a different connection")
	flag.IntVar(&o.dial, "dial", 64, "concurrent dials per client process")
	flag.BoolVar(&o.compress, "compress", true, "negotiate permessage-deflate, as @trezor/blockchain-link (the ws package) does")
	flag.BoolVar(&o.newBlockTxs, "newblocktxs", false, "subscribe addresses with newBlockTxs (confirmation notifications; Trezor Suite does not)")
	flag.BoolVar(&o.keep, "keep", false, "keep the work directory (blockbook log, node data)")
	flag.StringVar(&c.url, "url", "", "internal: websocket URL (client mode)")
	flag.IntVar(&c.first, "first", 0, "internal: first connection index (client mode)")
	flag.IntVar(&c.n, "n", 0, "internal: connections (client mode)")
	flag.Parse()
	if *client {
		c.seed, c.dial, c.compress, c.newBlockTxs = seed, o.dial, o.compress, o.newBlockTxs
		runClient(c)
		return
	}
	if o.procs <= 0 {
		o.procs = max(1, (o.conns+3999)/4000)
	}
	if o.conns < 1 || o.outputs < 1 || o.outputs > o.conns || o.txs < 1 || o.blocks < 1 {
		fmt.Fprintln(os.Stderr, "wsbench: need -conns ≥ -outputs ≥ 1, -txs ≥ 1, -blocks ≥ 1")
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "wsbench:", err)
		os.Exit(1)
	}
}

func run(o benchOpts) error {
	ctx := context.Background()
	limit := benchproc.RaiseNoFile() // inherited by blockbook
	work, err := os.MkdirTemp("", "wsbench-")
	if err != nil {
		return err
	}
	if o.keep {
		fmt.Println("work directory:", work)
	} else {
		defer os.RemoveAll(work)
	}

	// A demo chain whose tip is recent: btcd keeps mined txs in its mempool
	// while its tip is over a day old, unlike production nodes.
	spec := chaingen.DefaultDemo()
	const step = time.Minute
	g := chaingen.New(&chaincfg.RegressionNetParams, seed,
		chaingen.WithTimestamps(time.Now().Add(-time.Duration(spec.Blocks+1)*step), step))
	if err := g.Demo(spec); err != nil {
		return err
	}
	node, err := regtest.Start(ctx, regtest.Options{Dir: filepath.Join(work, "node")})
	if err != nil {
		return err
	}
	defer node.Stop()
	if err := g.Submit(ctx, node, 1); err != nil {
		return err
	}
	srv, err := startBlockbook(ctx, o.bin, work, node, g)
	if err != nil {
		return err
	}
	defer srv.Stop()

	time.Sleep(2 * time.Second) // let the post-sync work settle before measuring
	before := readMem(srv.Pid())

	tr := newTracker()
	clients, err := startClients(o, wsURL(srv), tr)
	if err != nil {
		return err
	}
	defer clients.stop()
	connectStart := time.Now()
	if err := tr.waitReady(len(clients.cmds)); err != nil {
		return err
	}
	connected := time.Since(connectStart)
	if got := connections(srv); got >= 0 && got < o.conns {
		return fmt.Errorf("server reports %d websocket connections, want %d", got, o.conns)
	}
	time.Sleep(2 * time.Second)
	with := readMem(srv.Pid())

	res, err := notify(ctx, o, g, node, tr)
	if err != nil {
		return fmt.Errorf("%w (blockbook log: %s; run with -keep to keep it)", err, srv.LogPath)
	}
	after := readMem(srv.Pid())
	metrics := srv.Metrics("blockbook_websocket_")
	clients.stop()

	report(o, limit, connected, before, with, after, res, tr, metrics)
	return nil
}

// phase is one burst of notifications: from just before the first send to
// the last receipt.
type phase struct {
	kind     string // "mempool" or "block"
	start    time.Time
	expected int
	height   uint32
	txids    []string
}

type results struct {
	phases []phase
	txSent map[string]time.Time // txid → sendrawtransaction returned
	blkAt  map[uint32]time.Time // height → submitblock returned
}

// notify sends o.txs payments before each of o.blocks blocks, waiting for
// every expected notification after each burst.
func notify(ctx context.Context, o benchOpts, g *chaingen.Generator, node *regtest.Node, tr *tracker) (*results, error) {
	res := &results{txSent: map[string]time.Time{}, blkAt: map[uint32]time.Time{}}
	k := 0 // payment counter
	stride := 7919
	if o.conns%stride == 0 {
		stride = 1
	}
	for b := 0; b < o.blocks; b++ {
		var txs []*wire.MsgTx
		ph := phase{kind: "mempool", start: time.Now()}
		for range o.txs {
			var outs []chaingen.Output
			for j := range o.outputs {
				i := k*o.outputs + j
				conn := (i * stride) % o.conns
				slot := (i / o.conns) % addrsPerConn
				a, err := g.Address(chaingen.P2WPKH, connAddr(conn, slot))
				if err != nil {
					return nil, err
				}
				outs = append(outs, chaingen.Output{Address: a, Value: 10_000})
			}
			k++
			tx, err := g.CreatePayment(outs, 2)
			if err != nil {
				return nil, err
			}
			txid, err := node.SendRawTransaction(ctx, tx)
			if err != nil {
				return nil, fmt.Errorf("sendrawtransaction: %w", err)
			}
			res.txSent[txid] = time.Now()
			txs = append(txs, tx)
			ph.txids = append(ph.txids, txid)
		}
		ph.expected = o.txs * o.outputs
		res.phases = append(res.phases, ph)
		if err := tr.waitTxs(ph.txids, 'm', ph.expected); err != nil {
			return nil, err
		}
		blk, err := g.AddBlock(txs...)
		if err != nil {
			return nil, err
		}
		h, _ := g.Tip()
		bp := phase{kind: "block", start: time.Now(), height: uint32(h), expected: o.conns, txids: ph.txids}
		if err := submitBlock(ctx, node, blk); err != nil {
			return nil, err
		}
		res.blkAt[uint32(h)] = time.Now()
		res.phases = append(res.phases, bp)
		if err := tr.waitBlock(uint32(h), o.conns); err != nil {
			return nil, err
		}
		if o.newBlockTxs {
			if err := tr.waitTxs(ph.txids, 'c', ph.expected); err != nil {
				return nil, err
			}
		}
	}
	return res, nil
}

// submitBlock is submitblock alone, so that its return time is the node's
// acceptance (regtest's SubmitBlock verifies with a second call).
func submitBlock(ctx context.Context, node *regtest.Node, b *wire.MsgBlock) error {
	var sb strings.Builder
	if err := b.Serialize(hexWriter{&sb}); err != nil {
		return err
	}
	var r *string
	if err := node.CallResult(ctx, &r, "submitblock", sb.String()); err != nil {
		return err
	}
	if r != nil {
		return fmt.Errorf("submitblock: %s", *r)
	}
	return nil
}

type hexWriter struct{ sb *strings.Builder }

func (h hexWriter) Write(p []byte) (int, error) {
	const digits = "0123456789abcdef"
	for _, c := range p {
		h.sb.WriteByte(digits[c>>4])
		h.sb.WriteByte(digits[c&15])
	}
	return len(p), nil
}

// clientSet is the client processes.
type clientSet struct {
	cmds  []*exec.Cmd
	once  sync.Once
	stdin []interface{ Close() error }
}

func startClients(o benchOpts, url string, tr *tracker) (*clientSet, error) {
	cs := &clientSet{}
	per := (o.conns + o.procs - 1) / o.procs
	for p := 0; p < o.procs; p++ {
		first := p * per
		n := min(per, o.conns-first)
		if n <= 0 {
			break
		}
		args := []string{"-client", "-url", url, "-first", strconv.Itoa(first), "-n", strconv.Itoa(n),
			"-dial", strconv.Itoa(o.dial), "-compress=" + strconv.FormatBool(o.compress),
			"-newblocktxs=" + strconv.FormatBool(o.newBlockTxs)}
		cmd := exec.Command(os.Args[0], args...)
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			return nil, err
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		cs.cmds, cs.stdin = append(cs.cmds, cmd), append(cs.stdin, stdin)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				tr.line(sc.Text())
			}
			tr.exitedWith(cmd.Wait())
		}()
	}
	return cs, nil
}

// stop closes the clients' stdin (they close their connections and exit).
func (cs *clientSet) stop() {
	cs.once.Do(func() {
		for _, in := range cs.stdin {
			_ = in.Close()
		}
		done := make(chan struct{})
		go func() {
			for _, c := range cs.cmds {
				_, _ = c.Process.Wait()
			}
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			for _, c := range cs.cmds {
				_ = c.Process.Kill()
			}
		}
	})
}

// readMem returns VmRSS and VmHWM of a process in bytes.
func readMem(pid int) [2]int64 {
	rss, hwm := benchproc.Mem(pid)
	return [2]int64{rss, hwm}
}
