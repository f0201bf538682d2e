package e2e

import (
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// startReplica runs a replica (-replica) of the index in dataDir in-process.
func startReplica(t *testing.T, cfgPath, dataDir string) *instance {
	t.Helper()
	return startInProcess(t, cfgPath, dataDir, func(o *app.Options) {
		o.Sync = false
		o.Replica.On = true
		o.Replica.Dir = t.TempDir()
		o.Replica.MaxLag = 5 * time.Second
		o.Replica.MaxBlocks = 2
		o.EnableSubNewTx = true
	})
}

// replicaStatus is the part of /api/v2 of a replica the test reads.
type replicaStatus struct {
	Blockbook struct {
		BestHeight uint32           `json:"bestHeight"`
		SyncMode   bool             `json:"syncMode"`
		Replica    *api.ReplicaInfo `json:"replica"`
	} `json:"blockbook"`
}

// A primary and two replicas behind nginx: REST and websocket through the
// balancer answer the ledger; blocks and mempool txs reach subscribers of
// every replica; a reorg and a kill -9 of the primary mid-sync leave the
// replicas consistent with the ledger at their tip, and they catch up once
// the primary is back.
//
// Long: one scenario over one set of processes (starting them is most of
// its cost), in the order the issue lists the checks.
func TestE2EReplicas(t *testing.T) {
	node := startNode(t)
	g := demoChain(t)
	submit(t, g, node, 1)
	cfg := writeConfig(t, node, nil)
	dir := t.TempDir()
	primary := startChild(t, cfg, dir, "-bulkthreshold=0", "-enablesubnewtx")
	h, hash := g.Tip()
	waitTip(t, primary.base, h, hash.String(), primary.logs)
	reps := []*instance{startReplica(t, cfg, dir), startReplica(t, cfg, dir)}
	for _, r := range reps {
		waitTip(t, r.base, h, hash.String(), r.logs)
		var st replicaStatus
		getJSON(t, r.base+"/api/v2", 200, &st)
		if st.Blockbook.Replica == nil || st.Blockbook.SyncMode {
			t.Fatalf("replica status without its replica part: %+v", st.Blockbook)
		}
		if code, _ := tryGet(r.internal+"/health", nil); code != 200 {
			t.Fatalf("replica /health %d at the tip\n%s", code, tail(r.logs.String(), 20))
		}
	}
	sameAnswers(t, g, primary.base, reps)
	lb := startNginx(t, []string{hostOf(primary.base), hostOf(reps[0].base), hostOf(reps[1].base)})

	// REST and websocket through the balancer.
	checkLedger(t, lb, g.Ledger())
	checkWSLedger(t, lb, g.Ledger())

	// Notifications on every replica: a mempool tx to a subscribed address,
	// then the block that mines it (with newBlockTxs).
	x := mempoolAddr(t, g, chaingen.P2WPKH, 31)
	type subs struct {
		c              *wsClient
		blocks, addrs  string
		name           string
		mempool, block time.Duration
	}
	var ss []*subs
	for i, base := range []string{reps[0].base, reps[1].base, lb} {
		c := newWS(t, base)
		var sub struct{ Subscribed bool }
		s := &subs{c: c, name: []string{"replica 1", "replica 2", "balancer"}[i]}
		s.blocks = c.ok("subscribeNewBlock", nil, &sub)
		s.addrs = c.ok("subscribeAddresses", map[string]any{"addresses": []string{x}, "newBlockTxs": true}, &sub)
		ss = append(ss, s)
	}
	tx, err := g.CreatePayment([]chaingen.Output{{Address: x, Value: 70_000}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	txid := sendTx(t, &demoStack{node: node}, tx)
	for _, s := range ss {
		var n addrNote
		s.c.notification(s.addrs, &n)
		s.mempool = time.Since(sent)
		if n.Address != x || n.Tx.Txid != txid || n.Tx.BlockHeight != -1 {
			t.Fatalf("%s: mempool notification %+v", s.name, n)
		}
	}
	if _, err := g.AddBlock(tx); err != nil {
		t.Fatal(err)
	}
	sent = time.Now()
	submit(t, g, node, g.Height())
	h, hash = g.Tip()
	for _, s := range ss {
		var bn blockNote
		s.c.notification(s.blocks, &bn)
		s.block = time.Since(sent)
		if bn.Height != uint32(h) || bn.Hash != hash.String() {
			t.Fatalf("%s: block notification %+v, want %d %s", s.name, bn, h, hash)
		}
		var n addrNote
		s.c.notification(s.addrs, &n)
		if n.Tx.Txid != txid || n.Tx.BlockHeight != int64(h) {
			t.Fatalf("%s: confirmation notification %+v", s.name, n)
		}
		t.Logf("%s: mempool tx notified %s after sendrawtransaction, block %s after submitblock",
			s.name, s.mempool.Round(time.Millisecond), s.block.Round(time.Millisecond))
	}

	// A reorg of depth 3 reaches the replicas' answers and subscribers. The
	// fork is above the payment's block, so that the payment stays mined
	// (an orphaned one would go back to the node's mempool and conflict
	// with the branch's txs).
	mined := g.Height()
	if err := g.Extend(4, 2); err != nil {
		t.Fatal(err)
	}
	submit(t, g, node, mined+1)
	g = competingBranch(t, g, node, g.Height()-3, 1, "replica-reorg")
	h, hash = g.Tip()
	for i, r := range reps {
		waitTip(t, r.base, h, hash.String(), r.logs)
		checkLedger(t, r.base, g.Ledger())
		for { // the new branch's blocks, the tip last
			var bn blockNote
			ss[i].c.notification(ss[i].blocks, &bn)
			if bn.Hash == hash.String() {
				break
			}
		}
	}

	// kill -9 of the primary, idle, then of its restart in the middle of a
	// sync of 150 blocks (it SIGKILLs itself after its 40th block write).
	if err := primary.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	primary.wait(t)
	base := g.Height()
	if err := g.Extend(150, 6); err != nil {
		t.Fatal(err)
	}
	submit(t, g, node, base+1)
	primary = startChild(t, cfg, dir, "-bulkthreshold=0", fmt.Sprintf("%s=40", app.KillAfterWritesEnv))
	primary.wait(t)
	if !primary.killedBySignal() {
		t.Fatalf("primary ended with %v\n%s", primary.cmd.ProcessState, tail(primary.logs.String(), 20))
	}
	// The index the primary left, opened on a copy without -sync: the
	// reference the replicas must equal.
	copied := filepath.Join(t.TempDir(), "copy")
	copyDir(t, dir, copied)
	ref := startInProcess(t, cfg, copied, func(o *app.Options) { o.Sync = false })
	var refSt status
	getJSON(t, ref.base+"/api/v2", 200, &refSt)
	if part, err := g.Fork(int32(refSt.Blockbook.BestHeight), "ledger-of-copy"); err == nil {
		checkLedger(t, ref.base, part.Ledger())
		t.Logf("the primary's index at %d (a copy, opened without -sync) answers the ledger: %v", refSt.Blockbook.BestHeight, !t.Failed())
	}
	for i, r := range reps {
		at := stableHeight(t, r.base)
		if at >= uint32(g.Height()) {
			t.Fatalf("replica %d reached the tip %d: the kill landed after the sync", i+1, at)
		}
		part, err := g.Fork(int32(at), fmt.Sprintf("ledger-at-%d", at))
		if err != nil {
			t.Fatal(err)
		}
		checkLedger(t, r.base, part.Ledger())
		code, _ := tryGet(r.internal+"/health", nil)
		t.Logf("replica %d: consistent at %d of %d with the primary down; /health %d", i+1, at, g.Height(), code)
		if code != 503 {
			t.Fatalf("replica %d /health %d while %d blocks behind the node", i+1, code, uint32(g.Height())-at)
		}
	}
	primary = startChild(t, cfg, dir, "-bulkthreshold=0")
	h, hash = g.Tip()
	waitTip(t, primary.base, h, hash.String(), primary.logs)
	for i, r := range reps {
		waitTip(t, r.base, h, hash.String(), r.logs)
		t.Logf("replica %d caught up after the primary's restart", i+1)
		checkLedger(t, r.base, g.Ledger())
	}
	lb = startNginx(t, []string{hostOf(primary.base), hostOf(reps[0].base), hostOf(reps[1].base)})
	checkLedger(t, lb, g.Ledger())
}

// checkWSLedger asks the websocket (getAccountInfo) for a sample of the
// ledger's addresses.
func checkWSLedger(t *testing.T, base string, l *chaingen.Ledger) {
	t.Helper()
	c := newWS(t, base)
	n := 0
	for addr, want := range l.Addresses {
		var got api.Address
		c.ok("getAccountInfo", map[string]any{"descriptor": addr}, &got)
		if got.Balance.String() != fmt.Sprint(want.Balance) || got.Txs != want.TxCount() {
			t.Errorf("websocket %s: balance %s txs %d; ledger %d %d", addr, got.Balance, got.Txs, want.Balance, want.TxCount())
		}
		if n++; n == 40 {
			break
		}
	}
}

// stableHeight waits until a replica's tip stays put for a second (the
// primary is down) and returns it.
func stableHeight(t *testing.T, base string) uint32 {
	t.Helper()
	var last uint32
	since := time.Now()
	deadline := time.Now().Add(waitFor)
	for time.Now().Before(deadline) {
		var st status
		getJSON(t, base+"/api/v2", 200, &st)
		if st.Blockbook.BestHeight != last {
			last, since = st.Blockbook.BestHeight, time.Now()
		} else if time.Since(since) > time.Second {
			return last
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("replica tip still moving at %d", last)
	return 0
}

func hostOf(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		panic(err)
	}
	return strings.TrimSuffix(u.Host, "/")
}

// sameAnswers requires the replicas' REST answers and explorer pages to be
// byte-identical to the primary's at the same tip.
func sameAnswers(t *testing.T, g *chaingen.Generator, primary string, reps []*instance) {
	t.Helper()
	addr := mempoolAddr(t, g, chaingen.P2WPKH, 0)
	for a := range g.Ledger().Addresses {
		addr = a
		break
	}
	h := g.Height()
	paths := []string{
		fmt.Sprintf("/api/v2/block/%d", h), fmt.Sprintf("/api/v2/block-index/%d", h/2), "/api/v2/address/" + addr + "?details=txs",
		"/api/v2/utxo/" + addr, fmt.Sprintf("/block/%d", h), "/address/" + addr,
	}
	for _, p := range paths {
		want := body(t, primary+p)
		for i, r := range reps {
			if got := body(t, r.base+p); got != want {
				t.Errorf("replica %d %s differs from the primary's:\n%s\nprimary:\n%s", i+1, p, tail(got, 5), tail(want, 5))
			}
		}
	}
}

func body(t *testing.T, u string) string {
	t.Helper()
	resp, err := httpClient.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v", u, resp.StatusCode, err)
	}
	return string(b)
}
