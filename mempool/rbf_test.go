package mempool

import (
	"context"
	"slices"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// The replacement history follows mempool.space's rbf-cache: a replacement
// of a replacement nests the older tree, a tx replacing two txs holds
// both, mining marks the tree, and the oldest trees go first past the
// bound.
func TestReplacementTrees(t *testing.T) {
	ctx := context.Background()
	m := offlineMempool(t, Config{})
	in1, in2 := Outpoint{hashOf(900), 0}, Outpoint{hashOf(900), 1}
	a := synthTx(1, 100, []synthIn{{op: in1, desc: "x", value: 9000, known: true}}, "y")
	d := synthTx(2, 105, []synthIn{{op: in2, desc: "x", value: 9000, known: true}}, "y")
	d.Vin[0].Sequence = 0xffffffff // does not signal: replacing it is full RBF
	b := synthTx(3, 110, []synthIn{{op: in1, desc: "x", value: 9000, known: true}}, "z")
	c := synthTx(4, 130, []synthIn{{op: in1, desc: "x", value: 9000, known: true}, {op: in2, desc: "x", value: 9000, known: true}}, "w")
	for _, tx := range []*Tx{a, d, b, c} {
		m.apply(ctx, []*Tx{tx}, []uint64{m.tick()})
	}
	r := m.Replacements()
	tree := r.Tree(a.Txid)
	if tree == nil || tree.Tx.Txid != c.Txid || len(tree.Replaces) != 2 || !tree.FullRbf || !tree.Tx.FullRbf {
		t.Fatalf("tree of a: %+v", tree)
	}
	sub := tree.Replaces[0]
	if sub.Tx.Txid != b.Txid || sub.Interval != 20 || len(sub.Replaces) != 1 || sub.Replaces[0].Tx.Txid != a.Txid || sub.Replaces[0].Interval != 10 {
		t.Fatalf("b's subtree: %+v", sub)
	}
	if leaf := tree.Replaces[1]; leaf.Tx.Txid != d.Txid || leaf.Tx.Rbf || !leaf.FullRbf || leaf.Interval != 25 {
		t.Fatalf("d's leaf: %+v", leaf)
	}
	if got := r.Replaces(c.Txid); !slices.Equal(got, []bchain.Hash{b.Txid, d.Txid}) {
		t.Fatalf("Replaces(c) = %v", got)
	}
	if by, ok := r.ReplacedBy(a.Txid); !ok || by != b.Txid {
		t.Fatalf("ReplacedBy(a) = %v %v", by, ok)
	}
	if l := r.Latest(false, 25); len(l) != 1 || l[0].Tx.Txid != c.Txid {
		t.Fatalf("Latest: %+v", l)
	}
	if l := r.Latest(true, 25); len(l) != 1 {
		t.Fatalf("Latest full RBF: %+v", l)
	}
	v := r.Version()
	m.blockConnected(&bchain.Block{Txs: []bchain.Tx{{Txid: hashOf(999), Vin: []bchain.Vin{{Coinbase: true}}}, *c.Tx}})
	if tree := r.Tree(c.Txid); !tree.Mined || !tree.Tx.Mined || r.Version() == v {
		t.Fatalf("mined tree: %+v", tree)
	}
	// A copy: changing it leaves the history alone.
	tree.Replaces = nil
	if len(r.Tree(c.Txid).Replaces) != 2 {
		t.Fatal("Tree returned the history's own tree")
	}
}

func TestReplacementsBounded(t *testing.T) {
	r := newReplacements(2)
	for i := range uint64(3) {
		old := synthTx(10+i, 1, nil)
		nw := synthTx(20+i, 2, nil)
		r.add([]*Tx{old}, nw)
	}
	if r.Tree(hashOf(10)) != nil || r.Tree(hashOf(20)) != nil {
		t.Fatal("the oldest tree was kept past the bound")
	}
	if _, ok := r.ReplacedBy(hashOf(10)); ok {
		t.Fatal("the evicted tree's txs are still mapped")
	}
	if l := r.Latest(false, 25); len(l) != 2 || l[0].Tx.Txid != hashOf(22) || l[1].Tx.Txid != hashOf(21) {
		t.Fatalf("Latest after eviction: %+v", l)
	}
	if len(r.treeOf) != 4 || len(r.replacedBy) != 2 || len(r.replaces) != 2 {
		t.Fatalf("maps hold %d, %d, %d entries", len(r.treeOf), len(r.replacedBy), len(r.replaces))
	}
}

// A tx replaced again and again keeps one tree and a bounded event list.
func TestReplacementChainBounded(t *testing.T) {
	r := newReplacements(2)
	prev := synthTx(1, 1, nil)
	for i := range uint64(100) {
		next := synthTx(2+i, int64(2+i), nil)
		r.add([]*Tx{prev}, next)
		prev = next
	}
	if len(r.trees) != 1 || len(r.events) > 2*2+16 {
		t.Fatalf("%d trees, %d events", len(r.trees), len(r.events))
	}
	if l := r.Latest(false, 25); len(l) != 1 || l[0].Tx.Txid != prev.Txid {
		t.Fatalf("Latest: %+v", l)
	}
}
