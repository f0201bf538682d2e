package e2e

// Torture campaign 1 (issue 14, docs/reliability.md section 1): kill -9 at
// random seeded moments, spread over three phases: the bulk load of a long
// chain, steady-state following with blocks and mempool txs arriving, and
// reorgs of depth 20-40 in progress. Every restart must reopen the index
// where the killed process left it (never from scratch); at the end the
// index is byte-identical to a fresh sync of the final chain, its answers
// equal the chain's ledger and the mempool answers are right.

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
)

var tortureKillsN = flag.Int("torture.kills", 0, "kill -9 campaign: number of kills, spread over its three phases (default 6; 50 with -torture.full)")

// The seed flag may be shared with other campaigns: define it only if no
// other file did (package variables are initialized before init runs).
func init() {
	if flag.Lookup("torture.seed") == nil {
		flag.Int64("torture.seed", 0, "seed of the torture campaigns' random choices (0: each campaign's fixed default)")
	}
}

// tortureSeed is -torture.seed, or def when it is unset (0).
func tortureSeed(def int64) int64 {
	if f := flag.Lookup("torture.seed"); f != nil {
		if v, err := strconv.ParseInt(f.Value.String(), 10, 64); err == nil && v != 0 {
			return v
		}
	}
	return def
}

// Bulk mode as in TestE2ECrashSafety: far-behind catch-ups load in rounds.
var killsBulkFlags = []string{"-bulkthreshold=50", "-syncmemory=64"}

func TestTortureKills(t *testing.T) {
	kills := tortureSize(*tortureKillsN, 6, 50)
	if kills < 3 {
		t.Fatalf("-torture.kills=%d: at least one kill per phase (3)", kills)
	}
	seed := tortureSeed(1401)
	per := [3]int{kills / 3, kills / 3, kills / 3}
	for i := 0; i < kills%3; i++ {
		per[i]++
	}
	// Phase 1 feeds the chain in segments of segLen blocks after a first
	// part of at least 100. The short run takes them from the demo chain
	// (generating blocks is slow under -race); longer runs extend it with
	// blocks of 30 txs, so that each bulk load spans several rounds.
	segLen := tortureSize(0, 60, 100)
	tGen := time.Now()
	node := startNode(t)
	g := demoChain(t)
	if need := int32(per[0]*segLen + 100); g.Height() < need {
		if err := g.Extend(int(need-g.Height()), 30); err != nil {
			t.Fatal(err)
		}
	}
	first := g.Height() - int32(per[0]*segLen)
	t.Logf("chain generated in %s", time.Since(tGen).Round(time.Millisecond))
	cfg := writeConfig(t, node, nil)
	k := &killer{t: t, node: node, cfg: cfg, dir: filepath.Join(t.TempDir(), "index"), rng: rand.New(rand.NewSource(seed))}
	t.Logf("seed %d, kills per phase %v, chain of %d blocks fed as %d + %d segments of %d", seed, per, g.Height(), first, per[0], segLen)

	t0 := time.Now()
	lap := func(what string) { t.Logf("%s done at %s", what, time.Since(t0).Round(time.Millisecond)) }
	k.phaseBulk(g, first, segLen, per[0])
	lap("bulk phase")
	pending := k.phaseFollow(g, per[1], seed)
	lap("follow phase")
	g = k.phaseReorgs(g, per[2])
	lap("reorg phase")

	// The last kill left the process dead: give the node mempool txs that
	// cannot conflict with txs orphaned by the reorgs (they spend outputs
	// of a block mined after them), then the last restart.
	mem := killsFinalMempool(t, g, node)
	k.restart(k.stats("reorg"), k.lastDisk, min(k.lastDisk.Height, k.lastFork))
	h, hash := g.Tip()
	waitTip(t, k.c.base, h, hash.String(), k.c.logs)
	for addr, txid := range mem {
		a := waitAddress(t, k.c.base, addr, func(a *api.Address) bool { return a.UnconfirmedTxs == 1 })
		if !slices.Equal(a.Txids, []string{txid}) || a.Txs != 0 {
			t.Fatalf("mempool answer for %s after the last restart: %+v", addr, a)
		}
	}
	lap("last restart")
	checkLedger(t, k.c.base, g.Ledger())
	k.stopClean()
	lap("ledger")
	compareIndexes(t, k.dir, referenceIndex(t, cfg, h, hash.String()))
	lap("dump compare")

	// Everything checked: report (lost is 0, or the test failed above).
	for _, name := range []string{"bulk", "follow", "reorg"} {
		k.stats(name).report(t, name)
	}
	tortureReport(t, "kills", "total kills=%d seed=%d final_height=%d mempool_txs_checked=%d+%d dump=identical ledger=equal lost=0",
		kills, seed, h, pending, len(mem))
}

// phaseBulk kills the bulk load: the node gets the chain segment by segment
// while the process is dead, so each restart loads in bulk what it missed,
// and dies after a random number of blocks into that load.
func (k *killer) phaseBulk(g *chaingen.Generator, first int32, segLen, kills int) {
	t := k.t
	ps := k.stats("bulk")
	blocks := g.Blocks()
	if err := chaingen.SubmitBlocks(t.Context(), k.node, blocks[:first+1], 1); err != nil {
		t.Fatal(err)
	}
	k.start()
	waitTip(t, k.c.base, first, blocks[first].BlockHash().String(), k.c.logs)
	k.stopClean()
	if k.lastDisk.Hash.String() != blocks[first].BlockHash().String() {
		t.Fatalf("tip on disk %s, want %s", k.lastDisk.Hash, blocks[first].BlockHash())
	}
	end := first
	for i := 0; i < kills; i++ {
		from := end + 1
		end += int32(segLen)
		if err := chaingen.SubmitBlocks(t.Context(), k.node, blocks[:end+1], from); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			k.start()
			k.firstAnswer(k.lastDisk)
		} else {
			k.restart(ps, k.lastDisk, k.lastDisk.Height)
		}
		// A random moment of the load: after n blocks of it, plus up to 30 ms.
		behind := int(end) - int(k.startHeight)
		n := 1 + k.rng.Intn(max(behind-1, 1))
		k.waitConnected(float64(n))
		time.Sleep(time.Duration(k.rng.Intn(30)) * time.Millisecond)
		disk := k.kill(ps)
		if disk.Height < uint32(end) {
			ps.midway++
		}
	}
	k.restart(ps, k.lastDisk, k.lastDisk.Height)
	waitTip(t, k.c.base, end, blocks[end].BlockHash().String(), k.c.logs)
}

// phaseFollow kills the process at random moments while blocks arrive every
// few hundred ms and mempool txs are sent in between. It returns how many
// pending txs it checked after its last restart.
func (k *killer) phaseFollow(g *chaingen.Generator, kills int, seed int64) int {
	t := k.t
	ps := k.stats("follow")
	ch := startChurn(t, g, k.node, seed)
	for i := 0; i < kills; i++ {
		time.Sleep(time.Duration(200+k.rng.Intn(1300)) * time.Millisecond)
		nodeHeight, _, err := k.node.BestBlock(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if disk := k.kill(ps); disk.Height < uint32(nodeHeight) {
			ps.midway++ // the process was behind the node: a block was arriving
		}
		k.restart(ps, k.lastDisk, k.lastDisk.Height)
	}
	pending := ch.stop(t)
	h, hash := g.Tip()
	waitTip(t, k.c.base, h, hash.String(), k.c.logs)
	// The txs still pending show on their addresses after the restart.
	for _, p := range pending {
		a := waitAddress(t, k.c.base, p.addr, func(a *api.Address) bool { return a.UnconfirmedTxs == 1 })
		if !slices.Equal(a.Txids, []string{p.txid}) || a.UnconfirmedBalance.String() != strconv.FormatInt(p.value, 10) {
			t.Fatalf("pending payment %s to %s after a restart: %+v", p.txid, p.addr, a)
		}
	}
	// Mine them, so that the reorg phase starts with an empty mempool.
	if _, err := g.AddBlock(payments(pending)...); err != nil {
		t.Fatal(err)
	}
	submit(t, g, k.node, g.Height())
	h, hash = g.Tip()
	waitTip(t, k.c.base, h, hash.String(), k.c.logs)
	return len(pending)
}

// phaseReorgs submits competing branches of depth 20-40 and kills the
// process while it unwinds or reconnects: every other kill is the process
// killing itself right after a seeded number of block writes (an exact
// point of the reorg), the others a kill -9 from outside once a random
// number of blocks is disconnected or reconnected. The process is left dead.
func (k *killer) phaseReorgs(g *chaingen.Generator, kills int) *chaingen.Generator {
	t := k.t
	ps := k.stats("reorg")
	for i := 0; i < kills; i++ {
		depth := 20 + k.rng.Intn(21)
		fork := g.Height() - int32(depth)
		b, err := g.Fork(fork, fmt.Sprintf("kills-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Extend(depth+1, 1); err != nil {
			t.Fatal(err)
		}
		writes := 2*depth + 1 // disconnects, then connects
		point := 1 + k.rng.Intn(writes-1)
		self := i%2 == 0
		if i > 0 {
			// The previous kill left the process dead.
			k.restart(ps, k.lastDisk, min(k.lastDisk.Height, k.lastFork))
		}
		h, hash := g.Tip()
		waitTip(t, k.c.base, h, hash.String(), k.c.logs)
		if self {
			k.stopClean()
			k.start(fmt.Sprintf("%s=%d", app.KillAfterWritesEnv, point))
			k.firstAnswer(k.lastDisk)
		}
		k.lastFork = uint32(fork)
		disc0 := countLines(k.c.logs.String(), `msg="disconnected block"`)
		conn0, _ := k.w.get()
		done := make(chan error, 1)
		go func() { done <- chaingen.SubmitBlocks(context.Background(), k.node, b.Blocks(), fork+1) }()
		if self {
			k.c.wait(t)
			k.killed(ps)
		} else {
			k.waitReorgPoint(point, depth, disc0, conn0)
			k.kill(ps)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		bh, bhash := b.Tip()
		if k.lastDisk.Hash.String() != bhash.String() || k.lastDisk.Height != uint32(bh) {
			ps.midway++
		}
		g = b
	}
	return g
}

// waitReorgPoint waits until the process has disconnected `point` blocks,
// or (past depth) reconnected point-depth of the branch.
func (k *killer) waitReorgPoint(point, depth int, disc0 int, conn0 float64) {
	deadline := time.Now().Add(waitFor)
	for time.Now().Before(deadline) {
		disc := countLines(k.c.logs.String(), `msg="disconnected block"`) - disc0
		if point <= depth && disc >= point {
			return
		}
		if point > depth && disc >= depth {
			conn, _ := k.w.get()
			if conn-conn0 >= float64(point-depth) {
				return
			}
		}
		select {
		case <-k.c.done:
			k.t.Fatalf("process died during the reorg\n%s", tail(k.c.logs.String(), 30))
		default:
		}
		time.Sleep(time.Millisecond)
	}
	k.t.Fatalf("reorg did not reach write %d\n%s", point, tail(k.c.logs.String(), 30))
}

// killsFinalMempool mines a block paying two fresh addresses and sends two
// txs spending those outputs to other fresh addresses; it returns the
// receiving addresses and their pending txids.
func killsFinalMempool(t *testing.T, g *chaingen.Generator, node *regtest.Node) map[string]string {
	t.Helper()
	z1, z2 := mempoolAddr(t, g, chaingen.P2WPKH, 800), mempoolAddr(t, g, chaingen.P2TR, 801)
	fund, err := g.CreatePayment([]chaingen.Output{{Address: z1, Value: 400_000}, {Address: z2, Value: 300_000}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.AddBlock(fund); err != nil {
		t.Fatal(err)
	}
	submit(t, g, node, g.Height())
	out := map[string]string{}
	for i, c := range g.Coins(fund) {
		if c.Value != 400_000 && c.Value != 300_000 {
			continue
		}
		to := mempoolAddr(t, g, chaingen.P2PKH, uint64(810+i))
		tx, err := g.Spend([]chaingen.Coin{c}, []chaingen.Output{{Address: to, Value: c.Value / 2}}, 2)
		if err != nil {
			t.Fatal(err)
		}
		txid, err := node.SendRawTransaction(t.Context(), tx)
		if err != nil {
			t.Fatalf("sendrawtransaction: %v", err)
		}
		out[to] = txid
	}
	if len(out) != 2 {
		t.Fatalf("funding tx pays %d of the fresh addresses", len(out))
	}
	return out
}

// requireBulkResume checks, in the log of the process that just died, that
// its bulk load (if it started one) began above the tip it had found.
func (k *killer) requireBulkResume() {
	from, ok := firstLogInt(k.deadLogs, `msg="bulk sync"`, "from")
	if ok && from <= int64(k.prevDisk.Height) {
		k.t.Fatalf("bulk load restarted at %d although the index was at %d", from, k.prevDisk.Height)
	}
}

// stopClean ends the running process with SIGTERM.
func (k *killer) stopClean() {
	_ = k.c.cmd.Process.Signal(syscall.SIGTERM)
	k.c.wait(k.t)
	k.w.close()
	if k.c.killedBySignal() {
		k.t.Fatalf("SIGTERM should end the process cleanly: %v", k.c.cmd.ProcessState)
	}
	k.lastDisk = k.diskTip()
}
