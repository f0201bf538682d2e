package eth

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/bchain"
)

// A node of another chain id is refused in words, and BestBlock (the
// sync's first question) refuses too, so that a node unreachable at start
// and on the wrong chain later is never indexed.
func TestChainIDMismatch(t *testing.T) {
	f := newFakeNode(t)
	f.answer("eth_chainId", "0x539")
	f.answer("eth_getBlockByNumber", map[string]any{"hash": "0x" + strings.Repeat("11", 32), "number": "0x5", "difficulty": "0x0"})
	n := newTestNode(t, "Polygon", f.srv.URL, nil)
	_, err := n.ChainID(context.Background())
	want := "chain id mismatch: the node is on chain id 1337, Polygon is chain id 137"
	if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, ErrChainID) || !errors.Is(err, bchain.ErrConfig) {
		t.Fatalf("ChainID: %v, want %q", err, want)
	}
	if _, _, err := n.BestBlock(context.Background()); !errors.Is(err, ErrChainID) {
		t.Fatalf("BestBlock on the wrong chain: %v", err)
	}
	if f.count("eth_getBlockByNumber") != 0 {
		t.Error("a block was asked for before the chain id was checked")
	}
	f.answer("eth_chainId", "0x89")
	if h, _, err := n.BestBlock(context.Background()); err != nil || h != 5 {
		t.Fatalf("BestBlock on chain 137: %d %v", h, err)
	}
}

// status' chain is "mainnet" on the coin's own network (Blockbook's rule:
// Polygon on 137, Ethereum Classic on 61), "testnet <id>" on testnets.
func TestChainInfoNetworkName(t *testing.T) {
	for _, c := range []struct {
		coin, id, want string
	}{
		{"Polygon", "0x89", "mainnet"}, {"Ethereum Classic", "0x3d", "mainnet"}, {"Ethereum", "0x1", "mainnet"},
		{"Ethereum Testnet Hoodi", "0x88bb0", "testnet 560048"}, {"Ethereum Regtest", "0x539", "testnet 1337"},
	} {
		f := newFakeNode(t)
		f.answer("eth_chainId", c.id)
		f.answer("eth_getBlockByNumber", map[string]any{"hash": "0x" + strings.Repeat("11", 32), "number": "0x5", "difficulty": "0x0"})
		ci, err := newTestNode(t, c.coin, f.srv.URL, nil).ChainInfo(context.Background())
		if err != nil || ci.Chain != c.want {
			t.Errorf("%s: chain %v %v, want %q", c.coin, ci, err, c.want)
		}
	}
}

// consensusNodeVersion: the consensus client's /eth/v1/node/version answer
// is the status' consensus_version; an unreachable one reads as Blockbook's
// "unreachable-locally".
func TestConsensusNodeVersion(t *testing.T) {
	var asked atomic.Int32
	beacon := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		if r.URL.Path != "/eth/v1/node/version" {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"data": map[string]string{"version": "Lighthouse/v7.0.1-e42406d/x86_64-linux"}})
	}))
	defer beacon.Close()
	f := newFakeNode(t)
	f.answer("eth_chainId", "0x88bb0")
	f.answer("eth_getBlockByNumber", map[string]any{"hash": "0x" + strings.Repeat("11", 32), "number": "0x5", "difficulty": "0x0"})
	n := newTestNode(t, "Ethereum Testnet Hoodi", f.srv.URL, map[string]any{"consensusNodeVersion": beacon.URL + "/eth/v1/node/version"})
	for range 2 {
		ci, err := n.ChainInfo(context.Background())
		if err != nil || ci.ConsensusVersion != "Lighthouse/v7.0.1-e42406d/x86_64-linux" {
			t.Fatalf("consensus version %v %v", ci, err)
		}
	}
	if asked.Load() != 1 {
		t.Errorf("the consensus client was asked %d times within a minute, want once", asked.Load())
	}
	down := newTestNode(t, "Ethereum Testnet Hoodi", f.srv.URL, map[string]any{"consensusNodeVersion": "http://127.0.0.1:1/eth/v1/node/version"})
	if ci, err := down.ChainInfo(context.Background()); err != nil || ci.ConsensusVersion != consensusUnreachable {
		t.Fatalf("unreachable consensus client: %v %v", ci, err)
	}
}

// missingBlockRetry: a block the node does not have yet is asked for again
// until it comes, within the attempts; without the key it is not retried.
func TestMissingBlockRetry(t *testing.T) {
	f := newFakeNode(t)
	f.answer("eth_chainId", "0x539")
	f.answer("eth_getBlockByHash", nil) // not there yet
	n := newTestNode(t, "Ethereum Regtest", f.srv.URL, nil)
	c := withMissingBlockRetry(n, &bchain.MissingBlockRetry{RetryDelayMs: 10, RecheckThreshold: 4, MaxStallMs: 60000})
	start := time.Now()
	if _, err := c.Block(context.Background(), bchain.Hash{1}, 7); !errors.Is(err, bchain.ErrBlockNotFound) {
		t.Fatalf("Block of a missing block: %v", err)
	}
	if got := f.count("eth_getBlockByHash"); got != 4 {
		t.Errorf("asked %d times, want the 4 attempts of recheckThreshold", got)
	}
	if time.Since(start) < 30*time.Millisecond {
		t.Error("no delay between the attempts")
	}
	if withMissingBlockRetry(n, nil) != bchain.BlockChain(n) {
		t.Error("without missingBlockRetry the node is wrapped")
	}
}

// trace_timeout goes to the node as the tracer's own timeout.
func TestTraceTimeoutConfig(t *testing.T) {
	f := newFakeNode(t)
	n := newTestNode(t, "Polygon Archive", f.srv.URL, map[string]any{"trace_timeout": "10s"})
	if c := n.traceConfig(); c["timeout"] != "10s" || c["tracer"] != "callTracer" {
		t.Errorf("trace config %v", c)
	}
	if c := newTestNode(t, "Polygon Archive", f.srv.URL, nil).traceConfig(); c["timeout"] != nil {
		t.Errorf("trace config without trace_timeout %v", c)
	}
}

// disableMempoolSync leaves the backend without the pending-tx
// subscription (the mempool still resyncs).
func TestDisableMempoolSync(t *testing.T) {
	for _, off := range []bool{false, true} {
		raw, _ := json.Marshal(map[string]any{"coin_name": "Optimism", "rpc_url": "ws://127.0.0.1:1", "disableMempoolSync": off})
		cfg, err := bchain.ParseConfig(raw)
		if err != nil {
			t.Fatal(err)
		}
		b, err := NewBackend("Optimism", cfg, bchain.Env{Log: discardLog()})
		if err != nil {
			t.Fatal(err)
		}
		if (b.TxNotifier == nil) != off || b.Mempool == nil || b.Params.EthKind != bchain.EthKindOPStack {
			t.Errorf("disableMempoolSync %v: tx notifier %v, mempool %v, kind %v", off, b.TxNotifier, b.Mempool, b.Params.EthKind)
		}
		_ = b.Close()
	}
}
