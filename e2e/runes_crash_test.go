package e2e

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/openexplorer/blockbook/app"
)

// runesKillRuns syncs the runes chain (its config has the Runes index on)
// into a new datadir through SIGKILLs at chosen write steps, and compares
// the result with ref, a fresh sync of the same chain: two kills inside
// the bulk load (while it writes a round's files), then per-block kills
// right after the funding block (firstRunes) and after each block that
// etches, mints or moves runes (each block's rows read the ones before),
// then a run to the tip. The kills are few and placed rather than seeded: the runes blocks
// are the last ones, and each kill is a process start.
func runesKillRuns(t *testing.T, cfg, ref string, h int32, hash string, firstRunes uint32) {
	dir := filepath.Join(t.TempDir(), "index")
	run := func(flags []string, steps int) {
		t.Helper()
		c := startChild(t, cfg, dir, append(flags, fmt.Sprintf("%s=%d", app.KillAfterWritesEnv, steps))...)
		if waitTipOrDeath(t, c, h, hash) {
			t.Fatalf("the sync reached the tip before the kill after %d steps", steps)
		}
		c.wait(t)
		if !c.killedBySignal() {
			t.Fatalf("kill after %d steps: process ended with %v\n%s", steps, c.cmd.ProcessState, tail(c.logs.String(), 20))
		}
	}
	bulk := []string{"-bulkthreshold=50"}
	run(bulk, 2)
	run(bulk, 5)
	perBlock := []string{"-bulkthreshold=0"}
	heights := []uint32{indexTip(t, dir)}
	if heights[0] < firstRunes { // the kills inside a round left it undone
		n := int(firstRunes - heights[0])
		if heights[0] == 0 {
			n++ // an empty index writes the genesis block too
		}
		run(perBlock, n) // up to the funding block
		heights = append(heights, indexTip(t, dir))
	}
	for range 3 { // then after each block: the etching, the mints, the transfer
		run(perBlock, 1)
		heights = append(heights, indexTip(t, dir))
	}
	if last := heights[len(heights)-1]; last < firstRunes+1 || last >= uint32(h) {
		t.Fatalf("the kills left the index at heights %v: none inside the runes blocks %d to %d", heights, firstRunes, h)
	}
	t.Logf("index after each kill: %v (runes blocks from %d, tip %d)", heights, firstRunes, h)
	c := startChild(t, cfg, dir, perBlock...)
	waitTip(t, c.base, h, hash, c.logs)
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	c.wait(t)
	compareIndexes(t, dir, ref)
}
