package e2e

// Campaign 4 of issue 14: a full disk. The datadir lives on a small tmpfs;
// at random moments of a bulk sync and of per-block writes (catch-up and
// steady state) a ballast file takes all but a few MB of it, below the
// -dbreservemb reserve. The server must pause its writes and say why
// (/health, status, log), keep answering reads, survive a kill -9 while
// the disk is full, resume by itself once the tmpfs is grown, and end
// byte-identical to a fresh sync.

import (
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
)

var diskFills = flag.Int("torture.diskfills", 0, "disk campaign: fills per sync mode (short 1, full 10)")

const (
	diskReserveMB = 16        // -dbreservemb of the campaign
	diskLeave     = 6 << 20   // free bytes a fill leaves: below the reserve, room for a write in flight
	diskSize      = 256 << 20 // the tmpfs before a fill
	diskFullText  = "no space left on device"
)

// mountTmpfs mounts a tmpfs of size bytes on a new directory and unmounts
// it at cleanup. Without the privilege it fails under CI and skips outside.
func mountTmpfs(t *testing.T, size int64) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		msg := fmt.Sprintf("the disk campaign needs to mount a tmpfs (run as root): mount: %v: %s", err, out)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", "-l", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

func resizeTmpfs(t *testing.T, dir string, size int64) {
	t.Helper()
	if out, err := exec.Command("mount", "-o", fmt.Sprintf("remount,size=%d", size), dir).CombinedOutput(); err != nil {
		t.Fatalf("remount %s: %v: %s", dir, err, out)
	}
}

func freeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bavail) * st.Bsize
}

// fillDisk allocates a ballast file leaving about leave bytes free and
// returns its size.
func fillDisk(t *testing.T, dir string, leave int64) int64 {
	t.Helper()
	size := freeBytes(t, dir) - leave
	if size <= 0 {
		return 0
	}
	f, err := os.Create(filepath.Join(dir, "ballast"))
	if err != nil {
		t.Fatal(err)
	}
	err = syscall.Fallocate(int(f.Fd()), 0, 0, size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatalf("fallocate %d: %v", size, err)
	}
	return size
}

// diskChain is the chain the campaign indexes, with what reads check.
type diskChain struct {
	node   *regtest.Node
	g      *chaingen.Generator
	hashes []string
	txs    [][]string // txids per height
	addrs  []string
}

func (c *diskChain) refresh() {
	blocks := c.g.Blocks()
	for h := len(c.hashes); h < len(blocks); h++ {
		c.hashes = append(c.hashes, blocks[h].BlockHash().String())
		c.txs = append(c.txs, txids(blocks[h]))
	}
	if c.addrs == nil {
		for a := range c.g.Ledger().Addresses {
			c.addrs = append(c.addrs, a)
		}
		slices.Sort(c.addrs)
	}
}

func txids(b *wire.MsgBlock) []string {
	out := make([]string, len(b.Transactions))
	for i, tx := range b.Transactions {
		out[i] = tx.TxHash().String()
	}
	return out
}

// extend mines n more blocks on the node: per-block writes in steady state.
func (c *diskChain) extend(t *testing.T, n int) {
	t.Helper()
	from := c.g.Height() + 1
	if err := c.g.Extend(n, 8); err != nil {
		t.Fatal(err)
	}
	submit(t, c.g, c.node, from)
	c.refresh()
}

// diskStats are the figures of one sync mode.
type diskStats struct {
	fills, restarts, duringSync int
	report, resume              []time.Duration
	reads, readErrs             atomic.Int64
}

// The two sync modes run on one node and chain, each on its own tmpfs:
// first the bulk one (its fills land in bulk catch-ups of freshly mined
// blocks), then the per-block one (its first fill lands in a per-block
// catch-up of the whole chain, later ones in steady state, while the bulk
// one keeps following). At the end both must equal a fresh sync.
func TestTortureDisk(t *testing.T) {
	fills := tortureSize(*diskFills, 1, 10)
	began := time.Now()
	phase := func(what string) { t.Logf("%s at %v", what, time.Since(began).Round(time.Millisecond)) }
	// A shorter demo than demoChain's (every script kind still, past
	// coinbase maturity): generating and submitting blocks is most of the
	// short version's time under -race.
	g := chaingen.New(&chaincfg.RegressionNetParams, "disk")
	if err := g.Demo(chaingen.DemoSpec{Blocks: 135, TxsPerBlock: 3}); err != nil {
		t.Fatal(err)
	}
	c := &diskChain{node: startNode(t), g: g}
	if err := c.g.Extend(tortureSize(0, 20, 200), 20); err != nil {
		t.Fatal(err)
	}
	submit(t, c.g, c.node, 1)
	c.refresh()
	cfg := writeConfig(t, c.node, nil)
	phase("chain submitted")
	type run struct {
		name, dataDir string
		ch            *child
		st            *diskStats
	}
	var runs []*run
	for _, mode := range []struct {
		name  string
		flags []string
		more  int // blocks mined before a fill when the index is at the tip
	}{
		{"bulk", []string{"-bulkthreshold=50"}, 120},
		{"per-block", []string{"-bulkthreshold=0"}, 3},
	} {
		disk := mountTmpfs(t, diskSize)
		r := &run{name: mode.name, dataDir: filepath.Join(disk, "index"), st: &diskStats{}}
		r.ch = runDiskFills(t, c, cfg, disk, r.dataDir, mode.flags, mode.more, fills, r.st)
		runs = append(runs, r)
		phase(mode.name + " fills done")
	}
	h, hash := c.g.Tip()
	for _, r := range runs {
		if !waitTipOrDeath(t, r.ch, h, hash.String()) {
			t.Fatalf("%s: blockbook died\n%s", r.name, tail(r.ch.logs.String(), 30))
		}
	}
	phase("tips reached")
	checkLedger(t, runs[len(runs)-1].ch.base, c.g.Ledger())
	phase("ledger checked")
	for _, r := range runs {
		_ = r.ch.cmd.Process.Signal(syscall.SIGTERM)
		r.ch.wait(t)
		if !strings.Contains(r.ch.logs.String(), "index writes paused: "+diskFullText) {
			t.Errorf("%s: the log never said the writes paused\n%s", r.name, tail(r.ch.logs.String(), 30))
		}
	}
	ref := referenceIndex(t, cfg, h, hash.String())
	phase("reference synced")
	for _, r := range runs {
		compareIndexes(t, ref, r.dataDir)
		st := r.st
		tortureReport(t, "Disk", "mode=%s fills=%d during_catchup=%d kill9_while_full=%d report_max=%v resume_max=%v reads=%d read_errors=%d lost=0 (dump compare equal, ledger equal)",
			r.name, st.fills, st.duringSync, st.restarts, maxDur(st.report), maxDur(st.resume), st.reads.Load(), st.readErrs.Load())
		if n := st.readErrs.Load(); n > 0 {
			t.Errorf("%s: %d reads failed while the disk was full", r.name, n)
		}
	}
}

func maxDur(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m.Round(time.Millisecond)
}

// runDiskFills runs a blockbook on dataDir through the given number of fills and returns
// it running.
func runDiskFills(t *testing.T, c *diskChain, cfg, disk, dataDir string, flags []string, more, fills int, st *diskStats) *child {
	rng := rand.New(rand.NewSource(crashSeed(t)))
	internal := freePort(t)
	start := func() *child {
		ch := startChild(t, cfg, dataDir, append(slices.Clone(flags),
			fmt.Sprintf("-dbreservemb=%d", diskReserveMB), "-internal="+internal)...)
		waitAnswer(t, ch)
		return ch
	}
	ch := start()
	if more >= 50 { // bulk: the first catch-up runs without a fill
		h, hash := c.g.Tip()
		if !waitTipOrDeath(t, ch, h, hash.String()) {
			t.Fatalf("blockbook died\n%s", tail(ch.logs.String(), 30))
		}
	}
	for i := range fills {
		switch {
		case more >= 50:
			// A bulk catch-up needs the node far ahead: blockbook is
			// down while the blocks arrive (as after maintenance).
			began := time.Now()
			_ = ch.cmd.Process.Signal(syscall.SIGTERM)
			ch.wait(t)
			stopped := time.Now()
			c.extend(t, more+rng.Intn(more/2+3))
			t.Logf("bulk fill %d: blockbook stopped in %v, blocks mined and submitted in %v", i,
				stopped.Sub(began).Round(time.Millisecond), time.Since(stopped).Round(time.Millisecond))
			ch = start()
			time.Sleep(time.Duration(rng.Intn(300)) * time.Millisecond)
		case int(statusOf(t, ch).BestHeight) >= len(c.hashes)-1:
			c.extend(t, more+rng.Intn(more/2+3)) // steady state
			time.Sleep(time.Duration(rng.Intn(100)) * time.Millisecond)
		default:
			time.Sleep(time.Duration(rng.Intn(400)) * time.Millisecond)
		}
		if int(statusOf(t, ch).BestHeight) < len(c.hashes)-1 {
			st.duringSync++
		}
		ch = oneFill(t, c, disk, dataDir, ch, start, i%2 == 0, st)
	}
	return ch
}

// oneFill fills the disk, checks the report and the reads, optionally
// kills blockbook and restarts it on the full disk, then grows the disk
// and waits until the writes resume. It returns the running blockbook.
//
// Long: one fill is a sequence of steps with shared state; split, the
// steps would pass most of it around.
func oneFill(t *testing.T, c *diskChain, disk, dataDir string, ch *child, start func() *child, kill bool, st *diskStats) *child {
	t.Helper()
	ballast := fillDisk(t, disk, diskLeave)
	filled := time.Now()
	st.fills++
	base := &atomic.Pointer[string]{}
	base.Store(&ch.base)
	stopReads := readWhileFull(c, base, st)
	reason := waitDiskFullReport(t, ch, dataDir)
	st.report = append(st.report, time.Since(filled))
	paused := statusOf(t, ch).BestHeight
	time.Sleep(500 * time.Millisecond) // nothing is written while full
	if h := statusOf(t, ch).BestHeight; h != paused {
		t.Fatalf("the tip moved from %d to %d while the disk was full (%s)", paused, h, reason)
	}
	if kill {
		stopReads()
		_ = ch.cmd.Process.Kill()
		ch.wait(t)
		ch = start()
		st.restarts++
		waitDiskFullReport(t, ch, dataDir)
		if h := statusOf(t, ch).BestHeight; h != paused {
			t.Fatalf("after kill -9 on a full disk the tip is %d, was %d", h, paused)
		}
		base.Store(&ch.base)
		stopReads = readWhileFull(c, base, st)
		time.Sleep(500 * time.Millisecond)
	}
	stopReads()
	resizeTmpfs(t, disk, diskSize+ballast)
	grown := time.Now()
	deadline := grown.Add(waitFor)
	for {
		s := statusOf(t, ch)
		code, _ := tryGet("http://"+internalOf(ch)+"/health", nil)
		if s.Blockbook.SyncError == "" && (s.BestHeight > paused || code == 200) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("writes did not resume after the disk grew (tip %d, error %q)\n%s", s.BestHeight, s.Blockbook.SyncError, tail(ch.logs.String(), 20))
		}
		time.Sleep(20 * time.Millisecond)
	}
	st.resume = append(st.resume, time.Since(grown))
	if err := os.Remove(filepath.Join(disk, "ballast")); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	resizeTmpfs(t, disk, diskSize)
	return ch
}

// diskStatus is the part of the status the campaign reads.
type diskStatus struct {
	Blockbook struct {
		BestHeight  uint32 `json:"bestHeight"`
		InitialSync bool   `json:"initialSync"`
		SyncError   string `json:"syncError"`
	} `json:"blockbook"`
	BestHeight  uint32 `json:"-"`
	InitialSync bool   `json:"-"`
}

func statusOf(t *testing.T, ch *child) diskStatus {
	t.Helper()
	var s diskStatus
	getJSON(t, ch.base+"/api/v2", 200, &s)
	s.BestHeight, s.InitialSync = s.Blockbook.BestHeight, s.Blockbook.InitialSync
	return s
}

// internalOf returns the child's internal address (its -internal flag).
func internalOf(ch *child) string {
	addr := ""
	for _, a := range ch.cmd.Args { // the last one wins, as in flag parsing
		if v, ok := strings.CutPrefix(a, "-internal="); ok {
			addr = v
		}
	}
	return addr
}

// waitAnswer waits until a started child answers its status.
func waitAnswer(t *testing.T, ch *child) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		select {
		case <-ch.done:
			t.Fatalf("blockbook exited: %v\n%s", ch.err, tail(ch.logs.String(), 30))
		default:
		}
		if code, _ := tryGet(ch.base+"/api/v2", nil); code == 200 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("blockbook did not answer\n%s", tail(ch.logs.String(), 30))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitDiskFullReport waits until /health and the status name the full
// disk and the datadir, and returns the reason.
func waitDiskFullReport(t *testing.T, ch *child, dataDir string) string {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		var h struct {
			Status, Reason string
		}
		code, _ := tryGet("http://"+internalOf(ch)+"/health", &h)
		s := statusOf(t, ch)
		if code == 503 && strings.Contains(h.Reason, diskFullText) && strings.Contains(h.Reason, dataDir) &&
			strings.Contains(s.Blockbook.SyncError, diskFullText) {
			return h.Reason
		}
		if time.Now().After(deadline) {
			t.Fatalf("no full-disk report: health %d %q, syncError %q\n%s", code, h.Reason, s.Blockbook.SyncError, tail(ch.logs.String(), 30))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// readWhileFull reads blocks, txs and addresses of the indexed chain until
// the returned function is called, counting reads and wrong or failed
// answers.
func readWhileFull(c *diskChain, base *atomic.Pointer[string], st *diskStats) func() {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewSource(int64(st.fills)))
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := readOnce(c, *base.Load(), rng); err != nil {
				st.readErrs.Add(1)
				fmt.Fprintln(os.Stderr, "disk campaign read:", err)
			}
			st.reads.Add(1)
		}
	}()
	return func() { close(stop); wg.Wait() }
}

// readOnce checks one block, one of its txs and one address at or below
// the index tip.
func readOnce(c *diskChain, base string, rng *rand.Rand) error {
	var s diskStatus
	if code, err := tryGet(base+"/api/v2", &s); code != 200 {
		return fmt.Errorf("status: %d %v", code, err)
	}
	h := rng.Intn(int(s.Blockbook.BestHeight) + 1)
	var bi struct {
		BlockHash string `json:"blockHash"`
	}
	if code, err := tryGet(fmt.Sprintf("%s/api/v2/block-index/%d", base, h), &bi); code != 200 || bi.BlockHash != c.hashes[h] {
		return fmt.Errorf("block-index %d: %d %v %s", h, code, err, bi.BlockHash)
	}
	txid := c.txs[h][rng.Intn(len(c.txs[h]))]
	var tx struct {
		Txid        string `json:"txid"`
		BlockHeight int    `json:"blockHeight"`
	}
	if code, err := tryGet(base+"/api/v2/tx/"+txid, &tx); code != 200 || tx.Txid != txid || tx.BlockHeight != h {
		return fmt.Errorf("tx %s: %d %v %+v", txid, code, err, tx)
	}
	addr := c.addrs[rng.Intn(len(c.addrs))]
	var a struct {
		Address string `json:"address"`
	}
	if code, err := tryGet(base+"/api/v2/address/"+addr+"?details=basic", &a); code != 200 || a.Address != addr {
		return fmt.Errorf("address %s: %d %v", addr, code, err)
	}
	return nil
}
