package e2e

// Campaign 3 of the torture campaigns (issue 14): node faults. Blockbook's
// rpc_url points at a fault-injecting proxy (tools/rpcfault) in front of a
// real btcd; a seeded sequence of faults hits it while blocks and mempool
// txs keep arriving: btcd frozen (SIGSTOP), restarted, killed, answering
// garbage, truncated or HTTP errors through the proxy, stalling, lagging.
// During each fault the index-only answers stay 200 and equal the ledger,
// /health turns 503 with a reason and the status shows the node's error;
// after it the index catches up, equal to the ledger, and at the end it is
// byte-identical to a fresh sync.

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
	"github.com/openexplorer/blockbook/tools/rpcfault"
)

var (
	tortureFaults = flag.Int("torture.faults", 0,
		"faults of the node-fault campaign (default: one per category; with -torture.full: 100, each kind at least once)")
	tortureFaultsSeed = flag.Int64("torture.faults.seed", 20261126, "seed of the node-fault campaign's sequence")
)

// nodeFault is one fault of the campaign: done to btcd itself (freeze,
// restart, kill) or by the proxy. Its category is the kind of trouble the
// issue names; the short campaign runs one fault per category.
type nodeFault struct {
	name, category string
	proxy          rpcfault.Kind // rpcfault.None for the faults done to btcd
}

func nodeFaultKinds() []nodeFault {
	category := map[rpcfault.Kind]string{
		rpcfault.NotJSON: "garbage", rpcfault.HTMLError: "garbage", rpcfault.WrongShape: "garbage",
		rpcfault.WrongType: "garbage", rpcfault.Truncated: "truncated", rpcfault.CutConnection: "truncated",
		rpcfault.HTTP500: "http-error", rpcfault.HTTP503: "http-error", rpcfault.Stall: "stall", rpcfault.Lag: "lag",
	}
	out := []nodeFault{{name: "freeze", category: "freeze"}, {name: "restart", category: "restart"},
		{name: "kill", category: "restart"}}
	for _, k := range rpcfault.Kinds() {
		out = append(out, nodeFault{name: k.String(), category: category[k], proxy: k})
	}
	return out
}

// faultCategories is how many categories there are: the short size.
func faultCategories() int {
	seen := map[string]bool{}
	for _, k := range nodeFaultKinds() {
		seen[k.category] = true
	}
	return len(seen)
}

// faultSequence returns n faults in a seeded order. Up to the number of
// categories it takes one seeded fault of each category; up to the number
// of faults, each fault once; beyond, random ones.
func faultSequence(rng *rand.Rand, n int) []nodeFault {
	kinds := nodeFaultKinds()
	var seq []nodeFault
	if n <= faultCategories() {
		byCat := map[string][]nodeFault{}
		var cats []string
		for _, k := range kinds {
			if byCat[k.category] == nil {
				cats = append(cats, k.category)
			}
			byCat[k.category] = append(byCat[k.category], k)
		}
		for _, c := range cats {
			seq = append(seq, byCat[c][rng.Intn(len(byCat[c]))])
		}
	} else {
		seq = slices.Clone(kinds)
	}
	rng.Shuffle(len(seq), func(i, j int) { seq[i], seq[j] = seq[j], seq[i] })
	for len(seq) < n {
		seq = append(seq, kinds[rng.Intn(len(kinds))])
	}
	return seq[:n]
}

// faultCampaign is the state of one run.
type faultCampaign struct {
	t       *testing.T
	rng     *rand.Rand
	node    *regtest.Node
	proxy   *rpcfault.Proxy
	g       *chaingen.Generator
	inst    *instance
	pending []*wire.MsgTx // sent to the mempool, mined with the next block
	payee   uint64
	// the last payment's address and value (one payment per address)
	payeeAddr  string
	payeeValue int64
	sample     []string         // addresses checked against the ledger during faults
	checked    *chaingen.Ledger // the ledger of the last check
	round      int
	// fullLedger: the whole ledger after every fault (else see checkLedger)
	fullLedger bool
	txid       string // a confirmed tx the tx cache holds

	perKind           map[string]int
	detect, recover   []time.Duration
	lagCatchUp        []time.Duration
	duringChecks      int   // index-only answers compared with the ledger during faults
	nodeBound         int   // node-bound requests during faults (each a clear 503)
	indexRequests     int64 // background index-only requests
	indexErrors       atomic.Int64
	nodeBoundFailures int
}

func TestTortureFaults(t *testing.T) {
	n := tortureSize(*tortureFaults, faultCategories(), 100)
	c := &faultCampaign{t: t, rng: rand.New(rand.NewSource(*tortureFaultsSeed)), perKind: map[string]int{},
		fullLedger: n > faultCategories()}
	c.node = startNode(t)
	// A test that fails mid-freeze must not leave btcd stopped for its
	// cleanup (which runs after this one).
	t.Cleanup(func() { _ = c.node.Signal(syscall.SIGCONT) })
	c.g = demoChain(t)
	submit(t, c.g, c.node, 1)
	proxy, err := rpcfault.Start(c.node.RPCURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	c.proxy = proxy
	dataDir := t.TempDir()
	c.inst = startInProcess(t, writeConfig(t, c.node, map[string]any{"rpc_url": proxy.URL}), dataDir, nil)
	h, hash := c.g.Tip()
	waitTip(t, c.inst.base, h, hash.String(), c.inst.logs)
	c.pickSample()
	if c.fullLedger {
		c.checkLedger(true)
	} else {
		c.checked = c.g.Ledger() // the synced demo chain is TestE2ELedger's; the end checks all
	}

	stop := c.hammerIndex()
	t.Cleanup(stop)
	start := time.Now()
	for i, f := range faultSequence(c.rng, n) {
		c.perKind[f.name]++
		if f.proxy == rpcfault.Lag {
			c.lag(i)
		} else {
			c.fault(i, f)
		}
		if t.Failed() {
			break
		}
	}
	stop()
	if t.Failed() {
		return
	}
	elapsed := time.Since(start)
	c.checkLedger(true)

	// The end: byte-identical to a fresh sync of the node's chain.
	h, hash = c.g.Tip()
	c.inst.stop(t)
	ref := referenceIndex(t, writeConfig(t, c.node, nil), h, hash.String())
	compareIndexes(t, dataDir, ref)
	if c.indexErrors.Load() > 0 || c.nodeBoundFailures > 0 {
		t.Fatalf("%d index-only requests failed, %d node-bound requests did not answer a clear error",
			c.indexErrors.Load(), c.nodeBoundFailures)
	}
	tortureReport(t, "faults", "%d faults in %v (seed %d; %s), chain to height %d; "+
		"time to detect (/health 503) median %v max %v; time to recover (index at the node's tip, /health 200) median %v max %v; "+
		"lag catch-up per block median %v max %v; index-only requests %d (+%d compared with the ledger during faults), errors 0; "+
		"node-bound requests during faults %d, all a clear 503; lost: 0 (ledger equal after every fault, index byte-identical to a fresh sync)",
		n, elapsed.Round(time.Second), *tortureFaultsSeed, c.kindCounts(), h,
		faultsMedian(c.detect), faultsMax(c.detect), faultsMedian(c.recover), faultsMax(c.recover),
		faultsMedian(c.lagCatchUp), faultsMax(c.lagCatchUp), c.indexRequests, c.duringChecks, c.nodeBound)
}

// pickSample chooses addresses with history, in a seeded order.
func (c *faultCampaign) pickSample() {
	l := c.g.Ledger()
	var addrs []string
	for a, al := range l.Addresses {
		if len(al.Txids) > 0 {
			addrs = append(addrs, a)
		}
	}
	sort.Strings(addrs)
	c.rng.Shuffle(len(addrs), func(i, j int) { addrs[i], addrs[j] = addrs[j], addrs[i] })
	c.sample = addrs[:8]
	c.txid = l.Addresses[c.sample[0]].Txids[0]
	getJSON(c.t, c.inst.base+"/api/v2/tx/"+c.txid, 200, nil) // now in the tx cache
}

// hammerIndex sends index-only requests in the background until stop; every
// one must answer 200, whatever the node does.
func (c *faultCampaign) hammerIndex() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var n atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		paths := []string{"/api/v2/block-index/1", "/api/v2/tx/" + c.txid}
		for _, a := range c.sample {
			paths = append(paths, "/api/v2/address/"+url.PathEscape(a)+"?details=txids", "/api/v2/utxo/"+url.PathEscape(a))
		}
		for i := 0; ctx.Err() == nil; i++ {
			path := paths[i%len(paths)]
			code, err := tryGet(c.inst.base+path, nil)
			n.Add(1)
			if code != 200 {
				c.indexErrors.Add(1)
				c.t.Errorf("index-only GET %s: %d %v", path, code, err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			wg.Wait()
			c.indexRequests = n.Load()
		})
	}
}

// arrive mines the txs sent since the last block into a new block, submits
// it to btcd directly, and sends a new payment to btcd's mempool.
func (c *faultCampaign) arrive() {
	t := c.t
	t.Helper()
	if _, err := c.g.AddBlock(c.pending...); err != nil {
		t.Fatal(err)
	}
	h, _ := c.g.Tip()
	submit(t, c.g, c.node, h)
	c.payee++
	to, err := c.g.Address(chaingen.P2WPKH, 700_000+c.payee)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := c.g.CreatePayment([]chaingen.Output{{Address: to, Value: 10_000 + int64(c.payee)}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.node.SendRawTransaction(t.Context(), tx); err != nil {
		t.Fatalf("send payment: %v", err)
	}
	c.pending = []*wire.MsgTx{tx}
	c.payeeAddr, c.payeeValue = to, 10_000+int64(c.payee)
}

// waitStatusHealthy waits until the status no longer reports the node's
// trouble and says the index is in sync.
func (c *faultCampaign) waitStatusHealthy(name string) {
	t := c.t
	t.Helper()
	var st status
	for deadline := time.Now().Add(waitFor); ; time.Sleep(100 * time.Millisecond) {
		getJSON(t, c.inst.base+"/api/v2", 200, &st)
		if st.Backend.Error == "" && st.Blockbook.InSync {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: status still reports backend error %q, inSync %v", name, st.Backend.Error, st.Blockbook.InSync)
		}
	}
}

// checkMempool waits until the last payment shows as the payee's
// unconfirmed tx: the mempool caught up too.
func (c *faultCampaign) checkMempool() {
	t := c.t
	t.Helper()
	want := c.pending[0].TxHash().String()
	var got api.Address
	for deadline := time.Now().Add(waitFor); ; time.Sleep(100 * time.Millisecond) {
		getJSON(t, c.inst.base+"/api/v2/address/"+c.payeeAddr+"?details=txids", 200, &got)
		if got.UnconfirmedTxs == 1 && len(got.Txids) == 1 && got.Txids[0] == want &&
			got.UnconfirmedBalance.String() == fmt.Sprint(c.payeeValue) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the mempool did not show payment %s to %s: %+v\n%s", want, c.payeeAddr, got, tail(c.inst.logs.String(), 30))
		}
	}
}

// fault runs one fault from start to recovery: apply it, time the
// detection, check the answers during it, let blocks arrive, end it, time
// the recovery, check the ledger and the mempool.
func (c *faultCampaign) fault(i int, f nodeFault) {
	t := c.t
	t.Helper()
	before := c.g.Ledger()
	begin := time.Now()
	nodeUp := true
	switch f.name {
	case "freeze":
		if err := c.node.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		nodeUp = false
	case "restart":
		if err := c.node.Stop(); err != nil {
			t.Fatal(err)
		}
		nodeUp = false
	case "kill":
		c.node.Kill()
		nodeUp = false
	default:
		c.proxy.Set(rpcfault.Fault{Kind: f.proxy})
	}
	reason := waitHealthCode(t, c.inst.internal, 503, waitFor)
	detected := time.Since(begin)
	c.detect = append(c.detect, detected)
	c.checkDuringFault(f.name, before)
	if nodeUp {
		c.arrive() // the node moves on while blockbook cannot read it
	}
	// End the fault.
	switch f.name {
	case "freeze":
		if err := c.node.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
	case "restart", "kill":
		if err := c.node.Restart(t.Context()); err != nil {
			t.Fatal(err)
		}
		c.resubmitLost()
	default:
		c.proxy.Clear()
	}
	ended := time.Now()
	if !nodeUp {
		c.arrive()
	}
	h, hash := c.g.Tip()
	waitTip(t, c.inst.base, h, hash.String(), c.inst.logs)
	waitHealthCode(t, c.inst.internal, 200, waitFor)
	recovered := time.Since(ended)
	c.waitStatusHealthy(f.name)
	c.recover = append(c.recover, recovered)
	ledgerStart := time.Now()
	c.checkLedger(c.fullLedger)
	c.checkMempool()
	t.Logf("fault %d %s: /health 503 after %v (%s); recovered %v after the fault ended; index at %d; ledger checked in %v",
		i+1, f.name, detected.Round(time.Millisecond), reason, recovered.Round(time.Millisecond), h,
		time.Since(ledgerStart).Round(time.Millisecond))
}

// resubmitLost gives a restarted btcd back what a kill lost: blocks it had
// not flushed and the mempool txs (btcd keeps no mempool across restarts).
func (c *faultCampaign) resubmitLost() {
	t := c.t
	t.Helper()
	nh, _, err := c.node.BestBlock(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := c.g.Tip(); nh < h {
		t.Logf("btcd came back at %d of %d; resubmitting the rest", nh, h)
		submit(t, c.g, c.node, nh+1)
	}
	for _, tx := range c.pending {
		if _, err := c.node.SendRawTransaction(t.Context(), tx); err != nil && !strings.Contains(err.Error(), "already have") {
			t.Fatalf("resend payment: %v", err)
		}
	}
}

// checkDuringFault: the index-only answers equal the ledger of the chain the
// index holds, the status and /health name the node's trouble, and a
// node-bound request answers a clear 503, not a 500 or a hang.
func (c *faultCampaign) checkDuringFault(name string, l *chaingen.Ledger) {
	t := c.t
	t.Helper()
	for _, a := range c.sample {
		want := l.Addresses[a]
		var got api.Address
		getJSON(t, c.inst.base+"/api/v2/address/"+url.PathEscape(a)+"?details=txids&pageSize=1000", 200, &got)
		txids := got.Txids[min(got.UnconfirmedTxs, len(got.Txids)):]
		if got.Balance.String() != fmt.Sprint(want.Balance) || got.Txs != want.TxCount() || !slices.Equal(txids, want.Txids) {
			t.Errorf("during %s: %s: balance %s txs %d %v; ledger %d %d %v", name, a, got.Balance, got.Txs, txids,
				want.Balance, want.TxCount(), want.Txids)
		}
		c.duringChecks++
	}
	var bi struct {
		BlockHash string `json:"blockHash"`
	}
	getJSON(t, fmt.Sprintf("%s/api/v2/block-index/%d", c.inst.base, l.TipHeight), 200, &bi)
	if bi.BlockHash != l.TipHash {
		t.Errorf("during %s: block-index/%d = %s, ledger %s", name, l.TipHeight, bi.BlockHash, l.TipHash)
	}
	c.duringChecks++
	// /health may have turned on the sync worker's error first; the status's
	// node part follows the liveness probe's verdict within seconds.
	for deadline := time.Now().Add(waitFor); ; time.Sleep(100 * time.Millisecond) {
		var st status
		getJSON(t, c.inst.base+"/api/v2", 200, &st)
		if st.Backend.Error != "" && !st.Blockbook.InSync {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("during %s: status does not report the node's trouble: backend error %q, inSync %v",
				name, st.Backend.Error, st.Blockbook.InSync)
		}
	}
	for _, path := range []string{"/api/v2/rawblock/1", "/api/v2/estimatefee/2"} {
		code, body, took := timedRequest(t, "GET", c.inst.base+path, "")
		c.nodeBound++
		if code != 503 || !strings.Contains(body, "not responding") || took > 10*time.Second {
			c.nodeBoundFailures++
			t.Errorf("during %s: node-bound GET %s: %d after %v: %s", name, path, code, took, body)
		}
	}
}

// lag delays every node answer by hundreds of ms while blocks arrive: the
// index must follow each block, and the node is not declared down.
func (c *faultCampaign) lag(i int) {
	t := c.t
	t.Helper()
	delay := time.Duration(200+c.rng.Intn(400)) * time.Millisecond
	c.proxy.Set(rpcfault.Fault{Kind: rpcfault.Lag, Delay: delay})
	for range 2 {
		c.arrive()
		start := time.Now()
		h, hash := c.g.Tip()
		waitTip(t, c.inst.base, h, hash.String(), c.inst.logs)
		c.lagCatchUp = append(c.lagCatchUp, time.Since(start))
	}
	waitHealthCode(t, c.inst.internal, 200, waitFor)
	c.waitStatusHealthy("lag")
	c.proxy.Clear()
	c.checkLedger(c.fullLedger)
	c.checkMempool()
	t.Logf("fault %d lag %v: 2 blocks followed, catch-up %v", i+1, delay, c.lagCatchUp[len(c.lagCatchUp)-2:])
}

// checkLedger compares the index with the ledger at the current tip. The
// full campaign checks every address after every fault. The short one (CI)
// checks the addresses the new blocks changed plus a rotating seventh of the
// others, so every address is checked during the run; the whole ledger is
// checked at the end, and the index is compared byte for byte with a fresh
// sync, which covers every row.
func (c *faultCampaign) checkLedger(full bool) {
	l := c.g.Ledger()
	prev := c.checked
	c.checked = l
	if full || prev == nil {
		checkLedger(c.t, c.inst.base, l)
		return
	}
	addrs := make([]string, 0, len(l.Addresses))
	for a := range l.Addresses {
		addrs = append(addrs, a)
	}
	sort.Strings(addrs)
	part := *l
	part.Addresses = map[string]*chaingen.AddressLedger{}
	c.round++
	for i, a := range addrs {
		if i%7 == c.round%7 || ledgerChanged(prev.Addresses[a], l.Addresses[a]) {
			part.Addresses[a] = l.Addresses[a]
		}
	}
	checkLedger(c.t, c.inst.base, &part)
}

// ledgerChanged tells whether a block changed an address's history.
func ledgerChanged(before, after *chaingen.AddressLedger) bool {
	return before == nil || before.Balance != after.Balance || len(before.Txids) != len(after.Txids) ||
		before.Received != after.Received || len(before.Utxos) != len(after.Utxos)
}

// waitHealthCode polls /health until it answers want and returns its
// reason; a 503 must say why.
func waitHealthCode(t *testing.T, internal string, want int, within time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(within)
	var last string
	for time.Now().Before(deadline) {
		var h struct{ Status, Reason string }
		code, err := tryGet(internal+"/health", &h)
		if code == want && err == nil {
			if want == 503 && h.Reason == "" {
				t.Fatalf("/health 503 without a reason")
			}
			return h.Reason
		}
		last = fmt.Sprintf("%d %+v %v", code, h, err)
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("/health did not answer %d within %v; last: %s", want, within, last)
	return ""
}

func (c *faultCampaign) kindCounts() string {
	var parts []string
	for _, k := range nodeFaultKinds() {
		parts = append(parts, fmt.Sprintf("%s %d", k.name, c.perKind[k.name]))
	}
	return strings.Join(parts, ", ")
}

func faultsMedian(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2].Round(time.Millisecond)
}

func faultsMax(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return slices.Max(d).Round(time.Millisecond)
}
