package rocksdb

import (
	"bytes"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linxGnu/grocksdb"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// A RocksDB secondary instance keeps the rows it replayed from a WAL in
// its memtable after the primary flushed that WAL into table files, and
// reads the memtable first: a key the primary changed before the flush
// reads its old value until a later WAL write to that family arrives
// (RocksDB issues 14444 and 15051). These tests flush the primary in
// each way it happens and compare every row of every family, by point
// reads and by iteration, after each catch-up.

// flushPrimary is a primary whose engine the test can flush.
type flushPrimary struct {
	e *engine
	d *db.DB
	x *db.UtxoIndex
}

func openFlushPrimary(t *testing.T, o db.Options) *flushPrimary {
	t.Helper()
	e, err := openEngine(o)
	if err != nil {
		t.Fatal(err)
	}
	d, err := db.OpenEngine(e, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return &flushPrimary{e: e, d: d, x: index(t, d)}
}

// flushEach flushes the column families one by one, as a flush of every
// family would (with atomic_flush each call is an atomic flush of one family).
func (p *flushPrimary) flushEach(t *testing.T) {
	t.Helper()
	fo := grocksdb.NewDefaultFlushOptions()
	defer fo.Destroy()
	fo.SetWait(true)
	for _, cf := range db.ColumnFamilies(bchain.ChainBitcoinType) {
		if h := p.e.handle(cf); h != nil {
			if err := p.e.rdb.FlushCF(h, fo); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// waitFlushes waits for the primary's background flushes to finish.
func (p *flushPrimary) waitFlushes(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		busy := p.e.intProperty("rocksdb.num-running-flushes", p.e.handle(db.CFDefault)) > 0
		for _, cf := range db.ColumnFamilies(bchain.ChainBitcoinType) {
			if h := p.e.handle(cf); h != nil && p.e.intProperty("rocksdb.mem-table-flush-pending", h) > 0 {
				busy = true
			}
		}
		if !busy {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the primary's flushes did not finish")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func openFlushReplica(t *testing.T, dir string) *pair {
	t.Helper()
	r, err := openPair(testOptions(dir), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// catchUp catches the replica up and requires that it reads exactly the
// primary's rows.
func catchUp(t *testing.T, what string, p *flushPrimary, r *pair) {
	t.Helper()
	if err := r.CatchUp(); err != nil {
		t.Fatalf("%s: catch-up: %v", what, err)
	}
	for _, d := range rowDiffs(t, p.e, r) {
		t.Errorf("%s: %s", what, d)
	}
}

// rowDiffs compares the replica with the primary in every column family:
// the rows an iteration visits, and a point read of every key either holds.
func rowDiffs(t *testing.T, prim *engine, r *pair) []string {
	t.Helper()
	ps, err := prim.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer ps.Release()
	rs, err := r.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Release()
	var diffs []string
	add := func(format string, args ...any) {
		if len(diffs) < 10 {
			diffs = append(diffs, fmt.Sprintf(format, args...))
		}
	}
	for _, cf := range db.ColumnFamilies(bchain.ChainBitcoinType) {
		want, got := allRows(t, ps, cf), allRows(t, rs, cf)
		keys := map[string]bool{}
		for k, v := range want {
			keys[k] = true
			if g, ok := got[k]; !ok {
				add("%s %x: missing from the replica's iteration", cf, k)
			} else if !bytes.Equal(g, v) {
				add("%s %x: iteration reads %x, the primary %x", cf, k, g, v)
			}
		}
		for k := range got {
			keys[k] = true
			if _, ok := want[k]; !ok {
				add("%s %x: only in the replica's iteration", cf, k)
			}
		}
		for k := range keys {
			g, err := rs.Get(cf, []byte(k))
			if err != nil {
				t.Fatal(err)
			}
			if v := want[k]; !bytes.Equal(g, v) {
				add("%s %x: Get reads %x, the primary %x", cf, k, g, v)
			}
		}
	}
	return diffs
}

func allRows(t *testing.T, r db.EngineReader, cf db.CF) map[string][]byte {
	t.Helper()
	rows := map[string][]byte{}
	err := r.Iterate(cf, nil, nil, func(k, v []byte) (bool, error) {
		rows[string(k)] = bytes.Clone(v)
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// (a) The primary flushes each family while open, with no write after it.
func TestReplicaAfterFlushCF(t *testing.T) {
	dir := t.TempDir()
	blocks := testChain(29)
	p := openFlushPrimary(t, testOptions(dir))
	connect(t, p.x, blocks[:10])
	r := openFlushReplica(t, dir)
	connect(t, p.x, blocks[10:])
	p.flushEach(t)
	catchUp(t, "after the flush of each family", p, r)
	catchUp(t, "again", p, r)
}

// (b) Memtables fill and the primary flushes them on its own, where the
// write that fills a memtable and the writes after the automatic flush
// touch other families than a key the primary changed just before: the
// fiat downloader's current rate while blocks are written. (Blocks alone
// filling the memtables passed without the reopen too: each block writes
// every family again, which refreshed the replayed rows.)
func TestReplicaAutomaticFlushOfAnotherFamily(t *testing.T) {
	dir := t.TempDir()
	o := testOptions(dir)
	o.WriteBufferBytes = 16 << 10
	p := openFlushPrimary(t, o)
	write := func(cf db.CF, key, value []byte) {
		t.Helper()
		b := p.e.NewBatch()
		defer b.Destroy()
		b.Put(cf, key, value)
		if err := p.e.Write(b, false); err != nil {
			t.Fatal(err)
		}
	}
	write(db.CFFiatRates, []byte("c"), []byte("rate 1"))
	r := openFlushReplica(t, dir)
	write(db.CFTransactions, []byte("tx 0"), []byte("raw"))
	catchUp(t, "first catch-up", p, r)
	write(db.CFTransactions, []byte("tx 1"), []byte("raw"))
	catchUp(t, "second catch-up", p, r) // both instances hold "rate 1"
	write(db.CFFiatRates, []byte("c"), []byte("rate 2"))
	for i := range 64 { // 64 KiB: the 16 KiB memtables fill and are flushed
		write(db.CFTransactions, fmt.Appendf(nil, "tx %d", i+2), bytes.Repeat([]byte{byte(i)}, 1<<10))
	}
	p.waitFlushes(t)
	catchUp(t, "after the automatic flushes", p, r)
	catchUp(t, "again", p, r)
}

// (c) Bulk-load rounds ingest table files over rows the replica holds in
// its memtable (RocksDB flushes the overlapped memtable first).
func TestReplicaAfterBulkIngest(t *testing.T) {
	dir := t.TempDir()
	blocks := testChain(40)
	p := openFlushPrimary(t, testOptions(dir))
	connect(t, p.x, blocks[:10])
	r := openFlushReplica(t, dir)
	catchUp(t, "before the load", p, r)
	l, err := p.x.NewBulkLoader(db.BulkOptions{RoundBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks[10:30] {
		if err := l.ConnectBlock(b); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Finish(); err != nil {
		t.Fatal(err)
	}
	catchUp(t, "after the load", p, r)
	connect(t, p.x, blocks[30:])
	catchUp(t, "after blocks written after the load", p, r)
}

// (d) The replica has caught up (both its instances hold WAL rows) when
// the primary writes and flushes between two of its catch-ups.
func TestReplicaFlushBetweenCatchUps(t *testing.T) {
	dir := t.TempDir()
	blocks := testChain(40)
	p := openFlushPrimary(t, testOptions(dir))
	connect(t, p.x, blocks[:5])
	r := openFlushReplica(t, dir)
	connect(t, p.x, blocks[5:10])
	catchUp(t, "first catch-up", p, r)
	connect(t, p.x, blocks[10:15])
	catchUp(t, "second catch-up", p, r)
	connect(t, p.x, blocks[15:20])
	p.flushEach(t)
	catchUp(t, "after writes and a flush", p, r)
	connect(t, p.x, blocks[20:25])
	catchUp(t, "after writes following the flush", p, r)
	p.flushEach(t)
	catchUp(t, "after a flush with nothing written", p, r)
	connect(t, p.x, blocks[25:])
	catchUp(t, "at the end", p, r)
}

// The replica catches up continuously while the primary loads blocks in
// bulk rounds and then writes them one by one with small memtables and
// explicit flushes; every view it makes current after the load holds
// exactly the rows of the blocks up to its tip, by iteration and by Get
// of every key any height held.
func TestReplicaConsistentUnderFlushes(t *testing.T) {
	dir := t.TempDir()
	blocks := testChain(260)
	ref := referenceStates(t, blocks)
	o := testOptions(dir)
	o.WriteBufferBytes = 16 << 10
	p := openFlushPrimary(t, o)
	connect(t, p.x, blocks[:5])
	r := openFlushReplica(t, dir)
	ro := testOptions(dir)
	ro.ReadOnly = true
	rd, err := db.OpenEngine(r, ro)
	if err != nil {
		t.Fatal(err)
	}
	var verify atomic.Bool
	var checked atomic.Int64 // views checked so far
	stop := make(chan struct{})
	type result struct {
		diffs  []string
		checks int
		errs   map[string]int
	}
	done := make(chan result, 1)
	readErr := make(chan error, 1)
	var wg sync.WaitGroup
	var once sync.Once
	halt := func() { once.Do(func() { close(stop) }); wg.Wait() }
	// Registered after the replica's Close, so it runs first: on a Fatal
	// the goroutines stop before the replica closes under them.
	t.Cleanup(halt)
	wg.Go(func() {
		var res result
		res.errs = map[string]int{}
		for {
			select {
			case <-stop:
				done <- res
				return
			case <-time.After(time.Millisecond):
			}
			if err := rd.CatchUp(); err != nil {
				res.errs[err.Error()]++
				continue
			}
			if !verify.Load() || len(res.diffs) > 0 {
				continue
			}
			res.checks++
			res.diffs = ref.check(t, rd, r)
			checked.Add(1)
		}
	})
	// Reads outside snapshots meanwhile: a catch-up closes an instance to
	// reopen it, never under a read.
	wg.Go(func() {
		for {
			select {
			case <-stop:
				readErr <- nil
				return
			case <-time.After(100 * time.Microsecond):
			}
			if _, _, err := db.ReadTip(rd); err != nil {
				readErr <- err
				return
			}
			if err := db.DumpRows(rd, db.ColumnFamilies(bchain.ChainBitcoinType), func(db.Row) error { return nil }); err != nil {
				readErr <- err
				return
			}
		}
	})
	l, err := p.x.NewBulkLoader(db.BulkOptions{RoundBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range blocks[5:60] {
		if err := l.ConnectBlock(b); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Finish(); err != nil {
		t.Fatal(err)
	}
	verify.Store(true)
	for i := 60; i < len(blocks); i++ {
		connect(t, p.x, blocks[i:i+1])
		if i%20 == 0 {
			p.flushEach(t)
		}
		if i%50 == 0 {
			// A check is slow (every row, every key any height held): let
			// one end now and then, so that views are checked while the
			// primary still writes, however loaded the machine.
			waitChecked(&checked, checked.Load()+1)
		}
	}
	time.Sleep(20 * time.Millisecond)
	halt()
	res := <-done
	if err := <-readErr; err != nil {
		t.Errorf("a read beside the catch-ups: %v", err)
	}
	t.Logf("%d views checked; failed catch-ups: %v", res.checks, res.errs)
	if res.checks == 0 {
		t.Error("no view was checked while the primary wrote")
	}
	for _, d := range res.diffs {
		t.Error(d)
	}
	p.waitFlushes(t)
	if err := rd.CatchUp(); err != nil {
		t.Fatal(err)
	}
	if d := ref.check(t, rd, r); len(d) > 0 {
		t.Errorf("at the end: %v", d)
	}
}

// waitChecked waits up to 10 s for n views to have been checked.
func waitChecked(checked *atomic.Int64, n int64) {
	for deadline := time.Now().Add(10 * time.Second); checked.Load() < n && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
}

// states is the rows of the index at each height (DumpRows: the mirrored
// families, volatile keys left out), and every key some height held.
type states struct {
	rows [][]db.Row
	keys map[db.CF]map[string]bool
}

func referenceStates(t *testing.T, blocks []*bchain.Block) *states {
	t.Helper()
	d := memIndex(t, nil)
	x := index(t, d)
	s := &states{keys: map[db.CF]map[string]bool{}}
	for _, b := range blocks {
		connect(t, x, []*bchain.Block{b})
		var rows []db.Row
		err := db.DumpRows(d, db.ColumnFamilies(bchain.ChainBitcoinType), func(r db.Row) error {
			rows = append(rows, r)
			if s.keys[r.CF] == nil {
				s.keys[r.CF] = map[string]bool{}
			}
			s.keys[r.CF][string(r.Key)] = true
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		s.rows = append(s.rows, rows)
	}
	return s
}

// check compares the replica's current view with the rows at its tip.
func (s *states) check(t *testing.T, rd *db.DB, r *pair) []string {
	snap, err := rd.Snapshot()
	if err != nil {
		return []string{err.Error()}
	}
	defer snap.Release()
	es, err := r.Snapshot() // the same instance: only this goroutine catches up
	if err != nil {
		return []string{err.Error()}
	}
	defer es.Release()
	tip, ok, err := db.ReadTip(snap)
	if err != nil || !ok || int(tip.Height) >= len(s.rows) {
		return []string{fmt.Sprintf("tip %v %v %v", tip, ok, err)}
	}
	want := map[db.CF]map[string][]byte{}
	for _, row := range s.rows[tip.Height] {
		if want[row.CF] == nil {
			want[row.CF] = map[string][]byte{}
		}
		want[row.CF][string(row.Key)] = row.Value
	}
	var diffs []string
	n := 0
	err = db.DumpRows(snap, db.ColumnFamilies(bchain.ChainBitcoinType), func(row db.Row) error {
		n++
		if v, ok := want[row.CF][string(row.Key)]; !ok || !bytes.Equal(v, row.Value) {
			diffs = append(diffs, fmt.Sprintf("at tip %d: %s %x iterates as %x, want %x (present %v)", tip.Height, row.CF, row.Key, row.Value, v, ok))
		}
		return nil
	})
	if err != nil {
		return []string{err.Error()}
	}
	if n != len(s.rows[tip.Height]) {
		diffs = append(diffs, fmt.Sprintf("at tip %d: %d rows, want %d", tip.Height, n, len(s.rows[tip.Height])))
	}
	for cf, keys := range s.keys {
		for k := range keys {
			v, err := es.Get(cf, []byte(k))
			if err != nil {
				return []string{err.Error()}
			}
			if w := want[cf][k]; !bytes.Equal(v, w) {
				diffs = append(diffs, fmt.Sprintf("at tip %d: Get %s %x reads %x, want %x", tip.Height, cf, k, v, w))
			}
		}
	}
	return diffs[:min(len(diffs), 10)]
}

// A reopened instance reads through the block cache of the one it
// replaces and finds its blocks there: RocksDB keys them by the table
// files, not by the open, so a scan after the reopen adds nothing.
func TestReplicaReopenKeepsCache(t *testing.T) {
	dir := t.TempDir()
	o := testOptions(dir)
	o.WriteBufferBytes = 16 << 10
	p := openFlushPrimary(t, o)
	connect(t, p.x, testChain(100))
	p.flushEach(t)
	p.waitFlushes(t)
	cache := grocksdb.NewLRUCache(64 << 20)
	defer cache.Destroy()
	scan := func() uint64 {
		t.Helper()
		e, err := openSecondaryEngine(testOptions(dir), t.TempDir(), cache)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = e.Close() }()
		for _, cf := range db.ColumnFamilies(bchain.ChainBitcoinType) {
			allRows(t, e, cf)
		}
		return cache.GetUsage()
	}
	first := scan()
	if first == 0 {
		t.Fatal("the scan left nothing in the block cache")
	}
	again := scan()
	t.Logf("block cache after a scan: %d bytes; after the same scan by a reopened instance: %d", first, again)
	if again > first+first/10 {
		t.Errorf("block cache %d bytes after a scan, %d after the same scan by a reopened instance: its blocks were read again", first, again)
	}
}
