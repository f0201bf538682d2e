package ltcregtest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestSatoshis(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "12.50005530": 1250005530, "1.5": 150000000, "0.00000001": 1} {
		got, err := Satoshis(json.Number(in))
		if err != nil || got != want {
			t.Errorf("Satoshis(%s) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1", "1.000000001", "1e8", "x"} {
		if _, err := Satoshis(json.Number(bad)); err == nil {
			t.Errorf("Satoshis(%q) accepted", bad)
		}
	}
}

// The scenario runs on a real litecoind: MWEB activates at 432 with the
// waiting peg-in, peg-outs land in HogEx outputs, every script kind is
// paid, and the node-derived ledger balances (utxos add up per address).
// A copy of the stopped node's directory restarts with the same chain.
func TestGenerateOnLitecoind(t *testing.T) {
	Require(t)
	ctx := context.Background()
	dir := t.TempDir()
	n, err := Start(ctx, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Stop() })
	sc, err := Generate(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	l, blocks, err := Ledger(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	if l.TipHeight != sc.TipHeight || l.TipHash != sc.TipHash {
		t.Fatalf("ledger tip %d %s, scenario %d %s", l.TipHeight, l.TipHash, sc.TipHeight, sc.TipHash)
	}
	for _, kind := range sortedKinds(sc.Addresses) {
		for _, a := range sc.Addresses[kind] {
			if l.Addresses[a] == nil || l.Addresses[a].Received == 0 {
				t.Errorf("%s address %s never paid", kind, a)
			}
		}
	}
	pegIns, pegOuts, mweb := 0, 0, 0
	for _, b := range blocks {
		if b.MWEB != (b.Height >= MWEBHeight) {
			t.Errorf("block %d: mweb %v", b.Height, b.MWEB)
		}
		if b.NTx != len(b.Txids) {
			t.Errorf("block %d: nTx %d, %d txs", b.Height, b.NTx, len(b.Txids))
		}
		if b.MWEB {
			mweb++
		}
		pegIns += b.PegIns
		pegOuts += b.PegOuts
	}
	if pegIns != len(sc.PegIns) || pegOuts != len(sc.PegOuts) || mweb < 5 {
		t.Errorf("peg-ins %d (sent %d), peg-outs %d (sent %d), mweb blocks %d", pegIns, len(sc.PegIns), pegOuts, len(sc.PegOuts), mweb)
	}
	if len(l.Addresses) < 50 || l.NoAddress.Burned != 0 || l.NoAddress.Outputs == 0 {
		t.Errorf("ledger: %d addresses, no-address %+v", len(l.Addresses), l.NoAddress)
	}

	// A copy of the stopped node serves the same chain, wallets included.
	if err := n.Stop(); err != nil {
		t.Fatal(err)
	}
	cp := t.TempDir()
	if err := CopyDir(dir, cp); err != nil {
		t.Fatal(err)
	}
	n2, err := Start(ctx, Options{Dir: cp, Wallets: []string{W, MW}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = n2.Stop() }()
	h, hash, err := n2.BestBlock(ctx)
	if err != nil || h != sc.TipHeight || hash != sc.TipHash {
		t.Fatalf("copy at %d %s (%v), want %d %s", h, hash, err, sc.TipHeight, sc.TipHash)
	}
	if _, err := n2.Wallet(MW).Call(ctx, "getbalance"); err != nil {
		t.Fatal(err)
	}
	if got, err := LoadScenario(cp); err != nil || got.TipHash != sc.TipHash {
		t.Fatalf("LoadScenario: %v", err)
	}
}

// litecoind 0.21.2.1 keeps BIP125 replacement off unless started with
// -mempoolreplacement=1: bumpfee then still answers a new txid, but the
// node's mempool keeps the original (the wallet logs
// "txn-mempool-conflict"), so an indexer must keep showing the original.
// With the flag the replacement takes its place.
func TestBumpFeePolicy(t *testing.T) {
	Require(t)
	for _, c := range []struct {
		args     []string
		replaced bool
	}{{nil, false}, {[]string{"-mempoolreplacement=1"}, true}} {
		ctx := context.Background()
		n, err := Start(ctx, Options{Dir: t.TempDir(), ExtraArgs: c.args})
		if err != nil {
			t.Fatal(err)
		}
		// The chain is thrown away: no clean shutdown needed.
		t.Cleanup(n.Kill)
		w := n.Wallet("w")
		var addr, old string
		if _, err := n.Call(ctx, "createwallet", "w"); err != nil {
			t.Fatal(err)
		}
		if err := w.CallResult(ctx, &addr, "getnewaddress", "", "bech32"); err != nil {
			t.Fatal(err)
		}
		if _, err := n.Call(ctx, "generatetoaddress", 101, addr); err != nil {
			t.Fatal(err)
		}
		// sendtoaddress address amount comment comment_to subtractfee replaceable
		if err := w.CallResult(ctx, &old, "sendtoaddress", addr, json.Number("1"), "", "", false, true); err != nil {
			t.Fatal(err)
		}
		var bumped struct {
			Txid string `json:"txid"`
		}
		if err := w.CallResult(ctx, &bumped, "bumpfee", old); err != nil {
			t.Fatalf("%v: bumpfee: %v", c.args, err)
		}
		var pool []string
		if err := n.CallResult(ctx, &pool, "getrawmempool"); err != nil {
			t.Fatal(err)
		}
		want := []string{old}
		if c.replaced {
			want = []string{bumped.Txid}
		}
		if bumped.Txid == "" || bumped.Txid == old || len(pool) != 1 || pool[0] != want[0] {
			t.Fatalf("%v: bumpfee answered %s; the mempool holds %v, want %v", c.args, bumped.Txid, pool, want)
		}
		if !c.replaced && !strings.Contains(n.LogTail(50), "txn-mempool-conflict") {
			t.Errorf("the refused replacement is not logged as a conflict:\n%s", n.LogTail(10))
		}
	}
}
