package dbtest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

func testSnapshotIsolation(t *testing.T, e db.Engine) {
	write(t, e, cfA, put("keep", "1"), put("change", "old"), put("delete", "x"))
	s, err := e.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	write(t, e, cfA, put("change", "new"), del("delete"), put("added", "y"))
	write(t, e, cfB, put("elsewhere", "z"))
	stageAndIngest(t, e, cfA, "after-snapshot", put("ingested", "i"), del("keep"))

	expect(t, s, cfA, "change", "old", false)
	expect(t, s, cfA, "delete", "x", false)
	expect(t, s, cfA, "keep", "1", false)
	expect(t, s, cfA, "added", "", true)
	expect(t, s, cfA, "ingested", "", true)
	expect(t, s, cfB, "elsewhere", "", true)
	expectRows(t, "snapshot", rows(t, s, cfA, nil, nil, false), "change=old", "delete=x", "keep=1")
	expectRows(t, "snapshot reverse", rows(t, s, cfA, nil, nil, true), "keep=1", "delete=x", "change=old")
	expectRows(t, "live", rows(t, e, cfA, nil, nil, false), "added=y", "change=new", "ingested=i")
	s.Release()
	s.Release() // twice is harmless
}

// testConcurrentSnapshots: writers replace two keys together; every
// snapshot and every iteration sees them equal.
func testConcurrentSnapshots(t *testing.T, e db.Engine) {
	write(t, e, cfA, put("x", "0"), put("y", "0"))
	var wg sync.WaitGroup
	done := make(chan struct{})
	errs := make(chan error, 4)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				if err := checkPair(e); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := 1; i <= 300; i++ {
		v := fmt.Sprint(i)
		write(t, e, cfA, put("x", v), put("y", v))
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func checkPair(e db.Engine) error {
	s, err := e.Snapshot()
	if err != nil {
		return err
	}
	defer s.Release()
	x, err := s.Get(cfA, []byte("x"))
	if err != nil {
		return err
	}
	y, err := s.Get(cfA, []byte("y"))
	if err != nil {
		return err
	}
	if string(x) != string(y) {
		return fmt.Errorf("snapshot saw x=%s y=%s", x, y)
	}
	var vals []string
	err = e.Iterate(cfA, nil, nil, func(_, v []byte) (bool, error) {
		vals = append(vals, string(v))
		return true, nil
	})
	if err != nil {
		return err
	}
	if len(vals) != 2 || vals[0] != vals[1] {
		return fmt.Errorf("iteration saw %q", vals)
	}
	return nil
}

func stage(t *testing.T, e db.Engine, cf db.CF, name string, changes ...kv) {
	t.Helper()
	w, err := e.NewRun(cf, name)
	if err != nil {
		t.Fatalf("new run: %v", err)
	}
	for _, c := range changes {
		var err error
		if c.merge {
			err = w.Merge([]byte(c.k), []byte(c.v))
		} else {
			err = w.Add([]byte(c.k), []byte(c.v), c.del)
		}
		if err != nil {
			t.Fatalf("run %s add %q: %v", name, c.k, err)
		}
	}
	if err := w.Finish(); err != nil {
		t.Fatalf("finish run %s: %v", name, err)
	}
}

func stageAndIngest(t *testing.T, e db.Engine, cf db.CF, name string, changes ...kv) {
	t.Helper()
	stage(t, e, cf, name, changes...)
	if err := e.SyncRuns(); err != nil {
		t.Fatal(err)
	}
	if ok, err := e.IngestRun(cf, name); err != nil || !ok {
		t.Fatalf("ingest %s: %v %v", name, ok, err)
	}
}

func testIngestRuns(t *testing.T, e db.Engine) {
	write(t, e, cfA, put("a", "old"), put("b", "old"), put("z", "old"))
	write(t, e, cfB, put("a", "other family"))
	stage(t, e, cfA, "1.sst", put("a", "new"), del("b"), put("c", "added"), del("never-there"))
	stage(t, e, cfB, "2.sst", put("b", "B"))
	if err := e.SyncRuns(); err != nil {
		t.Fatal(err)
	}
	// Staged is not visible.
	expectRows(t, "before ingest", rows(t, e, cfA, nil, nil, false), "a=old", "b=old", "z=old")
	if ok, err := e.IngestRun(cfA, "1.sst"); err != nil || !ok {
		t.Fatalf("ingest: %v %v", ok, err)
	}
	expectRows(t, "after ingest", rows(t, e, cfA, nil, nil, false), "a=new", "c=added", "z=old")
	expectRows(t, "other family untouched", rows(t, e, cfB, nil, nil, false), "a=other family")
	// A run ingested before is no longer staged.
	if ok, err := e.IngestRun(cfA, "1.sst"); err != nil || ok {
		t.Fatalf("second ingest of a run: %v %v", ok, err)
	}
	if ok, err := e.IngestRun(cfA, "unknown.sst"); err != nil || ok {
		t.Fatalf("ingest of a run never staged: %v %v", ok, err)
	}
	// ClearRuns discards what is still staged.
	if err := e.ClearRuns(); err != nil {
		t.Fatal(err)
	}
	if ok, err := e.IngestRun(cfB, "2.sst"); err != nil || ok {
		t.Fatalf("ingest of a cleared run: %v %v", ok, err)
	}
	expectRows(t, "cleared run", rows(t, e, cfB, nil, nil, false), "a=other family")
	// Runs written concurrently.
	var wg sync.WaitGroup
	for i, cf := range []db.CF{cfA, cfB} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := e.NewRun(cf, fmt.Sprintf("c%d.sst", i))
			if err != nil {
				t.Error(err)
				return
			}
			for j := range 1000 {
				if err := w.Add(fmt.Appendf(nil, "k%04d", j), []byte("v"), false); err != nil {
					t.Error(err)
					w.Abort()
					return
				}
			}
			if err := w.Finish(); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	for i, cf := range []db.CF{cfA, cfB} {
		if ok, err := e.IngestRun(cf, fmt.Sprintf("c%d.sst", i)); err != nil || !ok {
			t.Fatalf("ingest of a concurrent run: %v %v", ok, err)
		}
		if n := len(rows(t, e, cf, nil, []byte("k"), false)); n != 1000 {
			t.Errorf("%s: %d rows of a concurrent run", cf, n)
		}
	}
	if err := e.ClearRuns(); err != nil {
		t.Fatal(err)
	}
}

func testRunRules(t *testing.T, e db.Engine) {
	w, err := e.NewRun(cfA, "order.sst")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add([]byte("b"), []byte("1"), false); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"b", "a"} {
		if err := w.Add([]byte(k), []byte("2"), false); err == nil {
			t.Errorf("key %q after b accepted", k)
		}
	}
	w.Abort()
	w.Abort() // twice is harmless
	w, err = e.NewRun(cfA, "empty.sst")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Finish(); err == nil {
		t.Error("an empty run finished")
	}
	w.Abort()
	if _, err := e.NewRun(cfMissing, "missing.sst"); err == nil {
		t.Error("a run for a family not held was accepted")
	}
	if err := e.ClearRuns(); err != nil {
		t.Fatal(err)
	}
}

func testMaintenance(t *testing.T, e db.Engine) {
	write(t, e, cfA, put("k", "some value"))
	if n := e.Size(); n <= 0 {
		t.Errorf("size %d after a write", n)
	}
	for _, cf := range db.ColumnFamilies(bchain.ChainBitcoinType) {
		if err := e.Compact(cf); err != nil {
			t.Errorf("compact %s: %v", cf, err)
		}
		if n, ok := e.Level0Files(cf); ok && n < 0 {
			t.Errorf("%s: %d files at level 0", cf, n)
		}
		for _, lt := range []db.LoadTuning{{DeferCompaction: true}, {Compression: true}, {SmallBlocks: true},
			{DeferCompaction: true, Compression: true, SmallBlocks: true}, {}} {
			if err := e.TuneForLoad(cf, lt); err != nil {
				t.Errorf("load tuning %+v of %s: %v", lt, cf, err)
			}
		}
	}
	e.SetCacheBytes(1 << 20)
	expect(t, e, cfA, "k", "some value", false)
	_ = e.Path()
}

func testClosed(t *testing.T, e db.Engine) {
	write(t, e, cfA, put("k", "v"))
	s, err := e.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	b := e.NewBatch()
	b.Put(cfA, []byte("late"), []byte("v"))
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	none := func(_, _ []byte) (bool, error) { return true, nil }
	for what, err := range map[string]error{
		"get":              second(e.Get(cfA, []byte("k"))),
		"iterate":          e.Iterate(cfA, nil, nil, none),
		"iterate reverse":  e.IterateReverse(cfA, nil, nil, none),
		"write":            e.Write(b, false),
		"snapshot":         second(e.Snapshot()),
		"new run":          second(e.NewRun(cfA, "late.sst")),
		"sync runs":        e.SyncRuns(),
		"ingest":           second(e.IngestRun(cfA, "late.sst")),
		"clear runs":       e.ClearRuns(),
		"load tuning":      e.TuneForLoad(cfA, db.LoadTuning{DeferCompaction: true, Compression: true, SmallBlocks: true}),
		"snapshot get":     second(s.Get(cfA, []byte("k"))),
		"snapshot iterate": s.Iterate(cfA, nil, nil, none),
	} {
		if !errors.Is(err, db.ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", what, err)
		}
	}
	s.Release() // after Close: frees without touching the engine
	b.Destroy()
	if n := e.Size(); n != 0 {
		t.Errorf("size %d after Close", n)
	}
	e.CancelCompaction()
	e.SetCacheBytes(1 << 20)
}

func second[T any](_ T, err error) error { return err }

// testDB checks what package db builds over the engine: a new index, its
// snapshots, and ErrClosed from everything once closed.
func testDB(t *testing.T, e db.Engine) {
	d, err := db.OpenEngine(e, db.Options{ChainType: bchain.ChainBitcoinType, Coin: "Test", Network: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, ok, err := db.ReadTip(d); ok || err != nil {
		t.Fatalf("new index has a tip: %v %v", ok, err)
	}
	txid := bchain.Hash{1}
	if err := d.WriteCachedTx(txid, []byte("raw1")); err != nil {
		t.Fatal(err)
	}
	s, err := d.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WriteCachedTx(txid, []byte("raw2")); err != nil {
		t.Fatal(err)
	}
	if raw, err := db.ReadCachedTx(s, txid); err != nil || string(raw) != "raw1" {
		t.Errorf("snapshot reads %q, %v", raw, err)
	}
	if raw, err := db.ReadCachedTx(d, txid); err != nil || string(raw) != "raw2" {
		t.Errorf("live reads %q, %v", raw, err)
	}
	if d.Writes() != 0 {
		t.Errorf("cache writes counted as block writes: %d", d.Writes())
	}
	d.Close()
	for what, err := range map[string]error{
		"read":          third(db.ReadTip(d)),
		"snapshot read": second(db.ReadCachedTx(s, txid)),
		"snapshot":      second(d.Snapshot()),
		"write":         d.WriteCachedTx(txid, nil),
		"fiat":          second(d.LastFiatTicker("")),
	} {
		if !errors.Is(err, db.ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", what, err)
		}
	}
	s.Release()
	if d.Size() != 0 || len(d.FilesAtLevel0()) != 0 {
		t.Error("a closed index reports a size or files")
	}
	d.Close() // twice is harmless
}

func third[T, U any](_ T, _ U, err error) error { return err }

// testGetMany checks an engine's MultiGet (where it has one) against Get,
// on the engine and on a snapshot taken before later writes.
func testGetMany(t *testing.T, e db.Engine) {
	m, ok := e.(db.MultiGetter)
	if !ok {
		t.Skip("the engine reads one key per call (no db.MultiGetter)")
	}
	write(t, e, cfA, put("a", "1"), put("c", "3"), put("e", ""))
	s, err := e.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	write(t, e, cfA, put("b", "2"), del("c"))
	keys := [][]byte{[]byte("e"), []byte("b"), []byte("zz"), []byte("a"), []byte("c"), []byte("a")}
	check := func(name string, r db.EngineReader, got [][]byte) {
		t.Helper()
		if len(got) != len(keys) {
			t.Fatalf("%s: %d values for %d keys", name, len(got), len(keys))
		}
		for i, k := range keys {
			want, err := r.Get(cfA, k)
			if err != nil {
				t.Fatal(err)
			}
			if (want == nil) != (got[i] == nil) || string(want) != string(got[i]) {
				t.Fatalf("%s: key %q: GetMany %q (nil %v), Get %q (nil %v)", name, k, got[i], got[i] == nil, want, want == nil)
			}
		}
	}
	got, err := m.GetMany(cfA, keys)
	if err != nil {
		t.Fatal(err)
	}
	check("engine", e, got)
	sm, ok := s.(db.MultiGetter)
	if !ok {
		t.Fatal("the engine has GetMany but its snapshot does not")
	}
	if got, err = sm.GetMany(cfA, keys); err != nil {
		t.Fatal(err)
	}
	check("snapshot", s, got)
	if string(got[1]) != "" || got[1] != nil || string(got[4]) != "3" {
		t.Fatalf("snapshot sees later writes: b=%q c=%q", got[1], got[4])
	}
	if u, ok := e.(db.UncachedGetter); ok {
		if got, err = u.GetManyUncached(cfA, keys); err != nil {
			t.Fatal(err)
		}
		check("uncached", e, got)
	}
}
