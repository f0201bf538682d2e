package db

import (
	"math/bits"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// countingReader counts the reads a removal-log query makes: point reads
// and rows visited.
type countingReader struct {
	r          Reader
	gets, rows int
}

func (c *countingReader) get(cf CF, key []byte) ([]byte, error) {
	c.gets++
	return c.r.get(cf, key)
}

func (c *countingReader) iterate(cf CF, start, prefix []byte, fn func(k, v []byte) (bool, error)) error {
	return c.r.iterate(cf, start, prefix, func(k, v []byte) (bool, error) {
		c.rows++
		return fn(k, v)
	})
}

// TestRemovalLogBoundedReads logs removals in growing numbers and checks
// that counting them takes O(log n) point reads and no scan, that a scan
// from an index visits only the rows from there, and that the rows read
// back as written.
func TestRemovalLogBoundedReads(t *testing.T) {
	d := openTestDB(t)
	hashOf := func(i int) bchain.Hash { return bchain.Hash{byte(i), byte(i >> 8), 0xaa} }
	logged := 0
	for _, n := range []int{0, 1, 2, 3, 7, 8, 9, 100, 1000, 1025} {
		b := d.NewBatch()
		for ; logged < n; logged++ {
			logRemoval(b, logged, uint32(5000-logged), hashOf(logged))
		}
		if err := d.write(b); err != nil {
			t.Fatal(err)
		}
		c := &countingReader{r: d}
		got, err := CountRemovals(c)
		if err != nil || got != n {
			t.Fatalf("CountRemovals = %d %v, want %d", got, err, n)
		}
		if limit := 2*bits.Len(uint(n)) + 2; c.gets > limit || c.rows != 0 {
			t.Errorf("counting %d removals: %d point reads (at most %d), %d rows scanned", n, c.gets, limit, c.rows)
		}
		if n == 0 {
			continue
		}
		from := max(0, n-3)
		c = &countingReader{r: d}
		var seen []int
		err = ScanRemovals(c, from, func(i int, rm Removal) (bool, error) {
			if rm.Height != uint32(5000-i) || rm.Hash != hashOf(i) {
				t.Errorf("removal %d: %+v", i, rm)
			}
			seen = append(seen, i)
			return true, nil
		})
		if err != nil || len(seen) != n-from || seen[0] != from || c.rows != n-from {
			t.Errorf("scan from %d of %d: %v %v, %d rows read", from, n, seen, err, c.rows)
		}
		if rm, ok, err := ReadRemoval(d, n-1); err != nil || !ok || rm.Hash != hashOf(n-1) {
			t.Errorf("removal %d: %+v %v %v", n-1, rm, ok, err)
		}
		if _, ok, err := ReadRemoval(d, n); err != nil || ok {
			t.Errorf("removal %d past the end: %v %v", n, ok, err)
		}
	}
	all, err := ReadRemovals(d)
	if err != nil || len(all) != logged {
		t.Fatalf("ReadRemovals: %d %v", len(all), err)
	}
}
