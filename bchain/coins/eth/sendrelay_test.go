package eth

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/internal/promreg"
	"github.com/openexplorer/blockbook/tools/gethdev"
)

// startRelayPair starts two unpeered dev nodes on the same genesis: the
// public one and a relay. The relay seals; the public node learns each of
// its blocks only when importBlocks hands them over, so a tx sent to the
// relay stays unknown to the public node until it is mined.
func startRelayPair(t *testing.T) (pub, rel *gethdev.Node) {
	t.Helper()
	if testing.Short() {
		t.Skip("dev node tests skipped in -short mode")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var err error
	if pub, err = gethdev.Start(ctx, gethdev.Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pub.Stop)
	if rel, err = gethdev.Start(ctx, gethdev.Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rel.Stop)
	// gethdev's first sealed block is empty whatever the pool holds.
	if _, err := rel.Commit(); err != nil {
		t.Fatal(err)
	}
	importBlocks(t, rel, pub)
	return pub, rel
}

// importBlocks hands to the blocks from sealed.
func importBlocks(t *testing.T, from, to *gethdev.Node) {
	t.Helper()
	if err := to.ImportBlocks(from); err != nil {
		t.Fatal(err)
	}
}

// signedPayment is a payment from the dev account of node.
func signedPayment(t *testing.T, node *gethdev.Node, nonce uint64, gasPrice int64) []byte {
	t.Helper()
	rcpt := common.HexToAddress(to)
	tx, err := types.SignNewTx(node.DevKey, types.LatestSignerForChainID(node.ChainID),
		&types.LegacyTx{Nonce: nonce, GasPrice: big.NewInt(gasPrice), Gas: 21000, To: &rcpt, Value: big.NewInt(7)})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := tx.MarshalBinary()
	return raw
}

// TestRelaySendsPrivately sends through a second geth as the relay: the
// public node does not see the tx until the relay mines it and the block
// is imported, while the relay's cache shows it pending and the sender's
// nonce is answered by the relay.
func TestRelaySendsPrivately(t *testing.T) {
	pub, rel := startRelayPair(t)
	ctx := context.Background()
	b, n := devBackend(t, pub, pub.HTTPURL, nil)
	reg := prometheus.NewRegistry()
	relay := NewRelay(RelayConfig{URLs: []string{rel.HTTPURL}, Only: true, FetchMempoolTx: true,
		CacheTimeout: time.Minute, CheckPeriod: time.Nanosecond, Log: discardLog(), Metrics: reg})
	send := RelayBroadcast{Next: n, Relay: relay}
	accounts := RelayEth{EthereumChain: n, Relay: relay}
	pool := RelayMempool{Next: struct {
		bchain.MempoolSource
		bchain.EthereumChain
	}{b.Mempool, n}, Relay: relay}
	dev := bchain.AddrDesc(pub.DevAddr.Bytes())

	h, err := send.SendRawTx(ctx, signedPayment(t, pub, 0, 2e9))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Tx(ctx, h); !errors.Is(err, bchain.ErrTxNotFound) {
		t.Fatalf("public node knows the private tx: %v", err)
	}
	ids, err := pool.MempoolTxids(ctx)
	if err != nil || len(ids) != 1 || ids[0] != h {
		t.Fatalf("pending ids %v %v, want the sent tx", ids, err)
	}
	if c, a := metricValue(relay.m.cached), metricValue(relay.m.added); c != 1 || a != 1 {
		t.Fatalf("cache metrics after the send: cached %v, added %v", c, a)
	}
	if tx, err := pool.Tx(ctx, h); err != nil || common.Address(tx.From) != pub.DevAddr || tx.Nonce != 0 {
		t.Fatalf("pending tx %+v %v", tx, err)
	}
	if v, _ := n.Nonce(ctx, dev, bchain.EthPending); v != 0 {
		t.Fatalf("public pending nonce %d, want 0", v)
	}
	if v, err := accounts.Nonce(ctx, dev, bchain.EthPending); err != nil || v != 1 {
		t.Fatalf("routed pending nonce %d %v, want 1 from the relay", v, err)
	}
	payee := bchain.AddrDesc(common.HexToAddress(to).Bytes())
	if gas, err := accounts.EstimateGas(ctx, bchain.EthCall{From: dev, To: payee}); err != nil || gas != 21000 {
		t.Fatalf("estimate from the relay: %d %v", gas, err)
	}
	if _, routed := relay.routesNonce(pub.Coinbase); routed {
		t.Fatal("an address that sent nothing is routed to the relay")
	}

	// A refused replacement: the relay's reason reaches the caller, and
	// only-mode does not fall back to the public node.
	_, err = send.SendRawTx(ctx, signedPayment(t, pub, 0, 1e9))
	var re *bchain.RPCError
	if !errors.As(err, &re) || !strings.Contains(re.Message, "underpriced") {
		t.Fatalf("replacement error %v, want the relay's underpriced refusal", err)
	}

	// Still pending on the relay: reconciling keeps it.
	relay.Reconcile(ctx)
	if _, ok := relay.CachedTx(h); !ok {
		t.Fatal("reconcile dropped a tx still pending on the relay")
	}
	if _, err := rel.Commit(); err != nil {
		t.Fatal(err)
	}
	relay.Reconcile(ctx)
	if _, ok := relay.CachedTx(h); ok {
		t.Fatal("a mined tx stays cached")
	}
	if c, m := metricValue(relay.m.cached), metricValue(relay.m.removed.WithLabelValues(relayGoneMined)); c != 0 || m != 1 {
		t.Fatalf("cache metrics after mining: cached %v, removed mined %v", c, m)
	}
	if _, routed := relay.routesNonce(pub.DevAddr); routed {
		t.Fatal("the sender stays routed after its last tx was mined")
	}
	importBlocks(t, rel, pub)
	tx, err := n.Tx(ctx, h)
	if err != nil || tx.BlockHeight != 2 {
		t.Fatalf("public node after the import: %+v %v", tx, err)
	}
	if v, _ := accounts.Nonce(ctx, dev, bchain.EthPending); v != 1 {
		t.Fatalf("pending nonce after mining %d, want 1", v)
	}
}

// TestRelayErrorsAndFallback: an unreachable provider is named by number,
// never by URL (it may hold a key); without only-mode the node gets the tx;
// a direct send skips the relay.
func TestRelayErrorsAndFallback(t *testing.T) {
	pub, _ := startRelayPair(t)
	ctx := context.Background()
	_, n := devBackend(t, pub, pub.HTTPURL, nil)
	secret := "http://user:s3cretkey@127.0.0.1:1/v1/s3cretkey"
	only := RelayBroadcast{Next: n, Relay: NewRelay(RelayConfig{URLs: []string{secret}, Only: true, RPCTimeout: 2 * time.Second, Log: discardLog()})}
	raw := signedPayment(t, pub, 0, 2e9)
	_, err := only.SendRawTx(ctx, raw)
	if err == nil || strings.Contains(err.Error(), "s3cretkey") || !errors.Is(err, bchain.ErrNodeUnavailable) {
		t.Fatalf("only-mode error %v: want node unavailable without the URL", err)
	}
	if _, err := n.Tx(ctx, bchain.Hash(crypto.Keccak256Hash(raw))); !errors.Is(err, bchain.ErrTxNotFound) {
		t.Fatalf("only-mode fell back to the node: %v", err)
	}
	h, err := only.SendRawTx(bchain.WithDirectSend(ctx), raw)
	if err != nil {
		t.Fatalf("direct send: %v", err)
	}
	if _, err := n.Tx(ctx, h); err != nil {
		t.Fatalf("direct send did not reach the node: %v", err)
	}
	// Gas estimates fall back to the node when the provider fails.
	gone := RelayEth{EthereumChain: n, Relay: only.Relay}
	payee := bchain.AddrDesc(common.HexToAddress(to).Bytes())
	if gas, err := gone.EstimateGas(ctx, bchain.EthCall{From: bchain.AddrDesc(pub.DevAddr.Bytes()), To: payee}); err != nil || gas != 21000 {
		t.Fatalf("estimate with the provider down: %d %v", gas, err)
	}
	fallback := RelayBroadcast{Next: n, Relay: NewRelay(RelayConfig{URLs: []string{secret}, RPCTimeout: 2 * time.Second, Log: discardLog()})}
	h2, err := fallback.SendRawTx(ctx, signedPayment(t, pub, 1, 2e9))
	if err != nil {
		t.Fatalf("fallback send: %v", err)
	}
	if _, err := n.Tx(ctx, h2); err != nil {
		t.Fatalf("fallback did not reach the node: %v", err)
	}
}

// TestRelayCacheTimeout: a cached tx the providers no longer show stays
// until alternativeMempoolTxTimeout, then leaves with its sender's routing.
func TestRelayCacheTimeout(t *testing.T) {
	r := NewRelay(RelayConfig{URLs: []string{"http://127.0.0.1:1"}, CacheTimeout: time.Minute, CheckPeriod: time.Second,
		Log: discardLog(), Metrics: prometheus.NewRegistry()})
	now := time.Unix(1_000_000, 0)
	r.now = func() time.Time { return now }
	from := common.HexToAddress("0x00000000000000000000000000000000000000aa")
	h := bchain.Hash{1}
	r.senders[from] = recentSender{at: now, gen: 1}
	r.txs[h] = relayTx{tx: &bchain.EthTx{Hash: h, From: bchain.EthAddress(from), Nonce: 4}, added: now, gen: 1}
	if v := r.pendingFloor(from, 2); v != 5 {
		t.Fatalf("pending floor %d, want 5", v)
	}
	now = now.Add(59 * time.Second)
	if _, ok := r.CachedTx(h); !ok {
		t.Fatal("dropped before the timeout")
	}
	// The provider cannot be asked: the check fails, the tx stays.
	r.Reconcile(context.Background())
	if _, ok := r.CachedTx(h); !ok || metricValue(r.m.checkErrs) != 1 {
		t.Fatalf("after a failed check: kept %v, check errors %v", ok, metricValue(r.m.checkErrs))
	}
	now = now.Add(2 * time.Second)
	if ids := r.CachedIDs(); len(ids) != 0 {
		t.Fatalf("listed after the timeout: %v", ids)
	}
	if _, ok := r.CachedTx(h); ok {
		t.Fatal("kept after the timeout")
	}
	if _, ok := r.senders[from]; ok {
		t.Fatal("sender still routed after its last tx left")
	}
	if v := metricValue(r.m.removed.WithLabelValues(relayGoneTimeout)); v != 1 || metricValue(r.m.cached) != 0 {
		t.Fatalf("removed by timeout %v, cached %v", v, metricValue(r.m.cached))
	}
}

var metricValue = promreg.Value
