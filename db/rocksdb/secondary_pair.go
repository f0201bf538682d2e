package rocksdb

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/linxGnu/grocksdb"

	"github.com/openexplorer/blockbook/db"
)

// A secondary instance has no RocksDB snapshots (iterators refuse them,
// gets ignore them) and TryCatchUpWithPrimary changes what plain reads
// see, so a query could read half of a block the primary wrote meanwhile.
// Between two catch-ups, though, a secondary instance does not change. A replica
// therefore opens two secondary instances, each with half the block cache: queries
// take their snapshots on the current one, a catch-up brings the idle one
// up to date once the queries on it have finished, then makes it current.
// A query never waits for a catch-up; a catch-up waits for queries older
// than the previous one (bounded by catchUpWait, then it is retried).
//
// TryCatchUpWithPrimary is right only while the primary appends to its
// WAL. A secondary replays the WAL into memtables of its own and reads
// them before the table files; when the primary flushes that WAL into
// table files (a full memtable, a bulk round's ingest, FlushCF), the
// secondary keeps the replayed rows until a later WAL write to the same
// column family, so a key changed just before the flush reads its old
// value (RocksDB 7.8; upstream issues 14444 and 15051), and a catch-up
// that reads the MANIFEST before a flush and the WALs after it misses
// the flushed WAL's rows. So a catch-up reuses an instance only when
// the primary's MANIFEST (which records every flush, ingest and
// compaction) is as it was before the instance's previous update;
// otherwise the instance is opened afresh, which builds its memtables
// from the WALs the new MANIFEST still needs. An update during which the
// MANIFEST changed is done again before the instance is made current.
// The block cache outlives the reopened instances: RocksDB keys its
// blocks by the table files' own identity, so they stay warm.

// catchUpWait bounds how long a catch-up waits for queries on the idle
// instance to release their snapshots.
const catchUpWait = 2 * time.Second

// ErrCatchUpBusy means a catch-up was skipped because queries still held
// snapshots of the instance to update; the next attempt retries.
var ErrCatchUpBusy = errors.New("rocksdb: catch-up postponed, long queries hold the previous view")

// ErrCatchUpMoving means a catch-up was skipped because the primary's
// MANIFEST changed during each of updateTries updates; the next attempt
// retries.
var ErrCatchUpMoving = errors.New("rocksdb: catch-up postponed, the primary kept changing its table files")

// updateTries bounds the updates of the idle instance in one catch-up.
const updateTries = 3

// pair is the two secondary instances of a replica as one db.Engine.
type pair struct {
	o    db.Options
	dirs [2]string
	// seen is the primary's MANIFEST state (manifestState) read before
	// each instance's last update: a catch-up reuses the instance only
	// while it is unchanged.
	seen   [2]string
	caches [2]*grocksdb.Cache // each instance's block cache, kept across reopens
	inst   [2]*engine
	refs   [2]atomic.Int64 // open snapshots per instance
	cur    atomic.Int32    // index of the instance new reads use
	mu     sync.Mutex      // serializes catch-ups
	last   string          // fingerprint at the last catch-up
}

var _ db.Engine = (*pair)(nil)

func openPair(o db.Options, dir string) (*pair, error) {
	if o.CacheBytes <= 0 {
		o.CacheBytes = 64 << 20
	}
	o.CacheBytes /= 2
	p := &pair{o: o}
	for i := range p.inst {
		p.dirs[i] = filepath.Join(dir, fmt.Sprintf("instance%d", i))
		p.caches[i] = grocksdb.NewLRUCache(uint64(o.CacheBytes))
		p.seen[i] = manifestState(o.Path)
		e, err := openSecondaryEngine(o, p.dirs[i], p.caches[i])
		if err != nil {
			_ = p.Close()
			return nil, err
		}
		p.inst[i] = e
	}
	return p, nil
}

// pinned runs fn on the current instance, pinned like a snapshot's: a
// catch-up may close an instance (to open it afresh) once it is idle, so
// no read uses one unpinned.
func (p *pair) pinned(fn func(e *engine) error) error {
	s, err := p.Snapshot()
	if err != nil {
		return err
	}
	defer s.Release()
	return fn(s.(*pairSnapshot).e)
}

// CatchUp updates the idle instance and makes it the current one. When
// the primary's WAL and MANIFEST files are as they were at the last
// catch-up, the current instance is up to date and nothing is done (a
// directory read instead of two RocksDB catch-ups).
func (p *pair) CatchUp() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	fp, err := fingerprint(p.Path())
	if err != nil {
		return err
	}
	if fp == p.last && fp != "" {
		return nil
	}
	idle := 1 - p.cur.Load()
	deadline := time.Now().Add(catchUpWait)
	for p.refs[idle].Load() > 0 {
		if time.Now().After(deadline) {
			return ErrCatchUpBusy
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := p.update(idle); err != nil {
		return err
	}
	p.cur.Store(idle)
	p.last = fp
	return nil
}

// update brings instance i (idle: refs[i] is 0 and stays so until it is
// made current) to what the primary has written: a RocksDB catch-up while
// the primary's MANIFEST is as it was before the instance's previous
// update, a fresh open otherwise. A catch-up during which the MANIFEST
// changed may have applied a flush over the memtables, and an open
// during which a WAL was deleted may have read the MANIFEST from before
// a flush and missed that WAL's rows: either is done again (an open).
func (p *pair) update(i int32) error {
	for range updateTries {
		before, wals := manifestState(p.o.Path), walFiles(p.o.Path)
		if before == "" || before != p.seen[i] {
			e, err := openSecondaryEngine(p.o, p.dirs[i], p.caches[i])
			if err != nil {
				return fmt.Errorf("rocksdb: reopen the replica's instance: %w", err)
			}
			old := p.inst[i]
			p.inst[i] = e
			_ = old.Close()
			// A MANIFEST changed meanwhile is caught up with by the next
			// update's open: seen stays the state from before this one.
			p.seen[i] = before
			if !walDeleted(wals, walFiles(p.o.Path)) {
				return nil
			}
			p.seen[i] = ""
			continue
		}
		if err := p.inst[i].CatchUp(); err != nil {
			return err
		}
		if manifestState(p.o.Path) == before {
			return nil
		}
		p.seen[i] = "" // the next try opens it afresh
	}
	return ErrCatchUpMoving
}

// fingerprint names the state of the primary's WAL and MANIFEST files
// (names, sizes, modification times): every write the primary commits
// changes it.
func fingerprint(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("rocksdb: read the primary's directory: %w", err)
	}
	var b strings.Builder
	for _, e := range entries {
		n := e.Name()
		if !strings.HasSuffix(n, ".log") && !strings.HasPrefix(n, "MANIFEST-") && n != "CURRENT" {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return "", nil // gone meanwhile (a WAL recycled): catch up
		}
		fmt.Fprintf(&b, "%s:%d:%d;", n, info.Size(), info.ModTime().UnixNano())
	}
	return b.String(), nil
}

func (p *pair) Get(cf db.CF, key []byte) (v []byte, err error) {
	err = p.pinned(func(e *engine) error {
		v, err = e.Get(cf, key)
		return err
	})
	return v, err
}

func (p *pair) Iterate(cf db.CF, start, prefix []byte, fn func(k, v []byte) (bool, error)) error {
	return p.pinned(func(e *engine) error { return e.Iterate(cf, start, prefix, fn) })
}

func (p *pair) IterateReverse(cf db.CF, start, prefix []byte, fn func(k, v []byte) (bool, error)) error {
	return p.pinned(func(e *engine) error { return e.IterateReverse(cf, start, prefix, fn) })
}

// NewBatch returns a batch that no write accepts (Write refuses every
// batch); it holds nothing, so it outlives any instance.
func (p *pair) NewBatch() db.EngineBatch { return &refusedBatch{} }

// refusedBatch counts the changes put into it and keeps none.
type refusedBatch struct{ n int }

func (b *refusedBatch) Put(db.CF, []byte, []byte) { b.n++ }
func (b *refusedBatch) Delete(db.CF, []byte)      { b.n++ }
func (b *refusedBatch) Len() int                  { return b.n }
func (b *refusedBatch) Destroy()                  {}

func (p *pair) Write(db.EngineBatch, bool) error { return errSecondaryWrite }

// Snapshot pins the current instance until Release: no catch-up touches
// it meanwhile, so its plain reads are a consistent view. It re-checks the
// instance is still current after counting itself, so that a catch-up
// that started meanwhile either sees the count or is not on this one.
func (p *pair) Snapshot() (db.EngineSnapshot, error) {
	for {
		i := p.cur.Load()
		p.refs[i].Add(1)
		if p.cur.Load() != i {
			p.refs[i].Add(-1)
			continue
		}
		if p.inst[i].closed.Load() {
			p.refs[i].Add(-1)
			return nil, db.ErrClosed
		}
		return &pairSnapshot{e: p.inst[i], ref: &p.refs[i]}, nil
	}
}

// pairSnapshot is a pinned instance.
type pairSnapshot struct {
	e        *engine
	ref      *atomic.Int64
	released atomic.Bool
}

func (s *pairSnapshot) Get(cf db.CF, key []byte) ([]byte, error) {
	if s.released.Load() {
		return nil, errReleased
	}
	return s.e.Get(cf, key)
}

func (s *pairSnapshot) Iterate(cf db.CF, start, prefix []byte, fn func(k, v []byte) (bool, error)) error {
	if s.released.Load() {
		return errReleased
	}
	return s.e.Iterate(cf, start, prefix, fn)
}

func (s *pairSnapshot) IterateReverse(cf db.CF, start, prefix []byte, fn func(k, v []byte) (bool, error)) error {
	if s.released.Load() {
		return errReleased
	}
	return s.e.IterateReverse(cf, start, prefix, fn)
}

func (s *pairSnapshot) Release() {
	if !s.released.Swap(true) {
		s.ref.Add(-1)
	}
}

func (p *pair) NewRun(db.CF, string) (db.RunWriter, error) { return nil, errSecondaryWrite }
func (p *pair) SyncRuns() error                            { return errSecondaryWrite }
func (p *pair) IngestRun(db.CF, string) (bool, error)      { return false, errSecondaryWrite }
func (p *pair) ClearRuns() error                           { return errSecondaryWrite }
func (p *pair) Size() (n int64) {
	_ = p.pinned(func(e *engine) error { n = e.Size(); return nil })
	return n
}
func (p *pair) Compact(db.CF) error                    { return errSecondaryWrite }
func (p *pair) CancelCompaction()                      {}
func (p *pair) TuneForLoad(db.CF, db.LoadTuning) error { return errSecondaryWrite }
func (p *pair) Path() string                           { return p.o.Path }

func (p *pair) Level0Files(cf db.CF) (n int, ok bool) {
	_ = p.pinned(func(e *engine) error { n, ok = e.Level0Files(cf); return nil })
	return n, ok
}

// SetCacheBytes resizes the instances' block caches to n together.
func (p *pair) SetCacheBytes(n int64) {
	if n > 0 {
		p.caches[0].SetCapacity(uint64(n / 2))
		p.caches[1].SetCapacity(uint64(n / 2))
	}
}

func (p *pair) Close() error {
	var errs []error
	for i, e := range p.inst {
		if e != nil {
			errs = append(errs, e.Close())
		}
		if p.caches[i] != nil {
			p.caches[i].Destroy()
			p.caches[i] = nil
		}
	}
	return errors.Join(errs...)
}

// walFiles lists the primary's WAL files ("" entries when the directory
// cannot be read: then every open is retried).
func walFiles(dir string) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return []string{""}
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".log") {
			names = append(names, e.Name())
		}
	}
	return names
}

// walDeleted reports whether a WAL file listed before is gone after.
func walDeleted(before, after []string) bool {
	for _, n := range before {
		if n == "" || !slices.Contains(after, n) {
			return true
		}
	}
	return false
}

// manifestState names the primary's MANIFEST (its CURRENT file) and that
// file's size: RocksDB appends a record to it for every flush, ingest and
// compaction, and starts a new one when the primary opens. "" when it
// cannot be read.
func manifestState(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "CURRENT"))
	if err != nil {
		return ""
	}
	name := strings.TrimSpace(string(b))
	info, err := os.Stat(filepath.Join(dir, name))
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%s:%d", name, info.Size())
}
