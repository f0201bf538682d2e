package chaingen

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire/v2"
	"github.com/openexplorer/blockbook/tools/regtest"
)

// mempoolChain returns a generator with recent timestamps (btcd only
// maintains its mempool while its tip is recent) and mature coinbases.
func mempoolChain(t *testing.T, seed string, blocks int) *Generator {
	t.Helper()
	step := time.Second
	g := New(params, seed, WithTimestamps(time.Now().Add(-time.Duration(blocks+1)*step), step))
	for range blocks {
		if _, err := g.AddBlock(); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

func rawMempool(t *testing.T, n *regtest.Node) []string {
	t.Helper()
	var ids []string
	if err := n.CallResult(testCtx(t), &ids, "getrawmempool"); err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	return ids
}

func sorted(ids ...string) []string { slices.Sort(ids); return ids }

func sumOut(tx *wire.MsgTx) (s int64) {
	for _, o := range tx.TxOut {
		s += o.Value
	}
	return s
}

func sumCoins(cs []Coin) (s int64) {
	for _, c := range cs {
		s += c.Value
	}
	return s
}

// TestUnconfirmedChainAndReplacement: btcd accepts a child spending an
// unconfirmed parent's change, a BIP125 replacement of the parent (which
// evicts parent and child), and a block mining the replacement.
func TestUnconfirmedChainAndReplacement(t *testing.T) {
	n := startNode(t, regtest.Options{})
	g := mempoolChain(t, "unconfirmed", 105)
	ctx := testCtx(t)
	if err := g.Submit(ctx, n, 1); err != nil {
		t.Fatal(err)
	}
	dest, err := g.Address(P2TR, 40)
	if err != nil {
		t.Fatal(err)
	}
	parent, err := g.CreatePayment([]Output{{Address: dest, Value: 1_000_000}}, 5)
	if err != nil {
		t.Fatal(err)
	}
	coins := g.Coins(parent)
	if len(coins) != 2 { // the payment to a wallet address and the change
		t.Fatalf("parent has %d wallet outputs", len(coins))
	}
	child, err := g.Spend(coins[1:], []Output{{Address: dest, Value: 20_000}}, 7)
	if err != nil {
		t.Fatal(err)
	}
	grandchild, err := g.Spend(g.Coins(child)[1:], []Output{{Address: dest, Value: 10_000}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, tx := range []*wire.MsgTx{parent, child, grandchild} {
		if _, err := n.SendRawTransaction(ctx, tx); err != nil {
			t.Fatalf("send %s: %v", tx.TxHash(), err)
		}
	}
	if got, want := rawMempool(t, n), sorted(parent.TxHash().String(), child.TxHash().String(), grandchild.TxHash().String()); !slices.Equal(got, want) {
		t.Fatalf("mempool %v, want %v", got, want)
	}

	prevs, err := g.Prevouts(child, parent)
	if err != nil {
		t.Fatal(err)
	}
	// The fee was computed from worst-case signature sizes.
	if fee, v := sumCoins(prevs)-sumOut(child), vsize(child); fee < 7*v || fee > 7*(v+2) {
		t.Errorf("child fee %d at 7 sat/vB of %d vB", fee, v)
	}
	if _, err := g.Prevouts(child); err == nil {
		t.Error("Prevouts found an unconfirmed parent it was not given")
	}

	pp, err := g.Prevouts(parent)
	if err != nil {
		t.Fatal(err)
	}
	repl, err := g.Replace(parent, pp, nil, 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(repl.TxOut) != 2 || repl.TxOut[0].Value != 1_000_000 || repl.TxIn[0].PreviousOutPoint != parent.TxIn[0].PreviousOutPoint {
		t.Fatalf("replacement %v", repl)
	}
	if sumCoins(pp)-sumOut(repl) <= sumCoins(pp)-sumOut(parent) {
		t.Fatal("the replacement does not pay more fee")
	}
	if _, err := n.SendRawTransaction(ctx, repl); err != nil {
		t.Fatalf("replacement refused: %v", err)
	}
	if got := rawMempool(t, n); !slices.Equal(got, []string{repl.TxHash().String()}) {
		t.Fatalf("after the replacement the mempool holds %v", got)
	}
	if _, err := g.AddBlock(repl); err != nil {
		t.Fatal(err)
	}
	if err := g.Submit(ctx, n, g.Height()); err != nil {
		t.Fatal(err)
	}
	if got := rawMempool(t, n); len(got) != 0 {
		t.Fatalf("after mining the replacement the mempool holds %v", got)
	}
}

// TestSpendEach fans a coinbase out and spends every output in its own tx;
// btcd accepts them all and a block mines them.
func TestSpendEach(t *testing.T) {
	n := startNode(t, regtest.Options{})
	g := mempoolChain(t, "spend-each", 102)
	ctx := testCtx(t)
	cb := g.Coins(g.Blocks()[1].Transactions[0])
	var to []Output
	for i := range 50 {
		script, err := g.PkScript(P2WPKH, uint64(100+i))
		if err != nil {
			t.Fatal(err)
		}
		to = append(to, Output{Script: script, Value: 10_000_000})
	}
	fan, err := g.Spend(cb, to, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.AddBlock(fan); err != nil {
		t.Fatal(err)
	}
	if err := g.Submit(ctx, n, 1); err != nil {
		t.Fatal(err)
	}
	coins := g.Coins(fan)
	if len(coins) != 51 {
		t.Fatalf("fan-out has %d wallet outputs", len(coins))
	}
	dest, _ := g.PkScript(P2TR, 3)
	dest2, _ := g.PkScript(P2PKH, 3)
	txs, err := g.SpendEach(coins[:50], [][]byte{dest, dest2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, tx := range txs {
		if len(tx.TxIn) != 1 || len(tx.TxOut) != 1 || tx.TxIn[0].PreviousOutPoint != coins[i].OutPoint {
			t.Fatalf("tx %d: %d-in %d-out", i, len(tx.TxIn), len(tx.TxOut))
		}
		if want := [][]byte{dest, dest2}[i%2]; !bytes.Equal(tx.TxOut[0].PkScript, want) {
			t.Fatalf("tx %d pays to %x", i, tx.TxOut[0].PkScript)
		}
		if _, err := n.SendRawTransaction(ctx, tx); err != nil {
			t.Fatal(err)
		}
	}
	if got := rawMempool(t, n); len(got) != 50 {
		t.Fatalf("mempool holds %d txs, want 50", len(got))
	}
	if _, err := g.AddBlock(txs...); err != nil {
		t.Fatal(err)
	}
	if err := g.Submit(ctx, n, g.Height()); err != nil {
		t.Fatal(err)
	}
	if got := rawMempool(t, n); len(got) != 0 {
		t.Fatalf("after mining, the mempool holds %d txs", len(got))
	}
	if _, err := g.SpendEach([]Coin{{OutPoint: wire.OutPoint{Index: 1}, Value: 5000, PkScript: []byte{0x51}}}, [][]byte{dest}, 1); err == nil {
		t.Error("SpendEach signed a coin of a foreign script")
	}
}
