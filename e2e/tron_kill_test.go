package e2e

import (
	"encoding/hex"
	"fmt"
	"math/rand"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/tools/trondouble"
)

// Kill safety of the Tron stack, with the program as its own process
// against the java-tron double: it SIGKILLs itself after the N-th write
// step (seeded), is restarted until it reaches the tip, and its index must
// equal a clean sync's, family by family; then the double reorgs its
// unsolidified blocks and a kill lands in the catch-up, and the index must
// equal a clean sync of the new chain.
func TestTronKillSafety(t *testing.T) {
	c := trondouble.New(trondouble.Options{Seed: 43, Accounts: 8, Tokens: 2, SolidDepth: 12})
	c.Mine(30, 6)
	s := trondouble.Serve(c)
	t.Cleanup(s.Close)
	cfgMap := s.Config("Tron")
	cfgMap["block_addresses_to_keep"], cfgMap["processInternalTransactions"] = 100, true
	cfg := writeJSONFile(t, "tron.json", cfgMap)
	rng := rand.New(rand.NewSource(crashSeed(t)))
	dir := filepath.Join(t.TempDir(), "index")

	// untilTip restarts the program, each run killed after 1..maxSteps
	// write steps, until a run reaches the tip. The first three runs write
	// block by block and are killed after steps 1, 2 and 3, and the fourth
	// connects in groups and is killed after its first write, so each
	// lands whatever the timing; later runs connect in groups (a group is
	// written when the next block is not fetched yet, so their writes vary
	// by timing) and are killed at a seeded step.
	untilTip := func(maxSteps int) int {
		t.Helper()
		tip := c.Tip()
		hash := hex.EncodeToString(tip.ID[:])
		kills := 0
		for {
			n, mode := 1+rng.Intn(maxSteps), "-bulkthreshold=500"
			switch {
			case kills < 3:
				n, mode = kills+1, "-bulkthreshold=0"
			case kills == 3:
				n = 1
			}
			ch := startChild(t, cfg, dir, fmt.Sprintf("%s=%d", app.KillAfterWritesEnv, n), mode)
			reached := waitTipOrDeath(t, ch, int32(tip.Number), hash)
			if reached {
				_ = ch.cmd.Process.Signal(syscall.SIGTERM)
			}
			ch.wait(t)
			if reached {
				return kills
			}
			if !ch.killedBySignal() {
				t.Fatalf("kill after %d steps: process ended with %v\n%s", n, ch.cmd.ProcessState, tail(ch.logs.String(), 20))
			}
			kills++
		}
	}
	kills := untilTip(10)
	t.Logf("%d kills before the sync reached the tip", kills)
	if kills < 4 {
		t.Fatalf("only %d kills before the sync finished", kills)
	}
	tip := c.Tip()
	compareTronIndexes(t, dir, referenceIndex(t, cfg, int32(tip.Number), hex.EncodeToString(tip.ID[:])))

	if err := c.Reorg(6, 4); err != nil {
		t.Fatal(err)
	}
	// The first kills land in the reorg's disconnects.
	if kills = untilTip(10); kills < 4 {
		t.Fatalf("only %d kills before the sync reached the new tip", kills)
	}
	t.Logf("%d kills to the new tip", kills)
	tip = c.Tip()
	compareTronIndexes(t, dir, referenceIndex(t, cfg, int32(tip.Number), hex.EncodeToString(tip.ID[:])))
}

// compareTronIndexes requires two Tron indexes to hold the same rows.
func compareTronIndexes(t *testing.T, dirA, dirB string) {
	t.Helper()
	compareIndexesOf(t, db.Options{ChainType: bchain.ChainTronType, Coin: "Tron", Network: "mainnet"}, dirA, dirB)
}
