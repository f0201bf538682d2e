package e2e

// Torture campaign 5, a soak (issue 14): many REST and websocket clients
// for minutes while blocks and mempool txs keep arriving. The clients
// share one public address, so the per-client limits, raised by flags as
// an operator would for such a client, are what is exercised. Every answer
// checked is compared with what the chain held at that moment, every
// subscriber must get every notification, and the server's memory must
// stay flat. The load itself is in torture_soak_load_test.go.

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
	"github.com/openexplorer/blockbook/tools/soak"
)

var (
	soakRESTFlag = flag.Int("torture.soak.rest", 0, "soak: concurrent REST clients (short 20, full 200)")
	soakWSFlag   = flag.Int("torture.soak.ws", 0, "soak: websocket clients (short 200, full 2000)")
	soakDurFlag  = flag.Duration("torture.soak.duration", 0, "soak: how long the load runs (short 20s, full 10m)")
)

// soakClientIP is the one public client all soak connections stand for
// (the test is the local proxy that names it in X-Real-Ip).
const soakClientIP = "203.0.113.80"

// soakPayees is how many fresh addresses the soak's payments rotate over.
const soakPayees = 8

// soakTxsPerBlock payments go to the mempool before each block mines them.
const soakTxsPerBlock = 3

// addrState is an address's confirmed state at one height.
type addrState struct {
	Balance, Received, Sent int64
	Txs                     int
}

// soakTx is a payment of the soak: its payee and, once indexed, its block.
type soakTx struct {
	txid   string
	payee  int
	height int32
}

// soakOracle is what the chain held at each height since the soak began,
// for the clients to check answers against. tip is the node's tip (the
// index cannot be ahead of it); indexed is a tip the index was seen to
// reach, so an answer started after reading indexed and finished before
// reading tip describes a height between the two.
type soakOracle struct {
	mu      sync.RWMutex
	hot     []string // payees, then the wallet's change address
	start   int32
	hashes  []string // by height
	ntx     []int    // txs per block, by height
	states  []map[string]addrState
	txs     []soakTx // every soak payment, by sequence number
	mined   []int    // sequence numbers of the indexed payments
	indexed int32
	tip     int32
}

func newSoakOracle(g *chaingen.Generator, hot []string) *soakOracle {
	o := &soakOracle{hot: hot, start: g.Height()}
	for _, b := range g.Blocks() {
		o.hashes = append(o.hashes, b.BlockHash().String())
		o.ntx = append(o.ntx, len(b.Transactions))
	}
	o.states = append(o.states, o.snapshot(g))
	o.indexed, o.tip = g.Height(), g.Height()
	return o
}

// snapshot reads the hot addresses' state from the generator's ledger.
func (o *soakOracle) snapshot(g *chaingen.Generator) map[string]addrState {
	l := g.Ledger()
	s := make(map[string]addrState, len(o.hot))
	for _, a := range o.hot {
		if al := l.Addresses[a]; al != nil {
			s[a] = addrState{Balance: al.Balance, Received: al.Received, Sent: al.Sent, Txs: al.TxCount()}
		}
	}
	return s
}

// bracket is the range of index tips an answer may describe: call lo
// before the request and hi after it.
func (o *soakOracle) lo() int32 {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return o.indexed
}

func (o *soakOracle) hi() int32 {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return o.tip
}

// stateIn reports whether the address had state s at a height in [lo, hi].
func (o *soakOracle) stateIn(addr string, s addrState, lo, hi int32) bool {
	o.mu.RLock()
	defer o.mu.RUnlock()
	for h := max(lo, o.start); h <= hi && int(h-o.start) < len(o.states); h++ {
		if o.states[h-o.start][addr] == s {
			return true
		}
	}
	return false
}

// block returns the hash and tx count at height.
func (o *soakOracle) block(h int32) (string, int) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return o.hashes[h], o.ntx[h]
}

// minedTx picks an indexed payment by n (any number; nil before the first).
func (o *soakOracle) minedTx(n int) *soakTx {
	o.mu.RLock()
	defer o.mu.RUnlock()
	if len(o.mined) == 0 {
		return nil
	}
	tx := o.txs[o.mined[n%len(o.mined)]]
	return &tx
}

// seqOf is the sequence number of a soak payment, or -1.
func (o *soakOracle) seqOf(txid string) int {
	o.mu.RLock()
	defer o.mu.RUnlock()
	for i := len(o.txs) - 1; i >= 0; i-- {
		if o.txs[i].txid == txid {
			return i
		}
	}
	return -1
}

// soakProducer sends payments to the mempool and mines them, a block at a
// time, until the deadline; it runs on the test's goroutine.
type soakProducer struct {
	t      *testing.T
	g      *chaingen.Generator
	node   *regtest.Node
	base   string
	logs   fmt.Stringer
	oracle *soakOracle
	payees []string
}

// Long: one cycle of the soak's chain (pay, wait until the index lists the
// payments as pending, mine, wait until the index has the block), kept in
// one place so its order is plain.
func (p *soakProducer) cycle(n int) {
	t, g := p.t, p.g
	var txs []*wire.MsgTx
	for i := range soakTxsPerBlock {
		payee := (n*soakTxsPerBlock + i) % soakPayees
		tx, err := g.CreatePayment([]chaingen.Output{{Address: p.payees[payee], Value: int64(10_000 + n)}}, 2)
		if err != nil {
			t.Fatalf("payment %d: %v", n, err)
		}
		p.oracle.mu.Lock()
		p.oracle.txs = append(p.oracle.txs, soakTx{txid: tx.TxHash().String(), payee: payee, height: -1})
		p.oracle.mu.Unlock()
		if _, err := p.node.SendRawTransaction(context.Background(), tx); err != nil {
			t.Fatalf("sendrawtransaction: %v\n%s", err, p.node.LogTail(10))
		}
		txs = append(txs, tx)
	}
	// The index lists each as pending before the block comes, so that
	// every payment passes through the mempool (and its notifications).
	for i, tx := range txs {
		p.waitPending(p.payees[(n*soakTxsPerBlock+i)%soakPayees], tx.TxHash().String())
	}
	b, err := g.AddBlock(txs...)
	if err != nil {
		t.Fatal(err)
	}
	state := p.oracle.snapshot(g)
	h, hash := g.Tip()
	p.oracle.mu.Lock()
	p.oracle.hashes = append(p.oracle.hashes, hash.String())
	p.oracle.ntx = append(p.oracle.ntx, len(b.Transactions))
	p.oracle.states = append(p.oracle.states, state)
	p.oracle.tip = h
	p.oracle.mu.Unlock()
	submit(t, g, p.node, h)
	waitTip(t, p.base, h, hash.String(), p.logs)
	p.oracle.mu.Lock()
	p.oracle.indexed = h
	for seq := len(p.oracle.txs) - len(txs); seq < len(p.oracle.txs); seq++ {
		p.oracle.txs[seq].height = h
		p.oracle.mined = append(p.oracle.mined, seq)
	}
	p.oracle.mu.Unlock()
}

// waitPending polls the payee (as the operator's own tool, outside the
// limits and the figures) until the index lists txid as pending.
func (p *soakProducer) waitPending(addr, txid string) {
	deadline := time.Now().Add(waitFor)
	for time.Now().Before(deadline) {
		var a struct {
			Txids          []string `json:"txids"`
			UnconfirmedTxs int      `json:"unconfirmedTxs"`
		}
		if code, _ := tryGet(p.base+"/api/v2/address/"+addr+"?details=txids&pageSize=5", &a); code == 200 {
			for _, id := range a.Txids[:min(a.UnconfirmedTxs, len(a.Txids))] {
				if id == txid {
					return
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.t.Fatalf("the index never listed %s as pending for %s\n%s", txid, addr, tail(p.logs.String(), 30))
}

// soakFlags raise the per-client limits for the soak's one client as an
// operator would for a known heavy client: its connections plus one, and
// requests in flight for every REST client with room for the heaviest
// request and for a release that trails its answer.
func soakFlags(restClients, wsClients int) []string {
	return []string{
		"-enablesubnewtx",
		"-wsmaxconnsperip=" + strconv.Itoa(wsClients+1),
		"-restmaxconcurrent=" + strconv.Itoa(restClients*4+16),
		"-restratelimit=10000000", "-restratewindow=1m", "-restburst=100000",
		"-wsmessageratelimit=1000000",
	}
}

func soakHeader() http.Header {
	return http.Header{"Origin": {trezorOrigin}, "X-Real-Ip": {soakClientIP}}
}

// Long: the campaign's script (set up, load, drain, verdicts, report)
// reads best in one piece.
func TestTortureSoak(t *testing.T) {
	restN := tortureSize(*soakRESTFlag, 20, 200)
	wsN := tortureSize(*soakWSFlag, 200, 2000)
	dur := tortureDuration(*soakDurFlag, 20*time.Second, 10*time.Minute)

	node := startNode(t)
	g := demoChain(t)
	submit(t, g, node, 1)
	cfg := writeConfig(t, node, nil)
	c := startChild(t, cfg, t.TempDir(), soakFlags(restN, wsN)...)
	h, hash := g.Tip()
	waitTip(t, c.base, h, hash.String(), c.logs)

	payees := make([]string, soakPayees)
	kinds := []chaingen.ScriptKind{chaingen.P2WPKH, chaingen.P2TR, chaingen.P2PKH, chaingen.P2SHP2WPKH}
	for i := range payees {
		payees[i] = mempoolAddr(t, g, kinds[i%len(kinds)], uint64(700+i))
	}
	change, err := g.Address(chaingen.P2WPKH, 2) // CreatePayment's change: a hot address with a long history
	if err != nil {
		t.Fatal(err)
	}
	oracle := newSoakOracle(g, append(append([]string{}, payees...), change))
	acct, err := chaingen.NewHDAccount(g.Params(), chaingen.HDSeed("soak"), 84, 0)
	if err != nil {
		t.Fatal(err)
	}
	load := &soakLoad{base: c.base, oracle: oracle, payees: payees, xpub: acct.Xpub(),
		http: soak.NewHTTPClient(restN), rest: &soak.Stats{}, ws: &soak.Stats{}}

	setup := time.Now()
	subs := load.connect(t, wsN)
	t.Logf("%d websocket clients connected and subscribed in %v", wsN, time.Since(setup).Round(time.Millisecond))

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	memCtx, memStop := context.WithCancel(context.Background())
	defer memStop()
	rss := soak.SampleRSS(memCtx, c.cmd.Process.Pid, min(max(dur/200, 100*time.Millisecond), 2*time.Second))
	var wg sync.WaitGroup
	for i := range restN {
		wg.Add(1)
		go func() { defer wg.Done(); load.restClient(ctx, i) }()
	}
	for i, s := range subs {
		wg.Add(1)
		go func() { defer wg.Done(); load.wsClient(ctx, i, s) }()
	}
	p := &soakProducer{t: t, g: g, node: node, base: c.base, logs: c.logs, oracle: oracle, payees: payees}
	began := time.Now()
	blocks := 0
	for time.Since(began) < dur {
		p.cycle(blocks)
		blocks++
		time.Sleep(500 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	elapsed := time.Since(began)
	memStop()

	delivered, expected := load.waitNotifications(t, subs)
	load.checkConnLimit(t, subs)
	for _, s := range subs {
		s.ws.Close()
	}

	flat, memErr := rss.Flat(0.2, 0.25, 16<<20)
	rs, ws := load.rest.Summary(), load.ws.Summary()
	requests := rs.Requests + ws.Requests
	tortureReport(t, "Soak", "%d REST + %d websocket clients for %v, %d blocks and %d mempool txs: %d requests "+
		"(%.0f/s; REST p50 %v p99 %v, websocket p50 %v p99 %v), notifications %d/%d, RSS start %d MiB peak %d MiB end %d MiB "+
		"(last third max %d MiB, bound %d MiB), errors %d, 429s %d, wrong answers %d",
		restN, wsN, elapsed.Round(time.Second), blocks, blocks*soakTxsPerBlock, requests,
		float64(requests)/elapsed.Seconds(), rs.P50.Round(time.Microsecond*100), rs.P99.Round(time.Microsecond*100),
		ws.P50.Round(time.Microsecond*100), ws.P99.Round(time.Microsecond*100), delivered, expected,
		flat.Start>>20, flat.Peak>>20, flat.End>>20, flat.LastMax>>20, flat.Bound>>20,
		rs.Errors+ws.Errors, rs.TooMany+ws.TooMany, rs.Wrong+ws.Wrong)
	if len(rs.FailuresByOp)+len(ws.FailuresByOp) > 0 {
		t.Logf("failures by operation: REST %v, websocket %v", rs.FailuresByOp, ws.FailuresByOp)
	}
	for _, e := range append(rs.Examples, ws.Examples...) {
		t.Error(e)
	}
	if rs.Errors+ws.Errors+rs.TooMany+ws.TooMany+rs.Wrong+ws.Wrong > 0 {
		t.Errorf("the soak saw errors, 429s or wrong answers (examples above)\nnode log:\n%s\nblockbook log:\n%s",
			node.LogTail(15), tail(c.logs.String(), 15))
	}
	if memErr != nil {
		t.Error(memErr)
	}
	if delivered != expected {
		t.Errorf("notifications delivered %d, expected %d", delivered, expected)
	}
	if rs.Requests < int64(restN) || ws.Requests < int64(wsN) {
		t.Errorf("too little load: %d REST and %d websocket requests", rs.Requests, ws.Requests)
	}
}
