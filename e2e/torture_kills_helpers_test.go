package e2e

// Helpers of TestTortureKills: the process under test with its metrics
// watched, the figures kept per phase, and the mempool churn.

import (
	"bufio"
	"context"
	"fmt"
	"math/rand"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/rocksdb"
	"github.com/openexplorer/blockbook/internal/promreg"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
)

// killer runs blockbook as a child process over one index directory and
// kills and restarts it, keeping the figures of each phase.
type killer struct {
	t        *testing.T
	node     *regtest.Node
	cfg, dir string
	rng      *rand.Rand

	c           *child
	w           *procWatch
	started     time.Time
	startHeight uint32 // the tip the running process first answered
	lastDisk    db.Tip // the index's tip when the last process ended
	prevDisk    *db.Tip
	lastFork    uint32 // fork height of the last reorg
	deadLogs    string // log of the last process that died
	phases      map[string]*phaseStats
}

// phaseStats are the figures of one phase.
type phaseStats struct {
	kills, resumed, midway int
	recovered              int // restarts that finished an interrupted bulk round
	refetched              uint64
	restarts               []time.Duration
}

func (k *killer) stats(name string) *phaseStats {
	if k.phases == nil {
		k.phases = map[string]*phaseStats{}
	}
	if k.phases[name] == nil {
		k.phases[name] = &phaseStats{}
	}
	return k.phases[name]
}

// report logs the phase's summary line. midway counts kills that landed
// inside the phase's subject (a bulk load or a reorg not yet finished;
// for following, a kill with a tip on disk).
func (ps *phaseStats) report(t *testing.T, phase string) {
	t.Helper()
	r := slices.Clone(ps.restarts)
	slices.Sort(r)
	var med, mx time.Duration
	if len(r) > 0 {
		med, mx = r[len(r)/2], r[len(r)-1]
	}
	tortureReport(t, "kills", "phase=%s kills=%d landed_inside=%d restarts_without_resync=%d/%d rounds_finished_on_open=%d restart_median=%s restart_max=%s blocks_refetched=%d lost=0",
		phase, ps.kills, ps.midway, ps.resumed, len(ps.restarts), ps.recovered, med.Round(time.Millisecond), mx.Round(time.Millisecond), ps.refetched)
}

// start runs a new process (bulk-mode flags, metrics on an internal port).
func (k *killer) start(env ...string) {
	addr := freePort(k.t)
	args := append(slices.Clone(killsBulkFlags), "-internal="+addr)
	k.started = time.Now()
	k.c = startChild(k.t, k.cfg, k.dir, append(args, env...)...)
	k.w = watchMetrics(k.c, "http://"+addr+"/metrics")
}

// restart starts a process after a kill and requires it to answer from the
// index it found: a best height of at least floor (the tip on disk, or the
// fork of a reorg the kill interrupted), never a sync from scratch.
func (k *killer) restart(ps *phaseStats, disk db.Tip, floor uint32) {
	k.start()
	took, height := k.firstAnswer(disk)
	ps.restarts = append(ps.restarts, took)
	k.t.Logf("restart: answered height %d after %s (index left at %d)", height, took.Round(time.Millisecond), disk.Height)
	if height < floor || height == 0 {
		k.t.Fatalf("restart answered best height %d, below the %d the index held: a resync\n%s", height, floor, tail(k.c.logs.String(), 30))
	}
	ps.resumed++
	// Opening finishes an interrupted round before the servers start.
	if strings.Contains(k.c.logs.String(), "completing a bulk-load round interrupted by a crash") {
		ps.recovered++
	}
}

// firstAnswer polls the new process until it answers its best height with
// the right block (the tip left on disk, or the node's block at that height)
// and returns the time since its start and that height.
func (k *killer) firstAnswer(disk db.Tip) (time.Duration, uint32) {
	deadline := time.Now().Add(waitFor)
	for time.Now().Before(deadline) {
		select {
		case <-k.c.done:
			k.t.Fatalf("process exited before answering: %v\n%s", k.c.cmd.ProcessState, tail(k.c.logs.String(), 30))
		default:
		}
		var st status
		if code, _ := tryGet(k.c.base+"/api/v2", &st); code == 200 {
			b := st.Blockbook.BestHeight
			var bi struct {
				BlockHash string `json:"blockHash"`
			}
			if code, _ := tryGet(fmt.Sprintf("%s/api/v2/block-index/%d", k.c.base, b), &bi); code == 200 {
				want := disk.Hash.String()
				if b != disk.Height {
					want, _ = k.node.BlockHash(context.Background(), int32(b))
				}
				if bi.BlockHash == want {
					took := time.Since(k.started)
					k.startHeight = b
					return took, b
				}
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	k.t.Fatalf("process did not answer\n%s", tail(k.c.logs.String(), 30))
	return 0, 0
}

// kill sends SIGKILL from outside and accounts for the death.
func (k *killer) kill(ps *phaseStats) db.Tip {
	if err := k.c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		k.t.Fatal(err)
	}
	k.c.wait(k.t)
	return k.killed(ps)
}

// killed accounts for a process that died from SIGKILL: the tip it left,
// and the blocks it had connected above that tip (fetched again by the
// next process; a lower bound, as the metrics are polled).
func (k *killer) killed(ps *phaseStats) db.Tip {
	if !k.c.killedBySignal() {
		k.t.Fatalf("process ended with %v, not by SIGKILL\n%s", k.c.cmd.ProcessState, tail(k.c.logs.String(), 30))
	}
	k.w.close()
	conn, disc := k.w.get()
	prev := k.lastDisk
	k.prevDisk = &prev
	k.lastDisk = k.diskTip()
	k.deadLogs = k.c.logs.String()
	k.requireBulkResume()
	if reached := float64(k.startHeight) - disc + conn; reached > float64(k.lastDisk.Height) {
		ps.refetched += uint64(reached - float64(k.lastDisk.Height))
	}
	ps.kills++
	return k.lastDisk
}

// waitConnected waits until the running process has connected n blocks.
func (k *killer) waitConnected(n float64) {
	deadline := time.Now().Add(waitFor)
	for time.Now().Before(deadline) {
		if conn, _ := k.w.get(); conn >= n {
			return
		}
		select {
		case <-k.c.done:
			k.t.Fatalf("process died\n%s", tail(k.c.logs.String(), 30))
		default:
		}
		time.Sleep(2 * time.Millisecond)
	}
	k.t.Fatalf("process did not connect %v blocks\n%s", n, tail(k.c.logs.String(), 30))
}

// diskTip opens the (closed) index read-only and returns its tip.
func (k *killer) diskTip() db.Tip {
	d, err := rocksdb.Open(db.Options{Path: k.dir, ChainType: bchain.ChainBitcoinType, Coin: "Regtest", Network: "regtest", ReadOnly: true})
	if err != nil {
		k.t.Fatal(err)
	}
	defer d.Close()
	tip, ok, err := db.ReadTip(d)
	if err != nil || !ok {
		k.t.Fatalf("index has no tip after the process ended (%v)", err)
	}
	return tip
}

// procWatch polls a process's metrics and keeps the last block counters.
type procWatch struct {
	mu                      sync.Mutex
	connected, disconnected float64
	quit, done              chan struct{}
	once                    sync.Once
}

func watchMetrics(c *child, url string) *procWatch {
	w := &procWatch{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			if conn, disc, ok := readBlockCounters(url); ok {
				w.mu.Lock()
				w.connected, w.disconnected = max(w.connected, conn), max(w.disconnected, disc)
				w.mu.Unlock()
			}
			select {
			case <-w.quit:
				return
			case <-c.done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return w
}

func (w *procWatch) get() (connected, disconnected float64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.connected, w.disconnected
}

func (w *procWatch) close() {
	w.once.Do(func() { close(w.quit) })
	<-w.done
}

var metricsClient = &http.Client{Timeout: 2 * time.Second}

// readBlockCounters reads the connected and disconnected block counters.
func readBlockCounters(url string) (conn, disc float64, ok bool) {
	resp, err := metricsClient.Get(url)
	if err != nil {
		return 0, 0, false
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, found := strings.Cut(promreg.WithoutCoin(sc.Text()), " ")
		if !found {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		switch {
		case err != nil:
		case name == "blockbook_index_blocks_connected_total":
			conn, ok = v, true
		case name == "blockbook_index_blocks_disconnected_total":
			disc = v
		}
	}
	return conn, disc, ok
}

func countLines(logs, substr string) int {
	n := 0
	for line := range strings.Lines(logs) {
		if strings.Contains(line, substr) {
			n++
		}
	}
	return n
}

// firstLogInt returns the integer field key of the first log line
// containing substr.
func firstLogInt(logs, substr, key string) (int64, bool) {
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(key) + `=(\d+)`)
	for line := range strings.Lines(logs) {
		if !strings.Contains(line, substr) {
			continue
		}
		if m := re.FindStringSubmatch(line); m != nil {
			v, err := strconv.ParseInt(m[1], 10, 64)
			return v, err == nil
		}
	}
	return 0, false
}

// pendingPayment is a mempool tx sent by the churn.
type pendingPayment struct {
	tx         *wire.MsgTx
	txid, addr string
	value      int64
}

func payments(ps []*pendingPayment) []*wire.MsgTx {
	out := make([]*wire.MsgTx, len(ps))
	for i, p := range ps {
		out[i] = p.tx
	}
	return out
}

// churn sends a payment to a fresh address every 150-400 ms and mines a
// block of all but the newest pending payments every third one. It owns
// the generator until stop.
type churn struct {
	quit, done chan struct{}
	pending    []*pendingPayment
	err        error
}

func startChurn(t *testing.T, g *chaingen.Generator, node *regtest.Node, seed int64) *churn {
	ch := &churn{quit: make(chan struct{}), done: make(chan struct{})}
	rng := rand.New(rand.NewSource(seed + 1))
	kinds := []chaingen.ScriptKind{chaingen.P2WPKH, chaingen.P2PKH, chaingen.P2TR}
	go func() {
		defer close(ch.done)
		for i := 0; ; i++ {
			select {
			case <-ch.quit:
				return
			case <-time.After(time.Duration(150+rng.Intn(250)) * time.Millisecond):
			}
			if ch.err = ch.step(g, node, kinds[i%len(kinds)], i); ch.err != nil {
				return
			}
		}
	}()
	return ch
}

// step sends payment i and, every third, mines the older pending ones.
func (ch *churn) step(g *chaingen.Generator, node *regtest.Node, kind chaingen.ScriptKind, i int) error {
	ctx := context.Background()
	addr, err := g.Address(kind, 9100+uint64(i))
	if err != nil {
		return err
	}
	value := int64(50_000 + 17*i)
	tx, err := g.CreatePayment([]chaingen.Output{{Address: addr, Value: value}}, 2)
	if err != nil {
		return fmt.Errorf("churn payment %d: %w", i, err)
	}
	txid, err := node.SendRawTransaction(ctx, tx)
	if err != nil {
		return fmt.Errorf("churn payment %d: sendrawtransaction: %w", i, err)
	}
	ch.pending = append(ch.pending, &pendingPayment{tx: tx, txid: txid, addr: addr, value: value})
	if i%3 != 2 {
		return nil
	}
	mine := ch.pending[:len(ch.pending)-1]
	if _, err := g.AddBlock(payments(mine)...); err != nil {
		return fmt.Errorf("churn block: %w", err)
	}
	if err := g.Submit(ctx, node, g.Height()); err != nil {
		return fmt.Errorf("churn block %d: %w", g.Height(), err)
	}
	ch.pending = ch.pending[len(ch.pending)-1:]
	return nil
}

// stop ends the churn and returns the payments still pending.
func (ch *churn) stop(t *testing.T) []*pendingPayment {
	t.Helper()
	close(ch.quit)
	<-ch.done
	if ch.err != nil {
		t.Fatal(ch.err)
	}
	return ch.pending
}
