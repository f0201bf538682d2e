// Package dbtest is the conformance suite of db engines: every engine
// (db/rocksdb, db/memdb) runs it from its tests, so package db can rely on
// the same semantics from each.
package dbtest

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// Families the suite uses: two held ones, and one a Bitcoin-type index
// does not hold.
const (
	cfA       = db.CFHeight
	cfB       = db.CFAddresses
	cfMissing = db.CFContracts
)

// Run runs the suite. open must return a new, empty engine holding the
// column families of a Bitcoin-type index
// (db.ColumnFamilies(bchain.ChainBitcoinType)); the suite closes it.
func Run(t *testing.T, open func(t *testing.T) db.Engine) {
	fresh := func(t *testing.T) db.Engine {
		e := open(t)
		t.Cleanup(func() { _ = e.Close() })
		return e
	}
	for _, c := range []struct {
		name string
		fn   func(*testing.T, db.Engine)
	}{
		{"AbsentKeys", testAbsentKeys},
		{"PutGetDelete", testPutGetDelete},
		{"ValuesAreCopies", testValuesAreCopies},
		{"BatchAtomicity", testBatchAtomicity},
		{"BatchToMissingFamily", testBatchToMissingFamily},
		{"IterateOrder", testIterateOrder},
		{"IteratePrefixAndStart", testIteratePrefixAndStart},
		{"IterateStop", testIterateStop},
		{"IterateReverse", testIterateReverse},
		{"IterationIsConsistent", testIterationIsConsistent},
		{"SnapshotIsolation", testSnapshotIsolation},
		{"GetMany", testGetMany},
		{"ConcurrentSnapshots", testConcurrentSnapshots},
		{"IngestRuns", testIngestRuns},
		{"MergeRuns", testMergeRuns},
		{"RunRules", testRunRules},
		{"Maintenance", testMaintenance},
		{"Closed", testClosed},
	} {
		t.Run(c.name, func(t *testing.T) { c.fn(t, fresh(t)) })
	}
	t.Run("DB", func(t *testing.T) { testDB(t, fresh(t)) })
}

// kv is one change of a batch or a run: a put, a deletion or (runs
// only) a merge operand.
type kv struct {
	k, v  string
	del   bool
	merge bool
}

func put(k, v string) kv { return kv{k: k, v: v} }
func del(k string) kv    { return kv{k: k, del: true} }

func write(t *testing.T, e db.Engine, cf db.CF, changes ...kv) {
	t.Helper()
	b := e.NewBatch()
	defer b.Destroy()
	for _, c := range changes {
		if c.del {
			b.Delete(cf, []byte(c.k))
		} else {
			b.Put(cf, []byte(c.k), []byte(c.v))
		}
	}
	if err := e.Write(b, false); err != nil {
		t.Fatalf("write: %v", err)
	}
}

// expect checks one key: want "" with absent true means absent.
func expect(t *testing.T, r db.EngineReader, cf db.CF, key string, want string, absent bool) {
	t.Helper()
	got, err := r.Get(cf, []byte(key))
	if err != nil {
		t.Fatalf("get %s %q: %v", cf, key, err)
	}
	switch {
	case absent && got != nil:
		t.Errorf("get %s %q = %q, want absent", cf, key, got)
	case !absent && got == nil:
		t.Errorf("get %s %q absent, want %q", cf, key, want)
	case !absent && string(got) != want:
		t.Errorf("get %s %q = %q, want %q", cf, key, got, want)
	}
}

// rows collects an iteration as "key=value" strings.
func rows(t *testing.T, r db.EngineReader, cf db.CF, start, prefix []byte, reverse bool) []string {
	t.Helper()
	var out []string
	fn := func(k, v []byte) (bool, error) {
		out = append(out, string(k)+"="+string(v))
		return true, nil
	}
	var err error
	if reverse {
		err = r.IterateReverse(cf, start, prefix, fn)
	} else {
		err = r.Iterate(cf, start, prefix, fn)
	}
	if err != nil {
		t.Fatalf("iterate %s: %v", cf, err)
	}
	return out
}

func expectRows(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s: got %q, want %q", what, got, want)
	}
}

func testAbsentKeys(t *testing.T, e db.Engine) {
	for _, cf := range db.ColumnFamilies(bchain.ChainBitcoinType) {
		expect(t, e, cf, "nothing", "", true)
		expectRows(t, cf.String(), rows(t, e, cf, nil, nil, false))
		expectRows(t, cf.String()+" reverse", rows(t, e, cf, nil, nil, true))
	}
	expect(t, e, cfMissing, "k", "", true) // a family not held reads as empty
	expectRows(t, "family not held", rows(t, e, cfMissing, nil, nil, false))
}

func testPutGetDelete(t *testing.T, e db.Engine) {
	write(t, e, cfA, put("k", "a1"), put("only-a", "x"))
	write(t, e, cfB, put("k", "b1"))
	expect(t, e, cfA, "k", "a1", false)
	expect(t, e, cfB, "k", "b1", false)
	expect(t, e, cfB, "only-a", "", true)
	expect(t, e, cfA, "k\x00", "", true) // no prefix matching
	expect(t, e, cfA, "", "", true)

	write(t, e, cfA, put("k", "a2"))
	expect(t, e, cfA, "k", "a2", false)
	expect(t, e, cfB, "k", "b1", false)

	write(t, e, cfB, del("k"), del("never-there"))
	expect(t, e, cfB, "k", "", true)
	expect(t, e, cfA, "k", "a2", false)

	// An empty value is present, and reads as empty, not absent.
	write(t, e, cfA, put("empty", ""))
	if got, err := e.Get(cfA, []byte("empty")); err != nil || got == nil || len(got) != 0 {
		t.Errorf("empty value read as %v, %v", got, err)
	}
	// Within a batch the last change of a key wins.
	write(t, e, cfA, put("twice", "1"), put("twice", "2"), put("gone", "1"), del("gone"))
	expect(t, e, cfA, "twice", "2", false)
	expect(t, e, cfA, "gone", "", true)
}

func testValuesAreCopies(t *testing.T, e db.Engine) {
	key, val := []byte("key"), []byte("value")
	b := e.NewBatch()
	b.Put(cfA, key, val)
	copy(key, "KEY") // callers reuse their buffers once Put returns
	copy(val, "VALUE")
	if err := e.Write(b, false); err != nil {
		t.Fatal(err)
	}
	b.Destroy()
	expect(t, e, cfA, "key", "value", false)
	got, err := e.Get(cfA, []byte("key"))
	if err != nil {
		t.Fatal(err)
	}
	got[0] = 'X' // Get returns a copy
	expect(t, e, cfA, "key", "value", false)
}

func testBatchAtomicity(t *testing.T, e db.Engine) {
	write(t, e, cfA, put("old", "1"))
	b := e.NewBatch()
	defer b.Destroy()
	b.Put(cfA, []byte("new"), []byte("2"))
	b.Put(cfB, []byte("other"), []byte("3"))
	b.Delete(cfA, []byte("old"))
	if b.Len() != 3 {
		t.Errorf("batch Len %d, want 3", b.Len())
	}
	// Nothing is visible before the write...
	expect(t, e, cfA, "new", "", true)
	expect(t, e, cfB, "other", "", true)
	expect(t, e, cfA, "old", "1", false)
	if err := e.Write(b, true); err != nil {
		t.Fatal(err)
	}
	// ...and all of it after.
	expect(t, e, cfA, "new", "2", false)
	expect(t, e, cfB, "other", "3", false)
	expect(t, e, cfA, "old", "", true)
}

func testBatchToMissingFamily(t *testing.T, e db.Engine) {
	b := e.NewBatch()
	defer b.Destroy()
	b.Put(cfA, []byte("k"), []byte("v"))
	b.Put(cfMissing, []byte("k"), []byte("v"))
	if err := e.Write(b, false); err == nil {
		t.Fatal("a write to a family not held succeeded")
	}
	expect(t, e, cfA, "k", "", true) // and nothing of the batch was written
}

// testIterateOrder checks bytewise unsigned order with random inserts.
func testIterateOrder(t *testing.T, e db.Engine) {
	rng := rand.New(rand.NewSource(1))
	var keys [][]byte
	for i := 0; i < 300; i++ {
		k := make([]byte, 1+rng.Intn(4))
		rng.Read(k)
		keys = append(keys, k)
	}
	keys = append(keys, []byte{0x7f}, []byte{0x80}, []byte{0x80, 0x00}, []byte{0xff, 0xff})
	b := e.NewBatch()
	for _, k := range keys {
		b.Put(cfA, k, k)
	}
	if err := e.Write(b, false); err != nil {
		t.Fatal(err)
	}
	b.Destroy()
	slices.SortFunc(keys, bytes.Compare)
	keys = slices.CompactFunc(keys, bytes.Equal)
	var got [][]byte
	err := e.Iterate(cfA, nil, nil, func(k, v []byte) (bool, error) {
		if !bytes.Equal(k, v) {
			return false, fmt.Errorf("key %x has value %x", k, v)
		}
		got = append(got, slices.Clone(k))
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(got, keys, bytes.Equal) {
		t.Fatalf("iteration gave %d keys, want %d in order", len(got), len(keys))
	}
	got = got[:0]
	err = e.IterateReverse(cfA, nil, nil, func(k, _ []byte) (bool, error) {
		got = append(got, slices.Clone(k))
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(got)
	if !slices.EqualFunc(got, keys, bytes.Equal) {
		t.Fatalf("reverse iteration gave %d keys, want %d in order", len(got), len(keys))
	}
}

func fill(t *testing.T, e db.Engine) {
	write(t, e, cfA, put("a", "1"), put("b1", "2"), put("b2", "3"), put("b3", "4"), put("c", "5"),
		put("\xff", "6"), put("\xff\xff", "7"), put("\xff\xff\x00", "8"))
	write(t, e, cfB, put("b0", "other family"))
}

func testIteratePrefixAndStart(t *testing.T, e db.Engine) {
	fill(t, e)
	expectRows(t, "all", rows(t, e, cfA, nil, nil, false), "a=1", "b1=2", "b2=3", "b3=4", "c=5", "\xff=6", "\xff\xff=7", "\xff\xff\x00=8")
	expectRows(t, "prefix b", rows(t, e, cfA, nil, []byte("b"), false), "b1=2", "b2=3", "b3=4")
	expectRows(t, "prefix b from b2", rows(t, e, cfA, []byte("b2"), []byte("b"), false), "b2=3", "b3=4")
	expectRows(t, "prefix b from b15", rows(t, e, cfA, []byte("b15"), []byte("b"), false), "b2=3", "b3=4")
	expectRows(t, "from bz", rows(t, e, cfA, []byte("bz"), nil, false), "c=5", "\xff=6", "\xff\xff=7", "\xff\xff\x00=8")
	expectRows(t, "prefix d", rows(t, e, cfA, nil, []byte("d"), false))
	expectRows(t, "prefix ffff", rows(t, e, cfA, nil, []byte("\xff\xff"), false), "\xff\xff=7", "\xff\xff\x00=8")
	expectRows(t, "past the end", rows(t, e, cfA, []byte("\xff\xff\xff"), nil, false))
	expectRows(t, "other family", rows(t, e, cfB, nil, []byte("b"), false), "b0=other family")
}

func testIterateStop(t *testing.T, e db.Engine) {
	fill(t, e)
	n := 0
	err := e.Iterate(cfA, nil, nil, func(_, _ []byte) (bool, error) {
		n++
		return n < 2, nil
	})
	if err != nil || n != 2 {
		t.Errorf("stopped after %d rows, err %v", n, err)
	}
	stop := errors.New("stop")
	n = 0
	for _, reverse := range []bool{false, true} {
		fn := func(_, _ []byte) (bool, error) {
			n++
			return true, stop
		}
		if reverse {
			err = e.IterateReverse(cfA, nil, nil, fn)
		} else {
			err = e.Iterate(cfA, nil, nil, fn)
		}
		if !errors.Is(err, stop) {
			t.Errorf("reverse %v: the callback's error came back as %v", reverse, err)
		}
	}
	if n != 2 {
		t.Errorf("iteration went on after an error: %d calls", n)
	}
}

func testIterateReverse(t *testing.T, e db.Engine) {
	fill(t, e)
	expectRows(t, "prefix b", rows(t, e, cfA, nil, []byte("b"), true), "b3=4", "b2=3", "b1=2")
	expectRows(t, "prefix b from b2", rows(t, e, cfA, []byte("b2"), []byte("b"), true), "b2=3", "b1=2")
	expectRows(t, "prefix b from b25", rows(t, e, cfA, []byte("b25"), []byte("b"), true), "b2=3", "b1=2")
	expectRows(t, "from b", rows(t, e, cfA, []byte("b"), nil, true), "a=1")
	expectRows(t, "below everything", rows(t, e, cfA, []byte("0"), nil, true))
	expectRows(t, "prefix ff", rows(t, e, cfA, nil, []byte("\xff"), true), "\xff\xff\x00=8", "\xff\xff=7", "\xff=6")
	expectRows(t, "prefix ffff", rows(t, e, cfA, nil, []byte("\xff\xff"), true), "\xff\xff\x00=8", "\xff\xff=7")
	expectRows(t, "prefix c", rows(t, e, cfA, nil, []byte("c"), true), "c=5")
	expectRows(t, "prefix bz", rows(t, e, cfA, nil, []byte("bz"), true))
	n := 0
	err := e.IterateReverse(cfA, nil, nil, func(_, _ []byte) (bool, error) {
		n++
		return false, nil
	})
	if err != nil || n != 1 {
		t.Errorf("reverse stopped after %d rows, err %v", n, err)
	}
}

// testIterationIsConsistent: an iteration sees the rows as they were when
// it started, whatever its callback writes.
func testIterationIsConsistent(t *testing.T, e db.Engine) {
	write(t, e, cfA, put("1", "a"), put("3", "c"))
	var seen []string
	err := e.Iterate(cfA, nil, nil, func(k, v []byte) (bool, error) {
		seen = append(seen, string(k)+"="+string(v))
		if string(k) == "1" {
			write(t, e, cfA, put("2", "b"), put("3", "changed"))
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	expectRows(t, "during writes", seen, "1=a", "3=c")
	expectRows(t, "after", rows(t, e, cfA, nil, nil, false), "1=a", "2=b", "3=changed")
}
