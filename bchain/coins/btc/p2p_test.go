package btc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/v2"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
)

func p2pBackend(t *testing.T, node *regtest.Node, p2pAddr string, logs *strings.Builder) *Node {
	t.Helper()
	cfg, err := bchain.ParseConfig([]byte(fmt.Sprintf(`{"coin_name":"Regtest","rpc_url":%q,"rpc_user":%q,"rpc_pass":%q,"p2p_address":%q}`,
		node.RPCURL, node.RPCUser, node.RPCPass, p2pAddr)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := bchain.NewBackend(cfg, bchain.Env{Log: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if b.Close != nil {
			_ = b.Close()
		}
	})
	return b.Chain.(*Node)
}

// Blocks downloaded from btcd's P2P port are exactly the blocks its RPC
// serves, for the whole demo chain (every script type, witness data).
func TestP2PBlocksMatchRPC(t *testing.T) {
	ctx := context.Background()
	node, err := regtest.Start(ctx, regtest.Options{Dir: t.TempDir(), Listen: true})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Stop()
	g := chaingen.New(&chaincfg.RegressionNetParams, "p2p")
	if err := g.Demo(chaingen.DefaultDemo()); err != nil {
		t.Fatal(err)
	}
	if err := g.Submit(ctx, node, 1); err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	n := p2pBackend(t, node, node.P2PAddr, &logs)
	tip, _ := g.Tip()
	for h := uint32(0); h <= uint32(tip); h++ {
		hash, err := n.BlockHash(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		p2p, err := n.p2p.rawBlock(ctx, hash)
		if err != nil {
			t.Fatalf("block %d over P2P: %v", h, err)
		}
		rpc, err := n.RawBlock(ctx, hash)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(p2p, rpc) {
			t.Fatalf("block %d differs between P2P and RPC", h)
		}
		blk, err := n.Block(ctx, hash, h)
		if err != nil || blk.Hash != hash {
			t.Fatalf("Block(%d): %v", h, err)
		}
	}
	if _, err := n.p2p.rawBlock(ctx, bchain.Hash{1, 2, 3}); !errors.Is(err, bchain.ErrBlockNotFound) {
		t.Fatalf("unknown block over P2P: %v", err)
	}
	if strings.Contains(logs.String(), "falling back") {
		t.Fatalf("unexpected fallback:\n%s", logs.String())
	}
}

// Without a reachable peer, blocks still come over RPC, and the fallback is
// logged once.
func TestP2PFallsBackToRPC(t *testing.T) {
	ctx := context.Background()
	node, err := regtest.Start(ctx, regtest.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Stop()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	var logs strings.Builder
	n := p2pBackend(t, node, closed, &logs)
	for i := 0; i < 3; i++ {
		hash, err := n.BlockHash(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := n.Block(ctx, hash, 0); err != nil {
			t.Fatalf("Block over the RPC fallback: %v", err)
		}
	}
	if c := strings.Count(logs.String(), "falling back to RPC"); c != 1 {
		t.Fatalf("fallback logged %d times:\n%s", c, logs.String())
	}
}
