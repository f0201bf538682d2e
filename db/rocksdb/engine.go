package rocksdb

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/linxGnu/grocksdb"

	"github.com/openexplorer/blockbook/db"
)

// engine is a RocksDB database as a db.Engine. It keeps no lock of its own:
// db.DB never runs Close concurrently with other calls, and after Close
// every call returns db.ErrClosed.
type engine struct {
	rdb     *grocksdb.DB
	handles [db.NumCF]*grocksdb.ColumnFamilyHandle // nil: a family not held
	opts    *options
	ro      *grocksdb.ReadOptions
	roCold  *grocksdb.ReadOptions // ro without filling the block cache
	wo      *grocksdb.WriteOptions
	woSync  *grocksdb.WriteOptions
	path    string
	closed  atomic.Bool
	// secondary is set for a RocksDB secondary instance (a replica): it
	// follows another process's writes and refuses every write of its own.
	secondary bool
	// loadRuns: the load's compression is on for the family, so its runs
	// are written for the compaction after the load to rewrite (forRun).
	loadRuns [db.NumCF]atomic.Bool
	// tuning is each family's load tuning (TuneForLoad), under tuningMu.
	tuningMu sync.Mutex
	tuning   [db.NumCF]db.LoadTuning
}

var _ db.Engine = (*engine)(nil)

func newEngine(rdb *grocksdb.DB, opts *options, path string) *engine {
	woSync := grocksdb.NewDefaultWriteOptions()
	woSync.SetSync(true)
	roCold := grocksdb.NewDefaultReadOptions()
	roCold.SetFillCache(false)
	return &engine{rdb: rdb, opts: opts, path: path, ro: grocksdb.NewDefaultReadOptions(), roCold: roCold,
		wo: grocksdb.NewDefaultWriteOptions(), woSync: woSync}
}

// handle returns the column family's handle, nil when it is not held.
func (e *engine) handle(cf db.CF) *grocksdb.ColumnFamilyHandle {
	if cf < 0 || int(cf) >= db.NumCF {
		return nil
	}
	return e.handles[cf]
}

func (e *engine) Get(cf db.CF, key []byte) ([]byte, error) { return e.get(e.ro, cf, key) }

// RocksDB reads many keys in one call, and shows them uncopied.
var (
	_ db.MultiGetter = (*engine)(nil)
	_ db.MultiGetter = (*snapshot)(nil)
	_ db.ManyVisitor = (*snapshot)(nil)
)

func (e *engine) GetMany(cf db.CF, keys [][]byte) ([][]byte, error) {
	return e.getMany(e.ro, cf, keys)
}

// GetManyUncached implements db.UncachedGetter. Filter and index blocks
// missing from the cache are not added either; RocksDB puts a table's into
// the cache when it opens the table, and reads that fill nothing evict
// nothing.
func (e *engine) GetManyUncached(cf db.CF, keys [][]byte) ([][]byte, error) {
	return e.getMany(e.roCold, cf, keys)
}

// getMany reads keys with one MultiGet: one call into C for all of them.
func (e *engine) getMany(ro *grocksdb.ReadOptions, cf db.CF, keys [][]byte) ([][]byte, error) {
	if e.closed.Load() {
		return nil, db.ErrClosed
	}
	out := make([][]byte, len(keys))
	h := e.handle(cf)
	if h == nil || len(keys) == 0 {
		return out, nil // an off-chain family a read-only open could not add
	}
	return batchedGet(e.rdb, ro, h, keys)
}

func (e *engine) get(ro *grocksdb.ReadOptions, cf db.CF, key []byte) ([]byte, error) {
	if e.closed.Load() {
		return nil, db.ErrClosed
	}
	h := e.handle(cf)
	if h == nil {
		return nil, nil // an off-chain family a read-only open could not add
	}
	s, err := e.rdb.GetCF(ro, h, key)
	if err != nil {
		return nil, err
	}
	defer s.Free()
	if !s.Exists() {
		return nil, nil
	}
	return slices.Clone(s.Data()), nil
}

func (e *engine) Iterate(cf db.CF, start, prefix []byte, fn func(k, v []byte) (bool, error)) error {
	return e.iterate(e.ro, cf, start, prefix, false, fn)
}

func (e *engine) IterateReverse(cf db.CF, start, prefix []byte, fn func(k, v []byte) (bool, error)) error {
	return e.iterate(e.ro, cf, start, prefix, true, fn)
}

// iterate walks cf from the seek position in either direction until fn
// stops or a key lacks prefix.
func (e *engine) iterate(ro *grocksdb.ReadOptions, cf db.CF, start, prefix []byte, reverse bool, fn func(k, v []byte) (bool, error)) error {
	if e.closed.Load() {
		return db.ErrClosed
	}
	h := e.handle(cf)
	if h == nil {
		return nil // an off-chain family a read-only open could not add
	}
	it := e.rdb.NewIteratorCF(ro, h)
	defer it.Close()
	if reverse {
		seekLast(it, start, prefix)
	} else {
		seekFirst(it, start, prefix)
	}
	done, err := visitBatched(it, prefix, reverse, fn)
	if err != nil || !done {
		return err
	}
	return it.Err()
}

func seekFirst(it *grocksdb.Iterator, start, prefix []byte) {
	if start == nil {
		start = prefix
	}
	if start == nil {
		it.SeekToFirst()
	} else {
		it.Seek(start)
	}
}

// seekLast positions on the last key <= start, or the last key with
// prefix when start is nil.
func seekLast(it *grocksdb.Iterator, start, prefix []byte) {
	if start != nil {
		it.SeekForPrev(start)
		return
	}
	end := db.PrefixEnd(prefix)
	if end == nil {
		it.SeekToLast()
		return
	}
	it.SeekForPrev(end)
	if it.Valid() {
		k := it.Key()
		atEnd := string(k.Data()) == string(end)
		k.Free()
		if atEnd {
			it.Prev()
		}
	}
}

// batch is a RocksDB write batch; a change to a family the engine does not
// hold is remembered and fails the write.
type batch struct {
	e   *engine
	wb  *grocksdb.WriteBatch
	err error
}

func (e *engine) NewBatch() db.EngineBatch { return &batch{e: e, wb: grocksdb.NewWriteBatch()} }

func (b *batch) Put(cf db.CF, key, value []byte) {
	if h := b.e.handle(cf); h != nil {
		b.wb.PutCF(h, key, value)
	} else if b.err == nil {
		b.err = fmt.Errorf("rocksdb: write to column family %s, not open", cf)
	}
}

func (b *batch) Delete(cf db.CF, key []byte) {
	if h := b.e.handle(cf); h != nil {
		b.wb.DeleteCF(h, key)
	} else if b.err == nil {
		b.err = fmt.Errorf("rocksdb: delete in column family %s, not open", cf)
	}
}

func (b *batch) Len() int { return b.wb.Count() }

func (b *batch) Destroy() {
	if b.wb != nil {
		b.wb.Destroy()
		b.wb = nil
	}
}

func (e *engine) Write(eb db.EngineBatch, sync bool) error {
	b, ok := eb.(*batch)
	if !ok || b.e != e {
		return fmt.Errorf("rocksdb: write of a batch of another engine (%T)", eb)
	}
	if b.err != nil {
		return b.err
	}
	if e.closed.Load() {
		return db.ErrClosed
	}
	if e.secondary {
		return errSecondaryWrite
	}
	wo := e.wo
	if sync {
		wo = e.woSync
	}
	return noSpace(e.rdb.Write(wo, b.wb))
}

// noSpace marks RocksDB's out-of-space errors (a flush or compaction that
// ran out of room makes later writes fail with it until RocksDB recovers
// on its own once there is space) as db.ErrDiskFull, so that the sync
// worker pauses and retries instead of giving up.
func noSpace(err error) error {
	if err != nil && strings.Contains(err.Error(), "No space left on device") {
		return fmt.Errorf("%w: %w", db.ErrDiskFull, err)
	}
	return err
}

type snapshot struct {
	e    *engine
	snap *grocksdb.Snapshot // nil once released
	ro   *grocksdb.ReadOptions
}

func (e *engine) Snapshot() (db.EngineSnapshot, error) {
	if e.closed.Load() {
		return nil, db.ErrClosed
	}
	s := &snapshot{e: e, snap: e.rdb.NewSnapshot(), ro: grocksdb.NewDefaultReadOptions()}
	s.ro.SetSnapshot(s.snap)
	return s, nil
}

func (s *snapshot) Get(cf db.CF, key []byte) ([]byte, error) {
	if s.snap == nil {
		return nil, errReleased
	}
	return s.e.get(s.ro, cf, key)
}

func (s *snapshot) GetMany(cf db.CF, keys [][]byte) ([][]byte, error) {
	if s.snap == nil {
		return nil, errReleased
	}
	return s.e.getMany(s.ro, cf, keys)
}

// VisitMany implements db.ManyVisitor.
func (s *snapshot) VisitMany(cf db.CF, keys [][]byte, fn func(i int, v []byte) error) error {
	if s.snap == nil {
		return errReleased
	}
	e := s.e
	if e.closed.Load() {
		return db.ErrClosed
	}
	h := e.handle(cf)
	if h == nil {
		for i := range keys { // an off-chain family a read-only open could not add
			if err := fn(i, nil); err != nil {
				return err
			}
		}
		return nil
	}
	return batchedVisit(e.rdb, s.ro, h, keys, fn)
}

func (s *snapshot) Iterate(cf db.CF, start, prefix []byte, fn func(k, v []byte) (bool, error)) error {
	if s.snap == nil {
		return errReleased
	}
	return s.e.iterate(s.ro, cf, start, prefix, false, fn)
}

func (s *snapshot) IterateReverse(cf db.CF, start, prefix []byte, fn func(k, v []byte) (bool, error)) error {
	if s.snap == nil {
		return errReleased
	}
	return s.e.iterate(s.ro, cf, start, prefix, true, fn)
}

// Release frees the snapshot; after Close the database has freed it.
func (s *snapshot) Release() {
	if s.snap == nil {
		return
	}
	if !s.e.closed.Load() {
		s.e.rdb.ReleaseSnapshot(s.snap)
	}
	s.snap = nil
	s.ro.Destroy()
}
