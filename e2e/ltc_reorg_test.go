package e2e

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/tools/ltcregtest"
)

// ltcTraffic puts a peg-in, a peg-out (if pegOut) and a canonical payment
// in litecoind's mempool (to be mined by the caller).
func ltcTraffic(t *testing.T, n *ltcregtest.Node, sc *ltcregtest.Scenario, salt int, pegOut bool) {
	t.Helper()
	ctx := context.Background()
	w, mw := n.Wallet(ltcregtest.W), n.Wallet(ltcregtest.MW)
	var txid string
	if err := w.CallResult(ctx, &txid, "sendtoaddress", sc.MWEBAddresses[salt%2], fmt.Sprintf("2.%d", salt+1)); err != nil {
		t.Fatalf("peg-in: %v", err)
	}
	if !pegOut {
	} else if err := mw.CallResult(ctx, &txid, "sendtoaddress", sc.Addresses["p2wpkh"][2+salt%4], fmt.Sprintf("0.%d5", salt+1)); err != nil {
		t.Fatalf("peg-out: %v", err)
	}
	if err := w.CallResult(ctx, &txid, "sendtoaddress", sc.Addresses["p2sh-multisig"][0], fmt.Sprintf("0.0%d", salt+1)); err != nil {
		t.Fatalf("send: %v", err)
	}
}

// Reorgs on litecoind: the tip replaced (depth 1), a branch of MWEB blocks
// with other peg-ins and peg-outs (depth 6), and a branch replacing every
// MWEB block but the first (a fork below it makes litecoind 0.21.2.1
// abort on its mempool check). Each leaves the index
// byte-identical to a fresh sync of the final chain and its answers equal
// to litecoind's ledger of it.
func TestLtcReorgs(t *testing.T) {
	st := startLtcStack(t, nil, nil)
	n, inst, cfg, dir := st.node, st.inst, st.cfg, st.dataDir
	ctx := context.Background()
	tip := st.sc.TipHeight
	for i, fork := range []int32{tip - 1, tip - 6, ltcregtest.MWEBHeight} {
		h, _, err := n.BestBlock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		hash, err := n.BlockHash(ctx, fork+1)
		if err != nil {
			t.Fatal(err)
		}
		if err := n.InvalidateBlock(ctx, hash); err != nil {
			t.Fatal(err)
		}
		// The MWEB coins of wallet MW are gone with the last branch.
		ltcTraffic(t, n, st.sc, i, fork > ltcregtest.MWEBHeight)
		newH, newHash := mineLtc(t, n, int(h-fork)+1) // one longer than the orphaned branch
		waitTip(t, inst.base, newH, newHash, inst.logs)
		if depth := h - fork; !strings.Contains(inst.logs.String(), fmt.Sprintf("depth=%d", depth)) {
			t.Fatalf("no reorg of depth %d in the log\n%s", depth, tail(inst.logs.String(), 20))
		}
		l, blocks := ltcLedger(t, n)
		checkLedger(t, inst.base, l)
		checkLtcBlocks(t, inst.base, l, blocks)
		inst.stop(t)
		compareLtcIndexes(t, dir, referenceIndex(t, cfg, newH, newHash))
		inst = startInProcess(t, cfg, dir, nil)
		waitTip(t, inst.base, newH, newHash, inst.logs)
	}
}

// kill -9 on litecoind's chain: seeded kill points (the process SIGKILLs
// itself right after its N-th write) in per-block and bulk sync, around
// and across the first MWEB blocks, then a kill -9 from outside of a synced
// process followed by new MWEB blocks: every restart resumes and ends
// byte-identical to an uninterrupted sync.
func TestLtcKillResume(t *testing.T) {
	n, sc := startLtcNode(t)
	cfg := writeLtcConfig(t, n, nil)
	ref := referenceIndex(t, cfg, sc.TipHeight, sc.TipHash)
	for _, mode := range []struct {
		name  string
		flags []string
		kills []int
	}{
		// Per-block: each run dies after that many writes, the last kills
		// around the first MWEB blocks (432 on).
		{"per-block", []string{"-bulkthreshold=0"}, []int{3, 298, 131, 2, 2}},
		{"bulk", []string{"-bulkthreshold=50", "-syncmemory=64"}, []int{1, 2, 5, 9}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, k := range mode.kills {
				c := startChild(t, cfg, dir, append(mode.flags, fmt.Sprintf("%s=%d", app.KillAfterWritesEnv, k))...)
				if waitTipOrDeath(t, c, sc.TipHeight, sc.TipHash) {
					t.Fatalf("reached the tip before the kill after %d writes", k)
				}
				c.wait(t)
				if !c.killedBySignal() {
					t.Fatalf("kill after %d writes: process ended with %v\n%s", k, c.cmd.ProcessState, tail(c.logs.String(), 20))
				}
			}
			c := startChild(t, cfg, dir, mode.flags...)
			waitTip(t, c.base, sc.TipHeight, sc.TipHash, c.logs)
			_ = c.cmd.Process.Signal(syscall.SIGTERM)
			c.wait(t)
			compareLtcIndexes(t, dir, ref)
		})
	}

	t.Run("kill -9 from outside", func(t *testing.T) {
		dir := t.TempDir()
		c := startChild(t, cfg, dir)
		waitTip(t, c.base, sc.TipHeight, sc.TipHash, c.logs)
		if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		c.wait(t)
		ltcTraffic(t, n, sc, 3, true)
		h, hash := mineLtc(t, n, 3)
		c = startChild(t, cfg, dir)
		waitTip(t, c.base, h, hash, c.logs)
		l, _ := ltcLedger(t, n)
		checkLedger(t, c.base, l)
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		c.wait(t)
		compareLtcIndexes(t, dir, referenceIndex(t, cfg, h, hash))
	})
}
