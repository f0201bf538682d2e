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

// Each tx once, in the order Blockbook's account query gives.
//
// Block 10 holds, in block order, 0x05 (pays A), 0x03 (spends A, pays B),
// 0x09 (pays C) and 0x01 (spends B). Each address's row lists the txs
// paying to it before those spending from it (db.IterateAddrTxs), so
// A: 05(out) 03(in) | 07(out, height 8); B: 03(out) 01(in) | 02(out, 9);
// C: 09(out). Blockbook concatenates the lists in address order keeping
// first entries: 05o 03i 07o 01i 02o 09o (heights 10 10 8 10 9 10), then
// sort.Stable with "higher first; at one height, x before y unless only y
// spends". Six items are one insertion-sort block (each moves left while
// Less(it, left neighbour)):
//
//	03i passes 05o                       → 03 05 07 01 02 09
//	07 stays (height 8 after 10)
//	01i passes 07, 05o, 03i (1 >= 1)     → 01 03 05 07 02 09
//	02 passes 07, stops at 05 (9 < 10)   → 01 03 05 02 07 09
//	09o passes 07, 02, 05o; not 03i      → 01 03 09 05 02 07
func TestMergeAccountTxs(t *testing.T) {
	a := []xpubTx{txOf(0x05, 10, touchOutput), txOf(0x03, 10, touchInput), txOf(0x07, 8, touchOutput)}
	b := []xpubTx{txOf(0x03, 10, touchOutput), txOf(0x01, 10, touchInput), txOf(0x02, 9, touchOutput)}
	c := []xpubTx{txOf(0x09, 10, touchOutput)}
	got := mergeAccountTxs([][]xpubTx{a, b, c}, nil)
	if want := []byte{0x01, 0x03, 0x09, 0x05, 0x02, 0x07}; !slices.Equal(ids(got), want) {
		t.Fatalf("order %x, want %x", ids(got), want)
	}
	if got[1].touch != touchInput {
		t.Fatalf("0x03 keeps the touch of its first entry (A's input): %d", got[1].touch)
	}
	// Filtered (outputs only), the list is merged afresh: 0x03 enters at
	// B's entry, as an output: 05o 07o 03o 02o 09o, which sorts to
	// 09 03 05 02 07 (no tx spends, so each passes every other of its
	// height: 03 passes 05; 02 stops at 05; 09 passes 07, 02, 05, 03).
	outs := mergeAccountTxs([][]xpubTx{a, b, c}, func(t xpubTx) bool { return t.touch&touchOutput != 0 })
	if want := []byte{0x09, 0x03, 0x05, 0x02, 0x07}; !slices.Equal(ids(outs), want) {
		t.Fatalf("outputs %x, want %x", ids(outs), want)
	}
	if got := mergeAccountTxs(nil, nil); len(got) != 0 {
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
