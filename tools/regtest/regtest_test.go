package regtest_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"net"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/wire/v2"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
)

var params = &chaincfg.RegressionNetParams

func start(t *testing.T, o regtest.Options) *regtest.Node {
	t.Helper()
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, err := regtest.Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Stop(); err != nil {
			t.Error(err)
		}
	})
	return n
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// coinbaseChain returns a generator with n coinbase-only blocks.
func coinbaseChain(t *testing.T, seed string, n int, opts ...chaingen.Option) *chaingen.Generator {
	t.Helper()
	g := chaingen.New(params, seed, opts...)
	if err := g.Extend(n, 0); err != nil {
		t.Fatal(err)
	}
	return g
}

func assertTip(t *testing.T, n *regtest.Node, height int32, hash string) {
	t.Helper()
	h, got, err := n.BestBlock(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if h != height || got != hash {
		t.Fatalf("node tip %d %s, want %d %s", h, got, height, hash)
	}
}

func TestBtcdPathIsCached(t *testing.T) {
	p1, err := regtest.BtcdPath()
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := regtest.BtcdPath()
	if p1 != p2 {
		t.Fatalf("BtcdPath changed: %s vs %s", p1, p2)
	}
	st, err := os.Stat(p1)
	if err != nil || st.Mode()&0o111 == 0 {
		t.Fatalf("btcd binary %s not executable: %v", p1, err)
	}
}

func TestSubmitRestartKill(t *testing.T) {
	n := start(t, regtest.Options{})
	assertTip(t, n, 0, params.GenesisHash.String())

	g := coinbaseChain(t, "regtest-lifecycle", 5)
	blocks := g.Blocks()
	if err := n.SubmitBlock(ctx(t), blocks[1]); err != nil {
		t.Fatal(err)
	}
	// A duplicate is refused with btcd's "rejected: ..." result string.
	if err := n.SubmitBlock(ctx(t), blocks[1]); err == nil || !strings.Contains(err.Error(), "rejected") {
		t.Fatalf("duplicate block: got %v, want rejection", err)
	}
	// btcd answers null for orphans; SubmitBlock must still report them.
	// (The orphan comes from another chain: btcd would connect an orphan of
	// ours as soon as its parent arrived.)
	other := coinbaseChain(t, "regtest-other", 2).Blocks()[2]
	if err := n.SubmitBlock(ctx(t), other); err == nil || !strings.Contains(err.Error(), "orphan") {
		t.Fatalf("orphan block: got %v, want an orphan error", err)
	}
	bad := *blocks[2]
	bad.Header.MerkleRoot[0] ^= 1 // fails the merkle (or PoW) check
	if err := n.SubmitBlock(ctx(t), &bad); err == nil {
		t.Fatal("block with bad merkle root accepted")
	}
	if err := g.Submit(ctx(t), n, 2); err != nil {
		t.Fatal(err)
	}
	h, hash := g.Tip()
	if err := n.WaitForHeight(ctx(t), h); err != nil {
		t.Fatal(err)
	}
	assertTip(t, n, h, hash.String())

	if err := n.Restart(ctx(t)); err != nil {
		t.Fatal(err)
	}
	assertTip(t, n, h, hash.String())

	n.Kill()
	if _, err := n.Call(ctx(t), "getblockcount"); err == nil {
		t.Fatal("killed node still answers")
	}
	// btcd must recover from the unclean shutdown; blocks it had not yet
	// flushed may be gone, so only require a prefix of our chain.
	if err := n.Restart(ctx(t)); err != nil {
		t.Fatal(err)
	}
	rh, rhash, err := n.BestBlock(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if rh > h || rhash != blocks[rh].BlockHash().String() {
		t.Fatalf("after kill: tip %d %s is not on our chain", rh, rhash)
	}
	if err := g.Submit(ctx(t), n, rh+1); err != nil {
		t.Fatal(err)
	}
	assertTip(t, n, h, hash.String())
}

func TestInvalidateReconsider(t *testing.T) {
	n := start(t, regtest.Options{})
	g := coinbaseChain(t, "regtest-invalidate", 3)
	if err := g.Submit(ctx(t), n, 1); err != nil {
		t.Fatal(err)
	}
	blocks := g.Blocks()
	top := blocks[3].BlockHash().String()
	if err := n.InvalidateBlock(ctx(t), top); err != nil {
		t.Fatal(err)
	}
	assertTip(t, n, 2, blocks[2].BlockHash().String())
	if err := n.ReconsiderBlock(ctx(t), top); err != nil {
		t.Fatal(err)
	}
	assertTip(t, n, 3, top)
	if err := n.InvalidateBlock(ctx(t), strings.Repeat("0", 64)); err == nil {
		t.Fatal("invalidating an unknown block succeeded")
	}
}

func TestConnectSyncsPeers(t *testing.T) {
	a := start(t, regtest.Options{Listen: true, TxIndex: true})
	b := start(t, regtest.Options{})
	// btcd only serves headers while its tip is less than 24h old, so this
	// chain is stamped near the present instead of chaingen's fixed times.
	recent := time.Now().Add(-time.Hour).Truncate(time.Second)
	g := coinbaseChain(t, "regtest-p2p", 4, chaingen.WithTimestamps(recent, time.Second))
	if err := g.Submit(ctx(t), a, 1); err != nil {
		t.Fatal(err)
	}
	if err := b.Connect(ctx(t), a); err != nil {
		t.Fatal(err)
	}
	h, hash := g.Tip()
	if err := b.WaitForHeight(ctx(t), h); err != nil {
		t.Fatal(err)
	}
	assertTip(t, b, h, hash.String())

	// A block submitted to one node propagates to the other.
	blk, err := g.AddBlock()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.SubmitBlock(ctx(t), blk); err != nil {
		t.Fatal(err)
	}
	if err := b.WaitForHeight(ctx(t), h+1); err != nil {
		t.Fatal(err)
	}
	assertTip(t, b, h+1, blk.BlockHash().String())

	// With --txindex, confirmed txs are served by getrawtransaction.
	var raw string
	if err := a.CallResult(ctx(t), &raw, "getrawtransaction", blk.Transactions[0].TxHash().String(), 0); err != nil {
		t.Fatal(err)
	}
	data, err := hex.DecodeString(raw)
	if err != nil {
		t.Fatal(err)
	}
	var tx wire.MsgTx
	if err := tx.Deserialize(bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	if tx.TxHash() != blk.Transactions[0].TxHash() {
		t.Fatal("getrawtransaction returned a different tx")
	}
}

func TestStartFailureShowsLog(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := regtest.Start(ctx, regtest.Options{Dir: t.TempDir(), ExtraArgs: []string{"--no-such-flag"}})
	if err == nil || !strings.Contains(err.Error(), "no-such-flag") {
		t.Fatalf("got %v, want an error quoting btcd's complaint", err)
	}
}

// A node on Options.Host is reached through an RPC forwarder on that
// host; Stop closes it (nothing listens there after), and a restart
// opens it again.
func TestHostForwarderClosedOnStop(t *testing.T) {
	n := start(t, regtest.Options{Host: regtest.RandomLoopback()})
	u, err := url.Parse(n.RPCURL)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Call(ctx(t), "getblockcount"); err != nil {
		t.Fatalf("RPC through the forwarder on %s: %v", u.Host, err)
	}
	if err := n.Stop(); err != nil {
		t.Fatal(err)
	}
	if c, err := net.DialTimeout("tcp", u.Host, 2*time.Second); err == nil {
		c.Close()
		t.Fatalf("the forwarder on %s still accepts after Stop", u.Host)
	}
	if err := n.Restart(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Call(ctx(t), "getblockcount"); err != nil {
		t.Fatalf("RPC through the forwarder after a restart: %v", err)
	}
}
