package db

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

func cacheOutpoint(i int) outpoint {
	var h bchain.Hash
	h[0], h[1], h[2], h[3] = byte(i), byte(i>>8), byte(i>>16), byte(i>>24)
	return outpoint{h, uint32(i % 3)}
}

func heapBytes() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestUTXOCacheAccountsItsHeap checks the cache's own accounting against
// the heap it really takes, at sizes that leave Go's map tables at
// different loads: the bulk loader's memory plan relies on it.
func TestUTXOCacheAccountsItsHeap(t *testing.T) {
	desc := make([]byte, 22)
	for _, n := range []int{50_000, 300_000, 1_000_000} {
		before := heapBytes()
		c := newUTXOCache(1 << 40)
		for i := range n {
			c.add(cacheOutpoint(i), uint64(i), 7, uint32(i), false, desc)
		}
		used := heapBytes() - before
		if used > c.bytes {
			t.Errorf("%d entries: the heap grew by %d bytes, the cache accounts %d", n, used, c.bytes)
		}
		t.Logf("%d entries: heap %.0f bytes/entry, accounted %.0f", n, float64(used)/float64(n), float64(c.bytes)/float64(n))
		runtime.KeepAlive(c)
	}
}

// TestUTXOCacheRebuildsSpentGenerations checks that taking entries keeps
// them accounted (a map does not shrink) until the generation, once
// committed and mostly spent, is rebuilt; the rest stay readable with
// their descriptors.
func TestUTXOCacheRebuildsSpentGenerations(t *testing.T) {
	c := newUTXOCache(1 << 40)
	const n = 10_000
	for i := range n {
		c.add(cacheOutpoint(i), uint64(i), 5, uint32(i), i == 0, []byte(fmt.Sprintf("desc-%d", i)))
	}
	full := c.bytes
	for i := 0; i < n; i += 4 {
		if _, _, ok := c.take(cacheOutpoint(i)); !ok {
			t.Fatalf("entry %d missing", i)
		}
	}
	if c.bytes != full {
		t.Fatalf("taking entries changed the accounted bytes %d -> %d; their memory is still held", full, c.bytes)
	}
	c.rotate()
	c.commitOldest() // a quarter spent: kept as it is
	if c.bytes != full {
		t.Fatalf("a generation 3/4 unspent was rebuilt: %d -> %d bytes", full, c.bytes)
	}
	for i := 1; i < n; i += 4 {
		c.take(cacheOutpoint(i))
		c.take(cacheOutpoint(i + 1))
	}
	c.rotate()
	c.commitOldest() // now 3/4 spent: rebuilt to a quarter's size
	if c.bytes > full/3 {
		t.Fatalf("after rebuilding a generation 1/4 unspent the cache accounts %d of %d bytes", c.bytes, full)
	}
	for i := 3; i < n; i += 4 {
		e, desc, ok := c.take(cacheOutpoint(i))
		if !ok || e.value != uint64(i) || e.pos>>1 != uint32(i) || string(desc) != fmt.Sprintf("desc-%d", i) {
			t.Fatalf("entry %d after the rebuild: %+v %q %v", i, e, desc, ok)
		}
	}
}

// each passes every address once: with its cached balance, else nil (a
// session on a non-empty index knows no other balance).
func TestBalanceCacheEachPassesCachedOrUnknown(t *testing.T) {
	bc := newBalanceCache(1<<30, false)
	deltas := map[string]*balanceDelta{}
	const n = 5000
	for i := range n {
		desc := fmt.Sprintf("addr-%d", i)
		deltas[desc] = &balanceDelta{}
		if i%2 == 1 {
			bc.put(desc, &AddrBalance{Txs: uint32(i)})
		}
	}
	seen := map[string]bool{}
	err := bc.each(deltas, func(desc string, _ *balanceDelta, cur *AddrBalance) error {
		var i int
		if _, err := fmt.Sscanf(desc, "addr-%d", &i); err != nil {
			return err
		}
		if seen[desc] || (i%2 == 0) != (cur == nil) || (cur != nil && cur.Txs != uint32(i)) {
			t.Errorf("%s: seen before %v, balance %+v", desc, seen[desc], cur)
		}
		seen[desc] = true
		return nil
	})
	if err != nil || len(seen) != n || bc.hits != n/2 || bc.merged != n/2 {
		t.Fatalf("each: %v, %d of %d addresses, %d hits, %d merged", err, len(seen), n, bc.hits, bc.merged)
	}
}

// A session that starts on an empty index knows that the addresses it
// never wrote have no balance, and merges only those it wrote and lost
// from the cache (and the filter's few false positives); a session on a
// non-empty index merges every address its cache lacks.
func TestBalanceCacheMergesOnlyWrittenAddresses(t *testing.T) {
	desc := func(i int) string { return fmt.Sprintf("addr-%d", i) }
	const written = 5000 // several generations of the smallest cache
	fresh := newBalanceCache(600<<10, true)
	for i := range written {
		fresh.put(desc(i), &AddrBalance{Txs: uint32(i + 1)})
	}
	deltas := map[string]*balanceDelta{}
	for i := range 2 * written { // half written (most dropped from the cache), half new
		deltas[desc(i)] = &balanceDelta{}
	}
	check := func(bc *balanceCache) (merged int) {
		t.Helper()
		err := bc.each(deltas, func(k string, _ *balanceDelta, cur *AddrBalance) error {
			var i int
			if _, err := fmt.Sscanf(k, "addr-%d", &i); err != nil {
				return err
			}
			if cur == nil {
				merged++
				return nil
			}
			want := uint32(0)
			if i < written {
				want = uint32(i + 1)
			}
			if cur.Txs != want {
				t.Errorf("%s: txs %d, want %d", k, cur.Txs, want)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return merged
	}
	cached := len(fresh.cur) + len(fresh.old)
	if cached >= written {
		t.Fatalf("the cache holds all %d written balances; the test needs some dropped", written)
	}
	if got, most := check(fresh), written-cached+written/20; got > most || got < written-cached {
		t.Errorf("empty-index session: %d merged for %d dropped written and %d new addresses; want %d to %d", got, written-cached, written, written-cached, most)
	}
	// The counters the bulk session logs add up to the addresses passed.
	if fresh.hits != int64(cached) || fresh.hits+fresh.skipped+fresh.merged != 2*written {
		t.Errorf("empty-index session counted %d hits, %d new, %d merged; want %d hits, %d in all",
			fresh.hits, fresh.skipped, fresh.merged, cached, 2*written)
	}
	full := newBalanceCache(600<<10, false)
	if got := check(full); got != 2*written || full.merged != 2*written || full.hits+full.skipped != 0 {
		t.Errorf("session on a non-empty index: %d merged (counted %d, %d hits, %d new), want %d", got, full.merged, full.hits, full.skipped, 2*written)
	}
}

// The filter of written addresses takes a quarter of the balance cache's
// bytes only up to its bound: a huge cache (syncbench's lower bound asks
// for 1 TiB) made it try to allocate 64 GiB.
func TestBalanceCacheBoundsItsFilter(t *testing.T) {
	if got := newBalanceCache(1<<40, true).written.bytes(); got != maxWrittenFilterBytes {
		t.Fatalf("filter of %d bytes for a 1 TiB cache, want the bound %d", got, int64(maxWrittenFilterBytes))
	}
	if got := newBalanceCache(64<<20, true).written.bytes(); got != 16<<20 {
		t.Fatalf("filter of %d bytes for a 64 MiB cache, want a quarter", got)
	}
}

// A filter that fills up retires: the cache says so once (the flush logs
// it), and from then on merges every address it lacks.
func TestBalanceCacheReportsItsFilterRetiredOnce(t *testing.T) {
	c := newBalanceCache(256, true) // a one-block filter: 102 addresses
	if _, ok := c.filterRetired(); ok {
		t.Fatal("retired before any address was written")
	}
	for i := range 1000 {
		c.put(fmt.Sprintf("addr-%d", i), &AddrBalance{Txs: 1})
	}
	if n, ok := c.filterRetired(); !ok || n <= 102 {
		t.Fatalf("after 1,000 addresses: retired %v holding %d", ok, n)
	}
	if _, ok := c.filterRetired(); ok {
		t.Fatal("retirement reported twice")
	}
	var got *AddrBalance
	err := c.each(map[string]*balanceDelta{"never-written": {}}, func(_ string, _ *balanceDelta, cur *AddrBalance) error { got = cur; return nil })
	if err != nil || got != nil || c.merged != 1 {
		t.Fatalf("an address missing from the cache after retirement: balance %+v (%v), %d merged; want it unknown", got, err, c.merged)
	}
}
