package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/meshcheck"
)

// The Mesh (Rosetta) front of a real blockbook over real btcd and the demo
// chain (every script kind, OP_RETURNs, big txs), with the public port's
// default limits: check:data's reconciliation over HTTP (every answer
// validated against the Mesh specification with closed schemas), the
// balances at the tip against chaingen's ledger, Mesh errors for bad
// input, the per-client budget on the listener, a payment built, signed
// and submitted through the Construction API (meshConstruction), and the
// reconciliation again after a reorg of depth 3.
func TestE2EMesh(t *testing.T) {
	addr := make(chan string, 1)
	limits := withDefaultLimits(t)
	st := startDemoStackWith(t, nil, func(o *app.Options) {
		limits(o)
		o.Mesh.Addr = "127.0.0.1:0"
		captureListen(o, "mesh", addr)
	})
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case <-time.After(waitFor):
		t.Fatalf("the mesh listener did not start\n%s", st.inst.logs)
	}
	k, err := meshcheck.New()
	if err != nil {
		t.Fatal(err)
	}
	c := &meshcheck.Client{Checker: k, Network: map[string]any{"blockchain": "Regtest", "network": "regtest"},
		Post: func(path string, body any) (int, []byte, error) { return meshPost(base+path, "", body) }}

	meshReconcile(t, c, st.g)
	h := st.g.Height()

	// Bad input: Mesh errors with their codes, HTTP 500.
	for name, b := range map[string]struct {
		path string
		body map[string]any
		code int
	}{
		"unknown network":    {"/network/status", map[string]any{"network_identifier": map[string]any{"blockchain": "Bitcoin", "network": "mainnet"}}, 1},
		"unknown field":      {"/network/status", map[string]any{"nonsense": 1}, 2},
		"bad block hash":     {"/block", map[string]any{"block_identifier": map[string]any{"hash": "00"}}, 3},
		"past the tip":       {"/block", map[string]any{"block_identifier": map[string]any{"index": h + 1}}, 4},
		"balance past tip":   {"/account/balance", map[string]any{"account_identifier": map[string]any{"address": "script:51"}, "block_identifier": map[string]any{"index": h + 100}}, 4},
		"bad txid":           {"/block/transaction", map[string]any{"block_identifier": map[string]any{"index": 1, "hash": "00"}, "transaction_identifier": map[string]any{"hash": "x"}}, 3},
		"not a Regtest addr": {"/account/coins", map[string]any{"account_identifier": map[string]any{"address": "1BoatSLRHtKNngkdXEeobR76b53LETtpyT"}, "include_mempool": false}, 7},
	} {
		err := c.Call(b.path, b.body, nil)
		var ae *meshcheck.AnswerError
		if !errors.As(err, &ae) || ae.Code != b.code || ae.Status != http.StatusInternalServerError {
			t.Errorf("%s: %v, want Mesh error %d", name, err, b.code)
		}
	}
	if code, body, err := meshPost(base+"/block", "", []byte(`{"network_identifier":`)); err != nil || code != 500 || !strings.Contains(string(body), `"code":2`) {
		t.Errorf("a truncated body: %d %s %v", code, body, err)
	}

	// The public port's budget: one client's burst of heavy requests gets
	// 429s, another client is still served.
	heavy := map[string]any{"network_identifier": c.Network, "block_identifier": map[string]any{"index": h}}
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, _, err := meshPost(base+"/block", "203.0.113.80", heavy)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				codes[-1]++
				return
			}
			codes[code]++
		}()
	}
	wg.Wait()
	if codes[200] == 0 || codes[http.StatusTooManyRequests] == 0 || codes[200]+codes[http.StatusTooManyRequests] != 40 {
		t.Errorf("40 concurrent /block requests from one client: %v", codes)
	}
	if code, _, err := meshPost(base+"/network/status", "203.0.113.81", map[string]any{"network_identifier": c.Network}); err != nil || code != 200 {
		t.Errorf("another client: %d %v", code, err)
	}
	meshConstruction(t, st, c)

	// A reorg of depth 3 (the construction's blocks leave the chain):
	// /block answers the branch's blocks, and the walk reconciles again.
	fork := st.g.Height() - 3
	var before struct {
		Block struct {
			BlockIdentifier meshcheck.BlockID `json:"block_identifier"`
		} `json:"block"`
	}
	if err := c.Call("/block", map[string]any{"block_identifier": map[string]any{"index": fork + 1}}, &before); err != nil {
		t.Fatal(err)
	}
	branch := competingBranch(t, st.g, st.node, fork, 1, "mesh-reorg")
	bh, bhash := branch.Tip()
	waitTip(t, st.inst.base, bh, bhash.String(), st.inst.logs)
	after := before
	if err := c.Call("/block", map[string]any{"block_identifier": map[string]any{"index": fork + 1}}, &after); err != nil {
		t.Fatal(err)
	}
	if after.Block.BlockIdentifier.Hash == before.Block.BlockIdentifier.Hash || after.Block.BlockIdentifier.Hash != branch.Blocks()[fork+1].BlockHash().String() {
		t.Errorf("block %d after the reorg: %v (before %v)", fork+1, after.Block.BlockIdentifier, before.Block.BlockIdentifier)
	}
	meshReconcile(t, c, branch)
	meshEvents(t, c, branch, before.Block.BlockIdentifier)
	if t.Failed() {
		t.Log(tail(st.inst.logs.String(), 30))
	}
}

// meshEvents follows /events/blocks from the start (meshcheck checks the
// sequence and the order) and sees it report the reorg: orphan removed,
// the chain it leaves g's.
func meshEvents(t *testing.T, c *meshcheck.Client, g *chaingen.Generator, orphan meshcheck.BlockID) {
	t.Helper()
	start := time.Now()
	evs, chain, err := c.Events(1000)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("followed %d block events in %v", len(evs), time.Since(start))
	blocks := g.Blocks()
	if len(chain) != len(blocks) {
		t.Fatalf("the events leave %d blocks, the chain has %d", len(chain), len(blocks))
	}
	for h, id := range chain {
		if id.Hash != blocks[h].BlockHash().String() {
			t.Errorf("the events leave %v at %d, the chain has %s", id, h, blocks[h].BlockHash())
		}
	}
	if !slices.ContainsFunc(evs, func(e meshcheck.BlockEvent) bool { return e.Type == "block_removed" && e.BlockIdentifier == orphan }) {
		t.Errorf("no event removes %v", orphan)
	}
}

// meshReconcile walks the chain as check:data does and compares the tip's
// balances with chaingen's ledger of g's chain.
func meshReconcile(t *testing.T, c *meshcheck.Client, g *chaingen.Generator) {
	t.Helper()
	r := meshCheckData(t, c)
	if h := g.Height(); r.Blocks != int(h)+1 {
		t.Errorf("walked %d blocks, the chain has %d", r.Blocks, h+1)
	}
	for addr, a := range g.Ledger().Addresses {
		if r.Balances[addr] != a.Balance {
			t.Errorf("%s: operations sum to %d, chaingen's ledger has %d", addr, r.Balances[addr], a.Balance)
		}
	}
}

// meshCheckData runs check:data (meshcheck.Reconcile), fails the test on
// each mismatch and logs what it walked.
func meshCheckData(t *testing.T, c *meshcheck.Client) *meshcheck.Report {
	t.Helper()
	start := time.Now()
	r, err := c.Reconcile(map[string]bool{"unspendable": true})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range r.Mismatches {
		t.Error(m)
	}
	t.Logf("reconciled %d blocks, %d txs, %d operations, %d accounts with %d balance checks in %v",
		r.Blocks, r.Txs, r.Operations, len(r.Balances), r.BalanceChecks, time.Since(start).Round(time.Millisecond))
	return r
}

// meshPost posts a JSON body (a []byte as it is), naming the client in X-Real-Ip when given
// (the test is a local proxy in front of blockbook).
func meshPost(url, client string, body any) (int, []byte, error) {
	b, ok := body.([]byte) // sent as it is (malformed bodies)
	if !ok {
		var err error
		if b, err = json.Marshal(body); err != nil {
			return 0, nil, err
		}
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if client != "" {
		req.Header.Set("X-Real-Ip", client)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	return resp.StatusCode, answer, err
}
