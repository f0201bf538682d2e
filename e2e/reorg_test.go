package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
)

// competingBranch builds a branch forking from g at height fork that is
// `extra` blocks longer than g, and submits it; btcd reorganizes to it.
func competingBranch(t *testing.T, g *chaingen.Generator, node *regtest.Node, fork int32, extra int, salt string) *chaingen.Generator {
	t.Helper()
	b, err := g.Fork(fork, salt)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Extend(int(g.Height()-fork)+extra, 4); err != nil {
		t.Fatal(err)
	}
	submit(t, b, node, fork+1)
	h, hash := b.Tip()
	if nh, nhash, err := node.BestBlock(context.Background()); err != nil || nh != h || nhash != hash.String() {
		t.Fatalf("node did not reorganize to the branch: %d %s %v", nh, nhash, err)
	}
	return b
}

// Reorgs of depth 1 (invalidateblock), 10 and 150 (competing branches) each
// leave the index byte-identical to a fresh sync of the final chain, and its
// answers equal to the final chain's ledger.
func TestE2EReorgs(t *testing.T) {
	st := startDemoStack(t, nil)
	node, g, inst, cfg, dir := st.node, st.g, st.inst, st.cfg, st.dataDir
	ctx := context.Background()
	steps := []struct {
		name  string
		depth int32
	}{{"invalidateblock depth 1", 1}, {"branch depth 10", 10}, {"branch depth 150", 150}}
	for i, step := range steps {
		fork := g.Height() - step.depth
		if i == 0 {
			_, tipHash := g.Tip()
			if err := node.InvalidateBlock(ctx, tipHash.String()); err != nil {
				t.Fatal(err)
			}
		}
		g = competingBranch(t, g, node, fork, 1+i, fmt.Sprintf("reorg-%d", i))
		h, hash := g.Tip()
		waitTip(t, inst.base, h, hash.String(), inst.logs)
		if !strings.Contains(inst.logs.String(), fmt.Sprintf("depth=%d", step.depth)) {
			t.Fatalf("%s: no reorg of depth %d in the log\n%s", step.name, step.depth, tail(inst.logs.String(), 20))
		}
		checkLedger(t, inst.base, g.Ledger())
		inst.stop(t)
		compareIndexes(t, dir, referenceIndex(t, cfg, h, hash.String()))
		inst = startInProcess(t, cfg, dir, nil)
		waitTip(t, inst.base, h, hash.String(), inst.logs)
	}
}

// A reorg deeper than the rollback window stops sync without touching the
// index and says how to recover; -rollback (which refills the window from the
// node's copy of the orphaned blocks) is that way out, after which the index
// equals a fresh sync.
func TestE2EReorgDeeperThanWindow(t *testing.T) {
	st := startDemoStack(t, map[string]any{"block_addresses_to_keep": 5})
	node, g, inst, cfg, dir := st.node, st.g, st.inst, st.cfg, st.dataDir
	oldH, oldHash := g.Tip()

	fork := oldH - 8
	b := competingBranch(t, g, node, fork, 2, "too-deep")
	var health struct {
		Status, Reason string
	}
	for i := 0; ; i++ {
		code, _ := tryGet(inst.internal+"/health", &health)
		if code == 503 && strings.Contains(health.Reason, "reorg deeper than the rollback window") {
			break
		}
		if i > 400 {
			t.Fatalf("health did not report the deep reorg: %d %+v\n%s", code, health, tail(inst.logs.String(), 20))
		}
		waitBriefly()
	}
	if !strings.Contains(health.Reason, "-rollback") {
		t.Errorf("the error does not say how to recover: %s", health.Reason)
	}
	// The index still holds the old chain.
	var bi struct {
		BlockHash string `json:"blockHash"`
	}
	getJSON(t, fmt.Sprintf("%s/api/v2/block-index/%d", inst.base, oldH), 200, &bi)
	if bi.BlockHash != oldHash.String() {
		t.Fatalf("index tip changed to %s", bi.BlockHash)
	}
	inst.stop(t)

	rb := startInProcessRollback(t, cfg, dir, uint32(fork))
	if err := <-rb; err != nil {
		t.Fatalf("rollback: %v", err)
	}
	inst = startInProcess(t, cfg, dir, nil)
	h, hash := b.Tip()
	waitTip(t, inst.base, h, hash.String(), inst.logs)
	checkLedger(t, inst.base, b.Ledger())
	inst.stop(t)
	compareIndexes(t, dir, referenceIndex(t, cfg, h, hash.String()))
}
