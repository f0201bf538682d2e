package api

import (
	"slices"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

func txOf(b byte, height uint32, touch uint8) xpubTx {
	var h bchain.Hash
	h[0] = b
	return xpubTx{txid: h, height: height, touch: touch}
}

func ids(txs []xpubTx) []byte {
	out := make([]byte, len(txs))
	for i, t := range txs {
		out[i] = t.txid[0]
	}
	return out
}

// Each tx once, newest block first; within a block the order every
// address's list gives (reverse block order), then the smaller txid.
func TestMergeNewestFirst(t *testing.T) {
	// Block 10 holds, in block order, 0x05 (pays A), 0x03 (spends A, pays
	// B), 0x09 (pays C) and 0x01 (spends B). Address lists are newest first.
	a := []xpubTx{txOf(0x03, 10, touchInput), txOf(0x05, 10, touchOutput), txOf(0x07, 8, touchOutput)}
	b := []xpubTx{txOf(0x01, 10, touchInput), txOf(0x03, 10, touchOutput), txOf(0x02, 9, touchOutput)}
	c := []xpubTx{txOf(0x09, 10, touchOutput)}
	got := mergeNewestFirst([][]xpubTx{a, b, c})
	// 0x01 precedes 0x03 (B's order), 0x03 precedes 0x05 (A's); 0x09,
	// unordered against them, waits while a smaller txid is free to come.
	if want := []byte{0x01, 0x03, 0x05, 0x09, 0x02, 0x07}; !slices.Equal(ids(got), want) {
		t.Fatalf("order %x, want %x", ids(got), want)
	}
	if got[1].touch != touchInput|touchOutput {
		t.Fatalf("touch of a tx seen from two addresses: %d", got[1].touch)
	}
	// One address: its own order, untouched.
	if got := mergeNewestFirst([][]xpubTx{a}); !slices.Equal(ids(got), []byte{0x03, 0x05, 0x07}) {
		t.Fatalf("single list %x", ids(got))
	}
	if got := mergeNewestFirst(nil); len(got) != 0 {
		t.Fatalf("no lists: %v", got)
	}
}

func TestXpubCacheBoundedByCost(t *testing.T) {
	c := newXpubCache(100)
	mk := func() *xpubAccount { return &xpubAccount{} }
	a := c.get("a", mk)
	c.put(a, 40)
	b := c.get("b", mk)
	c.put(b, 40)
	if c.get("a", mk) != a { // a becomes the most recently used
		t.Fatal("a not cached")
	}
	d := c.get("d", mk)
	c.put(d, 40) // over budget: b, the least recently used, goes
	if n, cost := c.stats(); n != 2 || cost != 80 {
		t.Fatalf("%d accounts, cost %d", n, cost)
	}
	if c.get("b", mk) == b {
		t.Fatal("b was not evicted")
	}
	// An account larger than the budget is not kept.
	big := c.get("big", mk)
	c.put(big, 101)
	if c.get("big", mk) == big {
		t.Fatal("an account over the whole budget was kept")
	}
	c.drop(a)
	if c.get("a", mk) == a {
		t.Fatal("dropped account still cached")
	}
	c.clear()
	if n, cost := c.stats(); n != 0 || cost != 0 {
		t.Fatalf("after clear: %d accounts, cost %d", n, cost)
	}
	// Disabled: nothing is shared between requests.
	off := newXpubCache(0)
	x := off.get("x", mk)
	off.put(x, 1)
	if off.get("x", mk) == x {
		t.Fatal("a disabled cache kept an account")
	}
}
