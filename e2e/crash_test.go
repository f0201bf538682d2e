package e2e

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/rocksdb"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// crashSeed picks the kill points; override with BLOCKBOOK_CRASH_SEED to
// explore other interleavings outside CI.
func crashSeed(t *testing.T) int64 {
	if s := os.Getenv("BLOCKBOOK_CRASH_SEED"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	return 20261121
}

// Whatever moment the process dies, the index reopens at a block boundary,
// sync resumes from there, and the result is byte-identical to an
// uninterrupted run. Kill points are chosen by a seeded counter of block
// writes (the process SIGKILLs itself right after write N, so the kill lands
// between two writes at a known place, during parallel catch-up and in steady
// state), then by a real kill -9 from outside, and the node itself goes away
// and comes back mid-sync.
func TestE2ECrashSafety(t *testing.T) {
	node := startNode(t)
	g := demoChain(t)
	// A longer chain so that a sync takes long enough to be interrupted.
	if err := g.Extend(500, 30); err != nil {
		t.Fatal(err)
	}
	submit(t, g, node, 1)
	cfg := writeConfig(t, node, nil)
	h, hash := g.Tip()
	ref := referenceIndex(t, cfg, h, hash.String())

	// Seeded kill points: the process SIGKILLs itself right after the N-th
	// step of its write protocol (a block's atomic write in per-block mode;
	// in bulk mode also each SST file half-written and finished, the round
	// record, each ingest and the commit), until a run reaches the tip.
	for _, mode := range []struct {
		name     string
		flags    []string
		maxSteps int
	}{
		{"per-block", []string{"-bulkthreshold=0"}, int(h) / 6},
		{"bulk", []string{"-bulkthreshold=50", "-syncmemory=64"}, 25},
	} {
		t.Run("seeded kill points "+mode.name, func(t *testing.T) {
			rng := rand.New(rand.NewSource(crashSeed(t)))
			dir := filepath.Join(t.TempDir(), "index")
			kills := 0
			var logs strings.Builder
			for {
				n := 1 + rng.Intn(mode.maxSteps)
				if kills < 3 {
					n = kills + 1 // the very first steps, then random ones
				}
				c := startChild(t, cfg, dir, append(mode.flags, fmt.Sprintf("%s=%d", app.KillAfterWritesEnv, n))...)
				reached := waitTipOrDeath(t, c, h, hash.String())
				if reached {
					_ = c.cmd.Process.Signal(syscall.SIGTERM)
				}
				c.wait(t)
				logs.WriteString(c.logs.String())
				if reached {
					break
				}
				if !c.killedBySignal() {
					t.Fatalf("kill after %d steps: process ended with %v\n%s", n, c.cmd.ProcessState, tail(c.logs.String(), 20))
				}
				kills++
				t.Logf("killed after %d steps, index at %d", n, indexTip(t, dir))
			}
			if kills < 5 {
				t.Fatalf("only %d kills before the sync finished", kills)
			}
			if mode.name == "bulk" && !strings.Contains(logs.String(), "completing a bulk-load round interrupted by a crash") {
				t.Fatal("no kill landed between a round's record and its commit; choose another seed")
			}
			compareIndexes(t, dir, ref)
		})
	}

	t.Run("kill -9 from outside", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "index")
		for _, frac := range []uint32{4, 2} {
			c := startChild(t, cfg, dir)
			waitHeightAtLeast(t, c.base, uint32(h)/frac, c.logs)
			if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			c.wait(t)
			if tip := indexTip(t, dir); tip >= uint32(h) {
				t.Fatalf("the kill landed after sync finished (tip %d)", tip)
			}
		}
		c := startChild(t, cfg, dir)
		waitTip(t, c.base, h, hash.String(), c.logs)
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		c.wait(t)
		if c.killedBySignal() {
			t.Fatalf("SIGTERM should end the process cleanly: %v", c.cmd.ProcessState)
		}
		compareIndexes(t, dir, ref)
	})

	t.Run("node restarts mid-sync", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "index")
		inst := startInProcess(t, cfg, dir, func(o *app.Options) { o.Workers = 1 })
		waitHeightAtLeast(t, inst.base, uint32(h)/3, inst.logs)
		if err := node.Stop(); err != nil {
			t.Fatal(err)
		}
		waitNodeErrorReported(t, inst)
		if err := node.Restart(t.Context()); err != nil {
			t.Fatal(err)
		}
		waitTip(t, inst.base, h, hash.String(), inst.logs)
		inst.stop(t)
		compareIndexes(t, dir, ref)
	})

	// A node that is behind the index with an old tip (restarted from an
	// old snapshot, reindexing) has a chain that is a prefix of ours: the
	// index must wait, not unwind. (A node whose tip is current is rolled
	// back to instead, as Blockbook does: syncer/behind.go; the generated
	// chain's block times are older than a day.)
	t.Run("node behind the index", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "index")
		copyDir(t, ref, dir)
		lagging := startNode(t)
		half := h / 2
		if err := chaingen.SubmitBlocks(t.Context(), lagging, g.Blocks()[:half+1], 1); err != nil {
			t.Fatal(err)
		}
		inst := startInProcess(t, writeConfig(t, lagging, nil), dir, nil)
		var health struct{ Status, Reason string }
		for i := 0; ; i++ {
			code, _ := tryGet(inst.internal+"/health", &health)
			if code == 503 && strings.Contains(health.Reason, "behind the index") {
				break
			}
			if i > 400 {
				t.Fatalf("health: %d %+v\n%s", code, health, tail(inst.logs.String(), 20))
			}
			waitBriefly()
		}
		var st status
		getJSON(t, inst.base+"/api/v2", 200, &st)
		if st.Blockbook.BestHeight != uint32(h) || st.Blockbook.InSync {
			t.Fatalf("index moved to %d (in sync %v) while the node was behind", st.Blockbook.BestHeight, st.Blockbook.InSync)
		}
		if err := chaingen.SubmitBlocks(t.Context(), lagging, g.Blocks(), half+1); err != nil {
			t.Fatal(err)
		}
		for i := 0; !st.Blockbook.InSync; i++ {
			if i > 400 {
				t.Fatalf("not in sync after the node caught up\n%s", tail(inst.logs.String(), 20))
			}
			waitBriefly()
			getJSON(t, inst.base+"/api/v2", 200, &st)
		}
		if st.Blockbook.BestHeight != uint32(h) {
			t.Fatalf("index at %d", st.Blockbook.BestHeight)
		}
		inst.stop(t)
		compareIndexes(t, dir, ref)
	})
}

// waitTipOrDeath waits until the child reaches the tip (true) or dies (false).
func waitTipOrDeath(t *testing.T, c *child, height int32, hash string) bool {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for time.Now().Before(deadline) {
		select {
		case <-c.done:
			return false
		default:
		}
		var bi struct {
			BlockHash string `json:"blockHash"`
		}
		if code, _ := tryGet(fmt.Sprintf("%s/api/v2/block-index/%d", c.base, height), &bi); code == 200 && bi.BlockHash == hash {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("child neither reached the tip nor died\n%s", tail(c.logs.String(), 20))
	return false
}

// indexTip opens a closed index and returns its tip height.
func indexTip(t *testing.T, dir string) uint32 {
	t.Helper()
	d, err := rocksdb.Open(db.Options{Path: dir, ChainType: bchain.ChainBitcoinType, Coin: "Regtest", Network: "regtest", ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tip, _, err := db.ReadTip(d)
	if err != nil {
		t.Fatal(err)
	}
	return tip.Height
}

// copyDir copies a closed index directory.
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
}

// waitNodeErrorReported waits until the status answer shows the node missing
// (the API keeps answering meanwhile).
func waitNodeErrorReported(t *testing.T, inst *instance) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		var st status
		if code, _ := tryGet(inst.base+"/api/v2", &st); code == 200 && st.Backend.Error != "" && !st.Blockbook.InSync {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("status did not report the missing node\n%s", tail(inst.logs.String(), 20))
		}
		waitBriefly()
	}
}

// waitHeightAtLeast waits until the index has reached height.
func waitHeightAtLeast(t *testing.T, base string, height uint32, logs fmt.Stringer) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for time.Now().Before(deadline) {
		var st status
		if code, _ := tryGet(base+"/api/v2", &st); code == 200 && st.Blockbook.BestHeight >= height {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("index did not reach height %d\n%s", height, tail(logs.String(), 30))
}
