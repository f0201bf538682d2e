package api

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"unsafe"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// txOf is tx b of a block: its index in the block is b.
func txOf(b byte, height uint32, touch uint8) xpubTx {
	return xpubTx{height: height, index: uint32(b), touch: touch}
}

func ids(txs []xpubTx) []byte {
	out := make([]byte, len(txs))
	for i, t := range txs {
		out[i] = byte(t.index)
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

// synthAccount builds an account shaped like a derived one: n addresses on
// each of two chains (P2WPKH scripts, bech32 names), every tenth used with
// three txs, the address set and the merged list built.
func synthAccount(n int) *xpubAccount {
	a := &xpubAccount{key: "wpkh([00000000/84h/1h/0h]tpubD...)", xd: &bchain.XpubDescriptor{Descriptor: "wpkh([00000000/84h/1h/0h]tpubD...)"}}
	a.chains = make([]xpubChain, 2)
	for c := range a.chains {
		for i := range n {
			desc := make(bchain.AddrDesc, 22)
			desc[1], desc[2], desc[3] = 0x14, byte(c), byte(i)
			ad := &xpubAddr{desc: desc, name: fmt.Sprintf("bcrt1q%036d", c*n+i)}
			if i%10 == 0 {
				ad.bal = &db.AddrBalance{Txs: 3}
				ad.txs = make([]xpubTx, 3)
				for j := range ad.txs {
					ad.txs[j].index = uint32(i)<<8 | uint32(j)
				}
				ad.loaded = true
			}
			a.chains[c].addrs = append(a.chains[c].addrs, ad)
		}
	}
	a.merged = mergeAccountTxs(a.txLists(), nil)
	a.ownNames()
	return a
}

// The byte count of an account agrees with what building it takes from the
// heap (within 15%): the cache's budget means real memory.
func TestXpubAccountSizeMatchesHeap(t *testing.T) {
	const n = 20_000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	a := synthAccount(n)
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	got := a.size()
	runtime.KeepAlive(a)
	if ratio := float64(got) / float64(heap); ratio < 0.85 || ratio > 1.15 {
		t.Fatalf("size %d bytes, heap grew by %d (ratio %.2f)", got, heap, ratio)
	}
	t.Logf("%d addresses: size %d, heap %d, %.0f bytes per address", 2*n, got, heap, float64(got)/(2*n))
	// More txs, more bytes: the count follows the slices.
	ad := a.chains[0].addrs[1]
	base := a.size()
	ad.txs = make([]xpubTx, 100)
	if grown := a.size() - base; grown < 100*int64(unsafe.Sizeof(xpubTx{})) {
		t.Fatalf("100 txs added %d bytes", grown)
	}
}

// Accounts charged by bytes are evicted least recently used first, down to
// the budget, and an account sized over the budget is not kept.
func TestXpubCacheEvictsByBytes(t *testing.T) {
	one := synthAccount(1000)
	sz := one.size()
	c := newXpubCache(3*sz + sz/2) // room for three
	var accts []*xpubAccount
	for i := range 5 {
		a := c.get(fmt.Sprint("acct", i), func() *xpubAccount { return synthAccount(1000) })
		c.put(a, a.size())
		accts = append(accts, a)
	}
	want := accts[2].size() + accts[3].size() + accts[4].size()
	if n, bytes := c.stats(); n != 3 || bytes != want {
		t.Fatalf("%d accounts, %d bytes; want 3, %d", n, bytes, want)
	}
	for i, a := range accts {
		kept := c.get(fmt.Sprint("acct", i), func() *xpubAccount { return &xpubAccount{} }) == a
		if kept != (i >= 2) {
			t.Fatalf("account %d kept %v", i, kept)
		}
	}
	huge := synthAccount(5000)
	h := c.get("huge", func() *xpubAccount { return huge })
	c.put(h, h.size())
	if _, bytes := c.stats(); bytes > 3*sz+sz/2 {
		t.Fatalf("over budget: %d bytes", bytes)
	}
}

// A narrower gap reads a prefix of each chain: where a fresh scan with that
// gap would stop, never past what the wider scan derived.
func TestScanLength(t *testing.T) {
	used := map[int]bool{0: true, 5: true, 30: true, 44: true}
	addrs := make([]*xpubAddr, 200)
	for i := range addrs {
		addrs[i] = &xpubAddr{}
		if used[i] {
			addrs[i].bal = &db.AddrBalance{Txs: 1}
		}
	}
	for _, tc := range []struct{ gap, min, n, last int }{
		// 25: 0..25 finds 5, ..30 finds 30, ..55 finds 44, ..69 finds none.
		// 14: 0..14 finds 5, ..19 none. 3: 0..3 finds 0 and stops.
		{20, 0, 26, 5}, {25, 0, 70, 44}, {14, 0, 20, 5}, {20, 50, 65, 44}, {3, 0, 4, 0}, {200, 0, 200, 44},
	} {
		if n, last := scanLength(addrs, tc.gap, tc.min); n != tc.n || last != tc.last {
			t.Errorf("gap %d min %d: %d addresses, last used %d; want %d, %d", tc.gap, tc.min, n, last, tc.n, tc.last)
		}
	}
}
