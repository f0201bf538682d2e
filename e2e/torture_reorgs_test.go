package e2e

// Torture campaign 2 (issue 14): a seeded sequence of reorgs of random depth
// up to -torture.maxdepth, made with btcd's invalidateblock/reconsiderblock
// and with competing branches that confirm a double-spend of a mempool tx.
// Every reorg ends with the answers equal to the final chain's ledger, the
// mempool answers equal to btcd's mempool, and the index byte-identical to a
// fresh sync of the final chain; then the instance restarts and goes on.

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/txscript/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
)

var (
	tortureReorgCount = flag.Int("torture.reorgs", 0, "reorgs in TestTortureReorgs (default 2, full 30; an invalidateblock adds a reconsiderblock reorg)")
	tortureMaxDepth   = flag.Int("torture.maxdepth", 0, "deepest reorg of TestTortureReorgs (default 40, full 300)")
	tortureReorgSeed  = flag.Uint64("torture.reorgseed", 14, "seed of TestTortureReorgs' depths and kinds of reorg")
)

// reorgRun is the campaign's state: the node, the chain it follows (g) and
// the instance indexing it.
type reorgRun struct {
	t    *testing.T
	node *regtest.Node
	g    *chaingen.Generator
	inst *instance
	cfg  string
	dir  string
	step int

	reorgs []reorgResult
	// pendingSpends holds the inputs of every tx that may sit in btcd's
	// mempool (sent, or orphaned by a reorg): btcd's gettxout does not
	// count mempool spends of mined outputs.
	pendingSpends map[wire.OutPoint]bool
	doubleSpends  int
	returned      int // orphaned txs btcd took back into its mempool, seen pending
	compares      int
}

// reorgMod keeps the index following btcd, which pushes no tx
// notifications, with a mempool resync every 300 ms.
func reorgMod(o *app.Options) { o.ResyncMempoolMs = 300 }

// reorgResult is one reorg the index followed: how it was made, its depth
// and the time from the node's reorg (the RPC that made it returned) to the
// index at the new tip.
type reorgResult struct {
	kind  string
	depth int32
	took  time.Duration
}

// reorgStep is one planned reorg.
type reorgStep struct {
	depth      int
	invalidate bool // invalidateblock + reconsiderblock, else a competing branch
}

// reorgPlan draws the campaign's reorgs from the seed: a competing branch
// of the deepest depth, an invalidateblock (at least 2 deep, so that
// reconsiderblock brings its blocks back), a branch of depth 1, then one in
// three is an invalidateblock.
func reorgPlan(seed uint64, n, maxDepth int) []reorgStep {
	rng := rand.New(rand.NewPCG(seed, 2))
	plan := make([]reorgStep, n)
	for i := range plan {
		plan[i].depth = int(math.Round(math.Exp(rng.Float64() * math.Log(float64(maxDepth)))))
		plan[i].depth = min(max(plan[i].depth, 1), maxDepth)
		plan[i].invalidate = i == 1 || (i > 2 && rng.IntN(3) == 0)
	}
	plan[0].depth = maxDepth
	if n > 1 {
		plan[1].depth = max(plan[1].depth, 2)
	}
	if n > 2 {
		plan[2].depth = 1
	}
	return plan
}

func TestTortureReorgs(t *testing.T) {
	n := tortureSize(*tortureReorgCount, 2, 30)
	maxDepth := tortureSize(*tortureMaxDepth, 40, 300)
	plan := reorgPlan(*tortureReorgSeed, n, maxDepth)
	r := startReorgRun(t, maxDepth, plan)
	for i, st := range plan {
		r.step = i
		if st.invalidate {
			r.invalidateReorg(int32(st.depth))
		} else {
			r.branchReorg(int32(st.depth))
		}
	}
	kinds := map[string]int{}
	var depths []int
	var took []time.Duration
	for _, res := range r.reorgs {
		kinds[res.kind]++
		depths = append(depths, int(res.depth))
		took = append(took, res.took)
	}
	tortureReport(t, "reorgs", "seed=%d reorgs=%d (competing branch %d, invalidateblock+branch %d, reconsiderblock %d) "+
		"window=%d final chain=%d blocks; depths %s; catch-up median %s max %s; double-spends %d; "+
		"orphaned txs back as pending %d; dump compares %d, all equal; lost: 0",
		*tortureReorgSeed, len(r.reorgs), kinds["branch"], kinds["invalidate"], kinds["reconsider"],
		maxDepth, r.g.Height()+1, depthHistogram(depths), median(took), slices.Max(took),
		r.doubleSpends, r.returned, r.compares)
}

// depthHistogram counts depths per bucket: "1:n 2-10:n ...".
func depthHistogram(depths []int) string {
	bounds := []int{1, 10, 50, 150, 300, math.MaxInt}
	counts := make([]int, len(bounds))
	for _, d := range depths {
		i, _ := slices.BinarySearch(bounds, d)
		counts[i]++
	}
	var parts []string
	lo := 1
	for i, hi := range bounds {
		name := fmt.Sprintf("%d-%d", lo, hi)
		switch hi {
		case lo:
			name = fmt.Sprint(lo)
		case math.MaxInt:
			name = fmt.Sprintf(">%d", lo-1)
		}
		if counts[i] > 0 || hi != math.MaxInt {
			parts = append(parts, fmt.Sprintf("%s:%d", name, counts[i]))
		}
		lo = hi + 1
	}
	return strings.Join(parts, " ")
}

// median is the middle duration (the upper one of an even count).
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// startReorgRun starts btcd with a chain longer than the deepest reorg plus
// the demo's scripted start (the double-spent coins must be mined below
// every fork), and an index whose rollback window is exactly maxDepth.
func startReorgRun(t *testing.T, maxDepth int, plan []reorgStep) *reorgRun {
	t.Helper()
	spec := chaingen.DefaultDemo()
	spec.Blocks = maxDepth + 140
	growth := 0
	for _, st := range plan {
		growth += 4 // a branch: O's block and up to 3 more
		if st.invalidate {
			growth += st.depth
		}
	}
	// A recent tip keeps btcd "current", so it evicts mined and
	// double-spent txs from its mempool as production nodes do; the final
	// tip must still not be in the future.
	const step = time.Second
	start := time.Now().Add(-time.Duration(spec.Blocks+growth+600) * step)
	g := chaingen.New(&chaincfg.RegressionNetParams, "torture-reorgs", chaingen.WithTimestamps(start, step))
	if err := g.Demo(spec); err != nil {
		t.Fatal(err)
	}
	r := &reorgRun{t: t, node: startNode(t), g: g, dir: t.TempDir(), pendingSpends: map[wire.OutPoint]bool{}}
	submit(t, g, r.node, 1)
	r.cfg = writeConfig(t, r.node, map[string]any{"block_addresses_to_keep": maxDepth})
	r.inst = startInProcess(t, r.cfg, r.dir, reorgMod)
	h, hash := g.Tip()
	waitTip(t, r.inst.base, h, hash.String(), r.inst.logs)
	return r
}

// branchReorg mines tx O on the tip, puts tx A in the mempool, then submits
// a branch forking depth blocks below the tip that confirms A', spending
// A's input, and leaves O's input alone: after the reorg A is gone, O is
// pending again, and every other orphaned tx is where btcd put it.
func (r *reorgRun) branchReorg(depth int32) {
	t, ctx := r.t, context.Background()
	fork := r.g.Height() + 1 - depth
	coins := r.pickCoins(fork, 2)
	x, y, z := r.addr(chaingen.P2WPKH, 1), r.addr(chaingen.P2TR, 2), r.addr(chaingen.P2PKH, 3)
	o := r.spend(r.g, coins[0], z, 2)
	if _, err := r.g.AddBlock(o); err != nil {
		t.Fatal(err)
	}
	submit(t, r.g, r.node, r.g.Height())
	oldH, oldHash := r.g.Tip()
	waitTip(t, r.inst.base, oldH, oldHash.String(), r.inst.logs)
	a := r.spend(r.g, coins[1], x, 2)
	r.notePending(a)
	if _, err := r.node.SendRawTransaction(ctx, a); err != nil {
		t.Fatalf("send A: %v", err)
	}
	waitAddress(t, r.inst.base, x, func(a *api.Address) bool { return a.UnconfirmedTxs == 1 })

	b, err := r.g.Fork(fork, fmt.Sprintf("reorg-%d", r.step))
	if err != nil {
		t.Fatal(err)
	}
	_ = r.spend(b, coins[0], z, 2) // only takes O's input out of the branch's wallet
	if _, err := b.AddBlock(r.spend(b, coins[1], y, 3)); err != nil {
		t.Fatal(err)
	}
	// A' is in block fork+1; the branch ends 1-3 blocks above the old tip.
	if err := b.Extend(int(depth)+r.step%3, 4); err != nil {
		t.Fatal(err)
	}
	// Up to the old tip's height the branch is a side chain; the next
	// block makes it the longest.
	if err := chaingen.SubmitBlocks(ctx, r.node, b.Blocks()[:oldH+1], fork+1); err != nil {
		t.Fatal(err)
	}
	mark := len(r.inst.logs.String())
	if err := chaingen.SubmitBlocks(ctx, r.node, b.Blocks(), oldH+1); err != nil {
		t.Fatal(err)
	}
	orphaned := r.orphan(r.g.Blocks(), fork)
	r.g = b
	newH, newHash := b.Tip()
	took := r.followReorg(mark, fork, newH, newHash.String())
	r.reorgs = append(r.reorgs, reorgResult{"branch", depth, took})
	r.doubleSpends++
	returned := r.verify(b.Ledger(), orphaned, true, func() {
		r.checkDoubleSpend(x, z, a.TxHash().String(), o.TxHash().String())
	})
	t.Logf("reorg %d: branch depth %d fork %d, catch-up %s, %d of %d orphaned txs pending again",
		r.step, depth, fork, took, returned, len(orphaned))
	r.restart()
}

// invalidateReorg mines depth blocks and invalidates the first of them:
// btcd falls back to the old tip (higher than every branch orphaned before,
// so no stale branch has more work) and takes the orphaned txs into its
// mempool. The node is current (its tip is recent), so the index rolls
// back to the node's tip at once, as Blockbook does (docs/operations.md);
// a branch on the fork then extends it. reconsiderblock then brings the
// old blocks back when they have more work than that branch.
func (r *reorgRun) invalidateReorg(depth int32) {
	t, ctx := r.t, context.Background()
	from := r.g.Height() + 1
	if err := r.g.Extend(int(depth), 4); err != nil {
		t.Fatal(err)
	}
	submit(t, r.g, r.node, from)
	old := r.g
	oldH, oldHash := old.Tip()
	waitTip(t, r.inst.base, oldH, oldHash.String(), r.inst.logs)
	fork := oldH - depth
	root := old.Blocks()[fork+1].BlockHash().String()
	// The index unwinds as soon as btcd has: mark the log first.
	mark := len(r.inst.logs.String())
	if err := r.node.InvalidateBlock(ctx, root); err != nil {
		t.Fatal(err)
	}
	forkHash := old.Blocks()[fork].BlockHash().String()
	r.requireNodeTip(fork, forkHash)
	waitTip(t, r.inst.base, fork, forkHash, r.inst.logs)

	// The branch is shorter than the invalidated blocks when it can be.
	k := 1 + r.step%3
	if depth > 1 {
		k = min(k, int(depth)-1)
	}
	b, err := old.Fork(fork, fmt.Sprintf("reorg-%d", r.step))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Extend(k, 4); err != nil {
		t.Fatal(err)
	}
	if err := b.Submit(ctx, r.node, fork+1); err != nil {
		t.Fatal(err)
	}
	r.g = b
	newH, newHash := b.Tip()
	took := r.followReorg(mark, fork, newH, newHash.String())
	r.reorgs = append(r.reorgs, reorgResult{"invalidate", depth, took})
	orphaned := r.orphan(old.Blocks(), fork)
	returned := r.verify(b.Ledger(), orphaned, true, nil)
	t.Logf("reorg %d: invalidateblock depth %d fork %d + branch of %d, catch-up %s, %d of %d orphaned txs pending again",
		r.step, depth, fork, k, took, returned, len(orphaned))
	r.restart()

	// The index may see btcd's reorg while the RPC runs: mark the log first.
	mark = len(r.inst.logs.String())
	if err := r.node.ReconsiderBlock(ctx, root); err != nil {
		t.Fatal(err)
	}
	if int(depth) <= k {
		r.requireNodeTip(newH, newHash.String()) // the branch has as much work: btcd stays
		return
	}
	r.g = old
	took = r.followReorg(mark, fork, oldH, oldHash.String())
	r.reorgs = append(r.reorgs, reorgResult{"reconsider", int32(k), took})
	r.verify(old.Ledger(), r.orphan(b.Blocks(), fork), false, nil)
	r.restart()
}

// followReorg waits for the index to reach the node's new tip, requires a
// reorg down to fork in the log written since mark, and returns the time
// from the node's reorg (done when the RPC returned) to the index's tip.
func (r *reorgRun) followReorg(mark int, fork, h int32, hash string) time.Duration {
	t := r.t
	t0 := time.Now()
	r.requireNodeTip(h, hash)
	waitTip(t, r.inst.base, h, hash, r.inst.logs)
	took := time.Since(t0)
	// btcd may show a reorg half-way, so the index can unwind in two
	// steps; one of them must end at the fork.
	logs := r.inst.logs.String()[mark:]
	if !strings.Contains(logs, fmt.Sprintf("fork=%d ", fork)) {
		t.Fatalf("reorg %d: no reorg down to %d in the log\n%s", r.step, fork, tail(logs, 30))
	}
	return took
}

func (r *reorgRun) requireNodeTip(h int32, hash string) {
	r.t.Helper()
	nh, nhash, err := r.node.BestBlock(context.Background())
	if err != nil || nh != h || nhash != hash {
		r.t.Fatalf("reorg %d: node at %d %s (%v), want %d %s", r.step, nh, nhash, err, h, hash)
	}
}

// verify checks the answers against the ledger and the mempool against
// btcd's (and runs more live checks), then compares the stopped index with
// a fresh sync of the chain.
func (r *reorgRun) verify(l *chaingen.Ledger, orphaned []string, count bool, more func()) int {
	checkLedger(r.t, r.inst.base, l)
	returned := r.checkMempool(l, orphaned)
	if more != nil {
		more()
	}
	if count {
		r.returned += returned
	}
	r.inst.stop(r.t)
	ref := referenceIndex(r.t, r.cfg, l.TipHeight, l.TipHash)
	compareIndexes(r.t, r.dir, ref)
	r.compares++
	if err := os.RemoveAll(ref); err != nil {
		r.t.Fatal(err)
	}
	return returned
}

// restart starts the instance again on the same datadir.
func (r *reorgRun) restart() {
	r.inst = startInProcess(r.t, r.cfg, r.dir, reorgMod)
	h, hash := r.g.Tip()
	waitTip(r.t, r.inst.base, h, hash.String(), r.inst.logs)
}

// addr is a fresh wallet address of this reorg.
func (r *reorgRun) addr(kind chaingen.ScriptKind, i uint64) string {
	return mempoolAddr(r.t, r.g, kind, 1000+uint64(r.step)*10+i)
}

// spend pays half of coin to addr from g's wallet, the rest back as change.
func (r *reorgRun) spend(g *chaingen.Generator, coin chaingen.Coin, addr string, feeRate int64) *wire.MsgTx {
	tx, err := g.Spend([]chaingen.Coin{coin}, []chaingen.Output{{Address: addr, Value: coin.Value / 2}}, feeRate)
	if err != nil {
		r.t.Fatalf("spend %v: %v", coin.OutPoint, err)
	}
	return tx
}

// pickCoins returns n single-key wallet outputs of txs mined at or below
// height maxH that neither the chain nor btcd's mempool spends, so the
// branch forking at maxH can spend them too.
func (r *reorgRun) pickCoins(maxH int32, n int) []chaingen.Coin {
	blocks := r.g.Blocks()
	var out []chaingen.Coin
	for h := maxH; h > 0; h-- {
		for _, tx := range blocks[h].Transactions[1:] {
			for _, c := range r.g.Coins(tx) {
				switch txscript.GetScriptClass(c.PkScript) {
				case txscript.PubKeyHashTy, txscript.WitnessV0PubKeyHashTy, txscript.WitnessV1TaprootTy:
				default:
					continue
				}
				if c.Value < 100_000 || r.pendingSpends[c.OutPoint] || !r.unspent(c.OutPoint) {
					continue
				}
				if out = append(out, c); len(out) == n {
					return out
				}
			}
		}
	}
	r.t.Fatalf("reorg %d: no %d unspent wallet coins at or below %d", r.step, n, maxH)
	return nil
}

// unspent asks btcd whether op is unspent, counting its mempool's spends.
func (r *reorgRun) unspent(op wire.OutPoint) bool {
	raw, err := r.node.Call(context.Background(), "gettxout", op.Hash.String(), op.Index, true)
	if err != nil {
		r.t.Fatalf("gettxout: %v", err)
	}
	return string(raw) != "null"
}

// orphan lists the txs (coinbases aside) of the blocks above height, which
// a reorg to height orphans, and notes what they spend.
func (r *reorgRun) orphan(blocks []*wire.MsgBlock, height int32) []string {
	var out []string
	for _, b := range blocks[height+1:] {
		for _, tx := range b.Transactions[1:] {
			out = append(out, tx.TxHash().String())
			r.notePending(tx)
		}
	}
	return out
}

// notePending records what a tx that may stay in btcd's mempool spends.
func (r *reorgRun) notePending(tx *wire.MsgTx) {
	for _, in := range tx.TxIn {
		r.pendingSpends[in.PreviousOutPoint] = true
	}
}

// checkMempool waits for two mempool resyncs that began after the index
// reached the tip, requires the index's mempool to be as large as btcd's,
// and then every orphaned tx to answer as btcd says: pending when btcd took
// it back, mined at the ledger's height when the new chain has it, else not
// found. It returns how many orphaned txs are pending.
func (r *reorgRun) checkMempool(l *chaingen.Ledger, orphaned []string) int {
	t, base := r.t, r.inst.base
	var pool []string
	if err := r.node.CallResult(context.Background(), &pool, "getrawmempool"); err != nil {
		t.Fatal(err)
	}
	since := time.Now()
	first := waitStatus(t, base, func(s *api.SystemInfo) bool { return s.Blockbook.LastMempoolTime.After(since) })
	sys := waitStatus(t, base, func(s *api.SystemInfo) bool {
		return s.Blockbook.LastMempoolTime.After(first.Blockbook.LastMempoolTime)
	})
	if sys.Blockbook.MempoolSize != len(pool) {
		t.Fatalf("reorg %d: the index's mempool holds %d txs, btcd's %d", r.step, sys.Blockbook.MempoolSize, len(pool))
	}
	inPool := make(map[string]bool, len(pool))
	for _, id := range pool {
		inPool[id] = true
	}
	returned := 0
	for _, id := range orphaned {
		var tx api.Tx
		code, err := tryGet(base+"/api/v2/tx/"+id, &tx)
		info, mined := l.Txs[id]
		switch {
		case err != nil:
			t.Fatalf("tx %s: %v", id, err)
		case inPool[id]:
			returned++
			if code != 200 || tx.BlockHeight != -1 || tx.Confirmations != 0 {
				t.Fatalf("reorg %d: orphaned tx %s is in btcd's mempool but answers %d height %d", r.step, id, code, tx.BlockHeight)
			}
		case mined:
			if code != 200 || tx.BlockHeight != int64(info.Height) {
				t.Fatalf("reorg %d: tx %s mined at %d answers %d height %d", r.step, id, info.Height, code, tx.BlockHeight)
			}
		case code != 400:
			t.Fatalf("reorg %d: orphaned tx %s, gone from chain and mempool, answers %d height %d", r.step, id, code, tx.BlockHeight)
		}
	}
	return returned
}

// checkDoubleSpend requires that A (paying x, double-spent by the branch)
// is gone from the REST and websocket answers and O (paying z, orphaned)
// is pending again.
func (r *reorgRun) checkDoubleSpend(x, z, aID, oID string) {
	t, base := r.t, r.inst.base
	var a api.Address
	getJSON(t, base+"/api/v2/address/"+x+"?details=txids", 200, &a)
	if a.Txs != 0 || a.UnconfirmedTxs != 0 || amount(a.UnconfirmedBalance) != "0" || len(a.Txids) != 0 {
		t.Fatalf("reorg %d: the double-spent tx still shows at %s: %+v", r.step, x, a)
	}
	var tx api.Tx
	if code, _ := tryGet(base+"/api/v2/tx/"+aID, &tx); code != 400 {
		t.Fatalf("reorg %d: the double-spent tx %s answers %d height %d", r.step, aID, code, tx.BlockHeight)
	}
	getJSON(t, base+"/api/v2/address/"+z+"?details=txids", 200, &a)
	if a.Txs != 0 || a.UnconfirmedTxs != 1 || !slices.Equal(a.Txids, []string{oID}) || amount(a.UnconfirmedBalance) == "0" {
		t.Fatalf("reorg %d: the orphaned tx %s is not pending at %s: %+v", r.step, oID, z, a)
	}
	// The websocket answers the same.
	ws := newWS(t, base)
	var wa api.Address
	ws.ok("getAccountInfo", map[string]any{"descriptor": x, "details": "txids"}, &wa)
	if wa.Txs != 0 || wa.UnconfirmedTxs != 0 || len(wa.Txids) != 0 {
		t.Fatalf("reorg %d: websocket: the double-spent tx still shows at %s: %+v", r.step, x, wa)
	}
	ws.ok("getAccountInfo", map[string]any{"descriptor": z, "details": "txids"}, &wa)
	if wa.UnconfirmedTxs != 1 || !slices.Equal(wa.Txids, []string{oID}) {
		t.Fatalf("reorg %d: websocket: the orphaned tx %s is not pending at %s: %+v", r.step, oID, z, wa)
	}
	ws.fails("getTransaction", map[string]any{"txid": aID}, "not found")
}
