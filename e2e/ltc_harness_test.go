package e2e

// Harness for the litecoind end-to-end tests: one chain is generated per
// test binary on a real litecoind (tools/ltcregtest: every script kind,
// MWEB activated at 432 with peg-ins, peg-outs and MWEB-only txs), the node
// is stopped and its directory kept as a template; each test starts its own
// litecoind on a copy, so tests may mine, reorg and send without affecting
// each other, and the ledger is recomputed from the node (ltcLedger).

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/ltcregtest"
)

var ltcTemplate struct {
	once sync.Once
	dir  string
	sc   *ltcregtest.Scenario
	err  error
}

// ltcTemplateDir generates the shared chain once (about 15 s) and returns
// the stopped node's directory and scenario.
func ltcTemplateDir(t testing.TB) (string, *ltcregtest.Scenario) {
	t.Helper()
	ltcregtest.Require(t)
	ltcTemplate.once.Do(func() {
		dir, err := os.MkdirTemp("", "ltc-template-") //nolint:usetesting // shared by later tests; TestMain removes it
		if err != nil {
			ltcTemplate.err = err
			return
		}
		ltcTemplate.dir = dir
		ctx := context.Background()
		n, err := ltcregtest.Start(ctx, ltcregtest.Options{Dir: dir})
		if err != nil {
			ltcTemplate.err = err
			return
		}
		ltcTemplate.sc, ltcTemplate.err = ltcregtest.Generate(ctx, n)
		if err := n.Stop(); err != nil && ltcTemplate.err == nil {
			ltcTemplate.err = err
		}
	})
	if ltcTemplate.err != nil {
		t.Fatalf("litecoind chain: %v", ltcTemplate.err)
	}
	return ltcTemplate.dir, ltcTemplate.sc
}

// removeLtcTemplate deletes the shared chain (TestMain calls it).
func removeLtcTemplate() {
	if ltcTemplate.dir != "" {
		_ = os.RemoveAll(ltcTemplate.dir)
	}
}

// startLtcNode starts litecoind on a copy of the generated chain, with its
// wallets loaded (ltcregtest.W pays and mines, ltcregtest.MW holds MWEB
// coins) and a P2P listener; it is stopped when the test ends.
func startLtcNode(t testing.TB) (*ltcregtest.Node, *ltcregtest.Scenario) {
	t.Helper()
	return startLtcNodeWith(t)
}

// startLtcNodeWith is startLtcNode with extra litecoind arguments.
func startLtcNodeWith(t testing.TB, args ...string) (*ltcregtest.Node, *ltcregtest.Scenario) {
	t.Helper()
	tmpl, sc := ltcTemplateDir(t)
	dir := filepath.Join(t.TempDir(), "litecoind")
	if err := ltcregtest.CopyDir(tmpl, dir); err != nil {
		t.Fatal(err)
	}
	n, err := ltcregtest.Start(context.Background(), ltcregtest.Options{
		Dir: dir, Listen: true, Wallets: []string{ltcregtest.W, ltcregtest.MW}, ExtraArgs: args})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Stop() })
	return n, sc
}

// writeLtcConfig writes a blockchaincfg.json for Litecoin Regtest with an
// empty message_queue_binding (the sync follows the node by polling).
func writeLtcConfig(t testing.TB, n *ltcregtest.Node, extra map[string]any) string {
	t.Helper()
	cfg := map[string]any{
		"coin_name": "Litecoin Regtest", "coin_shortcut": "rLTC", "coin_label": "Litecoin Regtest",
		"rpc_url": n.RPCURL, "rpc_user": n.RPCUser, "rpc_pass": n.RPCPass, "rpc_timeout": 25,
		"parse": true, "message_queue_binding": "", "block_addresses_to_keep": 300,
		"xpub_magic": 70617039, "xpub_magic_segwit_p2sh": 71979618, "xpub_magic_segwit_native": 73342198,
		"slip44": 1,
	}
	for k, v := range extra {
		cfg[k] = v
	}
	data, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "blockchaincfg.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// ltcLedger is the ledger of the node's current chain as litecoind decodes
// it, with its blocks.
func ltcLedger(t testing.TB, n *ltcregtest.Node) (*chaingen.Ledger, []ltcregtest.Block) {
	t.Helper()
	l, blocks, err := ltcregtest.Ledger(context.Background(), n)
	if err != nil {
		t.Fatal(err)
	}
	return l, blocks
}

// ltcStack is a litecoind on the generated chain and a blockbook synced to
// it (in-process).
type ltcStack struct {
	node    *ltcregtest.Node
	sc      *ltcregtest.Scenario
	inst    *instance
	cfg     string
	dataDir string
}

// startLtcStack starts litecoind and blockbook and waits until the index
// holds the node's tip. cfgExtra changes the config (e.g. p2p_address);
// mod changes the flags; nodeArgs are extra litecoind arguments.
func startLtcStack(t testing.TB, cfgExtra map[string]any, mod func(*app.Options), nodeArgs ...string) *ltcStack {
	t.Helper()
	st := &ltcStack{dataDir: t.TempDir()}
	st.node, st.sc = startLtcNodeWith(t, nodeArgs...)
	st.cfg = writeLtcConfig(t, st.node, cfgExtra)
	st.inst = startInProcess(t, st.cfg, st.dataDir, mod)
	waitTip(t, st.inst.base, st.sc.TipHeight, st.sc.TipHash, st.inst.logs)
	return st
}

// mineLtc mines count blocks on n to a fresh address of wallet W and
// returns the new tip.
func mineLtc(t testing.TB, n *ltcregtest.Node, count int) (int32, string) {
	t.Helper()
	ctx := context.Background()
	var addr string
	if err := n.Wallet(ltcregtest.W).CallResult(ctx, &addr, "getnewaddress", "", "bech32"); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Call(ctx, "generatetoaddress", count, addr); err != nil {
		t.Fatalf("generatetoaddress: %v\n%s", err, n.LogTail(10))
	}
	h, hash, err := n.BestBlock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return h, hash
}
