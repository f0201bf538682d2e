package btc

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"

	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
)

// startChain runs btcd on host with a chain of blocks empty blocks made
// with salt.
func startChain(t *testing.T, o regtest.Options, salt string, blocks int) *regtest.Node {
	t.Helper()
	ctx := context.Background()
	o.Dir = t.TempDir()
	node, err := regtest.Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = node.Stop() })
	g := chaingen.New(&chaincfg.RegressionNetParams, salt)
	for i := 0; i < blocks; i++ {
		if _, err := g.AddBlock(); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Submit(ctx, node, 1); err != nil {
		t.Fatal(err)
	}
	return node
}

// fetchTip downloads the node's tip block through the backend and returns
// the backend's log.
func fetchTip(t *testing.T, node *regtest.Node, p2pAddress string) (*Node, string) {
	t.Helper()
	ctx := context.Background()
	var logs strings.Builder
	n := p2pBackend(t, node, p2pAddress, &logs)
	h, hash, err := n.BestBlock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // the second download uses the decision
		if blk, err := n.Block(ctx, hash, h); err != nil || blk.Hash != hash {
			t.Fatalf("Block(%d): %v", h, err)
		}
	}
	return n, logs.String()
}

// Without p2p_address, the default P2P port on a local RPC host is used
// when the peer there is the RPC node (same tip height, serves the tip
// block), and RPC otherwise, with the reason logged once.
func TestAutoP2P(t *testing.T) {
	host := regtest.RandomLoopback()
	self := startChain(t, regtest.Options{Host: host, Listen: true, DefaultP2PPort: true}, "auto", 5)

	n, logs := fetchTip(t, self, "")
	if n.auto == nil || n.auto.state.Load().p2p == nil || !strings.Contains(logs, "auto-detected") {
		t.Fatalf("P2P not auto-detected on %s:18444:\n%s", host, logs)
	}

	cases := []struct {
		name   string
		node   *regtest.Node
		reason string
	}{
		// Another node on the host's default port, at another height.
		{"height differs", startChain(t, regtest.Options{Host: host}, "auto", 3), "is not the RPC tip's 3"},
		// At the same height, but on another chain: its tip is unknown there.
		{"tip not served", startChain(t, regtest.Options{Host: host}, "other", 5), "does not serve the RPC tip"},
		// Nothing listens on the default port (the node's is elsewhere).
		{"port closed", startChain(t, regtest.Options{Host: regtest.RandomLoopback(), Listen: true}, "auto", 2), "p2p dial"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, logs := fetchTip(t, c.node, "")
			if n.auto == nil || n.auto.state.Load().p2p != nil {
				t.Fatalf("P2P used:\n%s", logs)
			}
			if strings.Count(logs, "downloaded over RPC") != 1 || !strings.Contains(logs, c.reason) {
				t.Fatalf("want the reason %q logged once:\n%s", c.reason, logs)
			}
		})
	}

	t.Run("opt-out", func(t *testing.T) {
		n, logs := fetchTip(t, self, P2POff)
		if n.auto != nil || n.p2p != nil || strings.Contains(logs, "P2P") {
			t.Fatalf("p2p_address %q still tried P2P:\n%s", P2POff, logs)
		}
	})
}

// A failed check is not final: a node whose P2P port opens later (here: a
// node with the same chain starts on the default port, as a node still
// starting would) is used once the backoff has passed, and a download
// never waits for a check in progress.
func TestAutoP2PRetries(t *testing.T) {
	ctx := context.Background()
	host := regtest.RandomLoopback()
	rpcNode := startChain(t, regtest.Options{Host: host}, "retry", 5)
	var logs strings.Builder
	n := p2pBackend(t, rpcNode, "", &logs)
	var skew atomic.Int64
	n.auto.now = func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	download := func() {
		t.Helper()
		h, hash, err := n.BestBlock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if blk, err := n.Block(ctx, hash, h); err != nil || blk.Hash != hash {
			t.Fatalf("Block(%d): %v", h, err)
		}
	}
	want := func(fails int, p2p bool) {
		t.Helper()
		s := n.auto.state.Load()
		if s.fails != fails || (s.p2p != nil) != p2p || s.final {
			t.Fatalf("after the downloads: %d failed checks, P2P %v, final %v; want %d, %v:\n%s", s.fails, s.p2p != nil, s.final, fails, p2p, logs.String())
		}
	}
	download()
	download() // within the backoff: no second check
	want(1, false)
	if !strings.Contains(logs.String(), "p2p dial") || !strings.Contains(logs.String(), "retried in 15s") {
		t.Fatalf("want the dial failure and the retry logged:\n%s", logs.String())
	}
	skew.Store(int64(autoRetryFirst))
	download() // the port is still closed
	want(2, false)

	startChain(t, regtest.Options{Host: host, Listen: true, DefaultP2PPort: true}, "retry", 5)
	download() // the backoff doubled: not checked yet
	want(2, false)

	// A download while another caller checks goes over RPC at once.
	skew.Store(int64(autoRetryFirst + 2*autoRetryFirst))
	n.auto.mu.Lock()
	done := make(chan *p2pBlocks)
	go func() { done <- n.auto.blocks(ctx, n) }()
	select {
	case p := <-done:
		if p != nil {
			t.Fatal("P2P used before it was verified")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a download waited for the check in progress")
	}
	n.auto.mu.Unlock()

	download()
	want(0, true) // a verified state starts afresh
	if strings.Count(logs.String(), "downloaded over RPC") != 1 || !strings.Contains(logs.String(), "auto-detected") {
		t.Fatalf("want one RPC reason, then the P2P port detected:\n%s", logs.String())
	}
}

func TestLocalHost(t *testing.T) {
	ctx := context.Background()
	for host, local := range map[string]bool{
		"127.0.0.1": true, "::1": true, "10.1.2.3": true, "192.168.0.7": true, "172.16.0.1": true, "fd00::1": true,
		"localhost": true, "8.8.8.8": false, "2001:db8::1": false, "172.32.0.1": false,
	} {
		if err := localHost(ctx, host); (err == nil) != local {
			t.Errorf("localHost(%q) = %v, want local %v", host, err, local)
		}
	}
}
