package rocksdb

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/openexplorer/blockbook/db"
)

// The batched MultiGet (called through C pointers taken from grocksdb's
// types) gives what a point read gives, for keys in ingested runs at
// several levels, in the memtable, deleted, absent, empty, repeated and
// unsorted, and through a snapshot.
func TestBatchedGetMatchesGet(t *testing.T) {
	e := openTestEngine(t, t.TempDir())
	cf := db.CFAddressBalance
	key := func(i int) []byte { return []byte(fmt.Sprintf("k%06d", i)) }
	// Three overlapping runs (the first lands at the last level, the
	// others at level 0) and a memtable on top.
	for r := range 3 {
		name := fmt.Sprintf("run%d.sst", r)
		w, err := e.NewRun(cf, name)
		if err != nil {
			t.Fatal(err)
		}
		for i := r; i < 3000; i += 3 - r {
			v := bytes.Repeat([]byte{byte(r + 1)}, i%40) // i%40 == 0: an empty value
			if err := w.Add(key(i), v, r == 2 && i%7 == 0); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Finish(); err != nil {
			t.Fatal(err)
		}
		if ok, err := e.IngestRun(cf, name); err != nil || !ok {
			t.Fatalf("ingest %s: %v %v", name, ok, err)
		}
	}
	snap, err := e.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	b := e.NewBatch()
	for i := 0; i < 3000; i += 11 {
		b.Put(cf, key(i), []byte("memtable"))
	}
	b.Delete(cf, key(5))
	if err := e.Write(b, false); err != nil {
		t.Fatal(err)
	}
	b.Destroy()
	var keys [][]byte
	for i := 3100; i >= 0; i -= 2 { // unsorted, with absent keys past 2999
		keys = append(keys, key(i), key(i/3))
	}
	keys = append(keys, []byte{}, key(0))
	for _, r := range []struct {
		name string
		read db.EngineReader
		many func([][]byte) ([][]byte, error)
	}{
		{"engine", e, func(k [][]byte) ([][]byte, error) { return e.GetMany(cf, k) }},
		{"snapshot", snap, func(k [][]byte) ([][]byte, error) { return snap.(db.MultiGetter).GetMany(cf, k) }},
		{"snapshot visit", snap, func(k [][]byte) ([][]byte, error) {
			out := make([][]byte, len(k)) // copies of what the visit shows, nil kept nil
			err := snap.(db.ManyVisitor).VisitMany(cf, k, func(i int, v []byte) error {
				if v != nil {
					out[i] = append([]byte{}, v...)
				}
				return nil
			})
			return out, err
		}},
	} {
		got, err := r.many(keys)
		if err != nil {
			t.Fatal(err)
		}
		found := 0
		for i, k := range keys {
			want, err := r.read.Get(cf, k)
			if err != nil {
				t.Fatal(err)
			}
			if (want == nil) != (got[i] == nil) || !bytes.Equal(want, got[i]) {
				t.Fatalf("%s: key %q: batched %q (nil %v), point read %q (nil %v)", r.name, k, got[i], got[i] == nil, want, want == nil)
			}
			if want != nil {
				found++
			}
		}
		if found == 0 || found == len(keys) {
			t.Fatalf("%s: %d of %d keys found; the test needs both kinds", r.name, found, len(keys))
		}
	}
	if _, err := batchedGet(e.rdb, e.ro, e.handle(cf), nil); err != nil {
		t.Fatalf("no keys: %v", err)
	}
	// A visit stops at fn's first error and returns it.
	stop, seen := errors.New("stop"), 0
	err = snap.(db.ManyVisitor).VisitMany(cf, keys, func(i int, _ []byte) error {
		if seen++; i == 10 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || seen != 11 {
		t.Fatalf("visit stopped by fn: %v after %d values, want stop after 11", err, seen)
	}
}
