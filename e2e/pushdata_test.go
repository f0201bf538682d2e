package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/btcsuite/btcd/txscript/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// The pushdata index (issue 44) end to end, on one btcd node and one
// chain shared by the steps: a search for every hash the demo chain pushes
// (P2PK, P2PKH, P2WPKH, bare multisig, P2SH-P2WPKH, P2SH and P2WSH
// multisig, taproot)
// answers exactly what an oracle computes from the generator's raw blocks;
// so it does after a reorg, after kill -9s in a bulk round and between
// block writes, and with a pending tx (height -1); after a -rollback and
// the sync back, the index equals a fresh sync byte for byte. Bad input, an index without the pushdata
// index and switching it on over that index are refused clearly.
func TestE2EPushdata(t *testing.T) {
	st := startDemoStack(t, map[string]any{"pushdata_index": true})
	node, g, inst, cfg, dir := st.node, st.g, st.inst, st.cfg, st.dataDir

	o := newPushdataOracle(t, g.Blocks(), nodeMempool(t, node))
	for _, src := range []string{"out:pubkey", "out:pubkeyhash", "out:witness_v0_keyhash", "out:multisig", "out:scripthash",
		"out:witness_v0_scripthash", "out:witness_v1_taproot", "scriptSig", "witness", "redeem", "witnessScript"} {
		if o.sources[src] == 0 {
			t.Fatalf("the demo chain has no push from %s: %v", src, o.sources)
		}
	}
	t.Logf("oracle rows by source: %v", o.sources)

	t.Run("every hash of the chain", func(t *testing.T) {
		// Hashes nothing pushed find nothing.
		o = checkPushdata(t, inst.base, node, g.Blocks(), []string{strings.Repeat("00", 32), strings.Repeat("ff", 32)})
	})

	// Goldens (e2e/testdata/pushdata): the demo key's P2PK and the first
	// key of its bare 1-of-2, which its P2WSH 2-of-3 shares; a bad hash;
	// the index switched off (below).
	gs := newGoldenSet(t, filepath.Join(goldenDir, "pushdata"), "TestE2EPushdata")
	keys := demoKeyHashes(t, g)
	gs.check("pushdata-search-keys", pushdataGolden(t, inst.base, fmt.Sprintf(`{"hashes": [%q, %q]}`, keys[0], keys[1]), 200))
	gs.check("error-pushdata-search-bad-hash", pushdataGolden(t, inst.base, `{"hashes": ["abc"]}`, 400))

	t.Run("bad input", func(t *testing.T) {
		many, _ := json.Marshal(map[string]any{"hashes": slices.Repeat([]string{strings.Repeat("ab", 32)}, 1001)})
		for _, tc := range []struct{ body, want string }{
			{`{"hashes": []}`, "hashes: give 1 to 1000"},
			{`{"hashes": ["abc"]}`, `hashes[0]: "abc" is not a sha256`},
			{`{"hashes": "ab"}`, "Invalid request body"},
			{`not json`, "Invalid request body"},
			{string(many), "hashes: 1001 hashes, at most 1000"},
		} {
			if code, _, msg := pushdataSearch(t, inst.base, tc.body); code != 400 || !strings.HasPrefix(msg, tc.want) {
				t.Errorf("%s: %d %q, want 400 %q", tc.body, code, msg, tc.want)
			}
		}
	})

	// A branch 10 blocks deep replaces the tip: the old chain's hashes
	// that the branch lacks find nothing, the branch's are found.
	old := o
	g = competingBranch(t, g, node, g.Height()-10, 1, "pushdata-reorg")
	h, hash := g.Tip()
	waitTip(t, inst.base, h, hash.String(), inst.logs)
	t.Run("after a reorg", func(t *testing.T) {
		o = checkPushdata(t, inst.base, node, g.Blocks(), old.hashes())
	})
	inst.stop(t)

	// More blocks, among them a P2SH 2-of-3 multisig funded and spent,
	// loaded by processes that SIGKILL themselves: after a bulk round's
	// first steps, then after a few per-block writes.
	p2shKeys := addP2SHMultisig(t, g)
	if err := g.Extend(60, 8); err != nil {
		t.Fatal(err)
	}
	submit(t, g, node, h+1)
	h, hash = g.Tip()
	for _, run := range [][]string{
		{"-bulkthreshold=20", app.KillAfterWritesEnv + "=4"},
		{"-bulkthreshold=1000", app.KillAfterWritesEnv + "=7"},
	} {
		c := startChild(t, cfg, dir, run...)
		c.wait(t)
		if !c.killedBySignal() {
			t.Fatalf("%v: the process was not killed: %v\n%s", run, c.cmd.ProcessState, tail(c.logs.String(), 20))
		}
		if tip := indexTip(t, dir); tip >= uint32(h) {
			t.Fatalf("%v: the kill landed after the sync (tip %d)", run, tip)
		}
	}
	c := startChild(t, cfg, dir)
	waitTip(t, c.base, h, hash.String(), c.logs)
	t.Run("after kill -9", func(t *testing.T) {
		o = checkPushdata(t, c.base, node, g.Blocks(), old.hashes())
		// The P2SH multisig's keys are found in the spend's redeem script.
		for _, k := range p2shKeys {
			if m := o.matches[k]; len(m) != 1 || m[0].Kind != "input" || m[0].Height != int64(h-60) {
				t.Fatalf("P2SH multisig key %s: %s", k, fmtMatches(m))
			}
		}
	})

	// -rollback disconnects blocks with the node's copies of them; the
	// sync then connects them again.
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	c.wait(t)
	if err := <-startInProcessRollback(t, cfg, dir, uint32(h-25)); err != nil {
		t.Fatalf("rollback: %v", err)
	}
	if tip := indexTip(t, dir); tip != uint32(h-25) {
		t.Fatalf("rolled back to %d", tip)
	}
	c = startChild(t, cfg, dir)
	waitTip(t, c.base, h, hash.String(), c.logs)

	t.Run("mempool", func(t *testing.T) {
		pay, err := g.CreatePayment([]chaingen.Output{{Address: mempoolAddr(t, g, chaingen.P2WPKH, 44), Value: 120_000}}, 3)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := node.SendRawTransaction(context.Background(), pay); err != nil {
			t.Fatal(err)
		}
		o = checkPushdata(t, c.base, node, g.Blocks(), nil)
		if len(pushesOf(o, pay.TxHash().String())) == 0 {
			t.Fatal("the oracle has no push of the pending tx")
		}
	})
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	c.wait(t)
	compareIndexes(t, dir, referenceIndex(t, cfg, h, hash.String()))

	t.Run("index off", func(t *testing.T) {
		offDir := filepath.Join(t.TempDir(), "off")
		off := startInProcess(t, writeConfig(t, node, nil), offDir, nil)
		waitTip(t, off.base, h, hash.String(), off.logs)
		body := fmt.Sprintf(`{"hashes": [%q]}`, o.hashes()[0])
		if code, _, msg := pushdataSearch(t, off.base, body); code != 400 || !strings.HasPrefix(msg, "pushdata index is not enabled") {
			t.Fatalf("index off: %d %q", code, msg)
		}
		gs.check("error-pushdata-search-disabled", pushdataGolden(t, off.base, body, 400))
		off.stop(t)
		on := &app.Options{BlockchainCfg: cfg, DataDir: offDir, Sync: true, Public: "none", Internal: "none", Workers: 1,
			DBCache: 32 << 20, DBMaxOpenFiles: 256, Rollback: -1, SyncMemoryMB: 64, PushdataIndex: true}
		err := app.Run(context.Background(), on, slog.New(slog.DiscardHandler))
		if err == nil || !strings.Contains(err.Error(), "indexed without the pushdata index") || !strings.Contains(err.Error(), "-pushdataindex") {
			t.Fatalf("switching the index on over a built datadir: %v", err)
		}
	})
	gs.finish()
}

// demoKeyHashes returns the sha256 of the demo index's P2PK key and of
// the first key of its bare multisig (shared with its P2WSH multisig).
func demoKeyHashes(t *testing.T, g *chaingen.Generator) []string {
	t.Helper()
	var out []string
	for _, k := range []chaingen.ScriptKind{chaingen.P2PK, chaingen.BareMultisig} {
		script, err := g.PkScript(k, chaingen.DemoIndex)
		if err != nil {
			t.Fatal(err)
		}
		pushes, err := txscript.PushedData(script)
		if err != nil || len(pushes) == 0 || len(pushes[0]) != 33 {
			t.Fatalf("%s script %x: %v", k, script, err)
		}
		sum := sha256.Sum256(pushes[0])
		out = append(out, hex.EncodeToString(sum[:]))
	}
	return out
}

// pushesOf lists the hashes the oracle has at txid.
func pushesOf(o *pushdataOracle, txid string) []string {
	var out []string
	for _, h := range o.hashes() {
		if slices.ContainsFunc(o.matches[h], func(m api.PushdataMatch) bool { return m.Txid == txid }) {
			out = append(out, h)
		}
	}
	return out
}

func union(a, b []string) []string {
	return slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(a), b...))))
}
