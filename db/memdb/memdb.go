// Package memdb is an in-memory engine for db: the index code and the
// queries run on it in unit tests without RocksDB. It keeps every column
// family in a persistent treap (tree.go), so snapshots are isolated from
// later writes at no copying cost, and passes the db/dbtest suite like
// the RocksDB engine. Nothing survives Close.
package memdb

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/openexplorer/blockbook/db"
)

// Open opens a new, empty in-memory index (o.Path is only reported back).
func Open(o db.Options) (*db.DB, error) {
	cfs := db.ColumnFamilies(o.ChainType)
	if cfs == nil {
		return nil, fmt.Errorf("memdb: no column families for %v", o.ChainType)
	}
	return db.OpenEngine(NewEngine(o.Path, cfs), o)
}

// Engine is an in-memory db.Engine.
type Engine struct {
	mu     sync.RWMutex // guards everything below; trees are immutable
	roots  [db.NumCF]*node
	held   [db.NumCF]bool
	bytes  int64
	runs   map[string]*run // finished staged runs by name
	closed bool
	path   string
}

var _ db.Engine = (*Engine)(nil)

var errReleased = errors.New("memdb: snapshot released")

// NewEngine returns an empty engine holding the column families cfs.
func NewEngine(path string, cfs []db.CF) *Engine {
	e := &Engine{runs: make(map[string]*run), path: path}
	for _, cf := range cfs {
		if holds(cf) {
			e.held[cf] = true
		}
	}
	return e
}

func holds(cf db.CF) bool { return cf >= 0 && int(cf) < db.NumCF }

// root returns the current tree of cf (nil for a family not held).
func (e *Engine) root(cf db.CF) (*node, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return nil, db.ErrClosed
	}
	if !holds(cf) {
		return nil, nil
	}
	return e.roots[cf], nil
}

// Get implements db.EngineReader.
func (e *Engine) Get(cf db.CF, key []byte) ([]byte, error) {
	r, err := e.root(cf)
	if err != nil {
		return nil, err
	}
	return getFrom(r, key), nil
}

func getFrom(root *node, key []byte) []byte {
	if n := lookup(root, key); n != nil {
		return slices.Clone(n.val)
	}
	return nil
}

// Iterate implements db.EngineReader.
func (e *Engine) Iterate(cf db.CF, start, prefix []byte, fn func(k, v []byte) (bool, error)) error {
	r, err := e.root(cf)
	if err != nil {
		return err
	}
	return ascend(r, start, prefix, fn)
}

// IterateReverse implements db.EngineReader.
func (e *Engine) IterateReverse(cf db.CF, start, prefix []byte, fn func(k, v []byte) (bool, error)) error {
	r, err := e.root(cf)
	if err != nil {
		return err
	}
	return descend(r, start, prefix, fn)
}

type op struct {
	cf       db.CF
	key, val []byte
	del      bool
	merge    bool // val is a merge operand (db.CF.Merger)
}

// batch copies the changes, as callers reuse their buffers.
type batch struct{ ops []op }

// NewBatch implements db.Engine.
func (e *Engine) NewBatch() db.EngineBatch { return &batch{} }

func (b *batch) Put(cf db.CF, key, value []byte) {
	b.ops = append(b.ops, op{cf: cf, key: slices.Clone(key), val: append([]byte{}, value...)})
}
func (b *batch) Delete(cf db.CF, key []byte) {
	b.ops = append(b.ops, op{cf: cf, key: slices.Clone(key), del: true})
}
func (b *batch) Len() int { return len(b.ops) }
func (b *batch) Destroy() { b.ops = nil }

// Write implements db.Engine; a write in memory is as durable as it gets.
func (e *Engine) Write(eb db.EngineBatch, _ bool) error {
	b, ok := eb.(*batch)
	if !ok {
		return fmt.Errorf("memdb: write of a %T", eb)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.apply(b.ops)
}

// apply publishes ops all at once, or none when one is invalid. Called
// with mu held.
func (e *Engine) apply(ops []op) error {
	if e.closed {
		return db.ErrClosed
	}
	for _, o := range ops {
		if !holds(o.cf) || !e.held[o.cf] {
			return fmt.Errorf("memdb: no column family %s", o.cf)
		}
	}
	roots, size := e.roots, e.bytes
	for _, o := range ops {
		if o.del {
			var old []byte
			var existed bool
			if roots[o.cf], old, existed = remove(roots[o.cf], o.key); existed {
				size -= int64(len(o.key) + len(old))
			}
			continue
		}
		val := o.val
		if o.merge {
			var err error
			if val, err = o.cf.Merger().Merge(getFrom(roots[o.cf], o.key), [][]byte{o.val}); err != nil {
				return fmt.Errorf("memdb: merge into %s row %x: %w", o.cf, o.key, err)
			}
		}
		var old []byte
		var existed bool
		roots[o.cf], old, existed = insert(roots[o.cf], o.key, val, priority(o.key))
		if existed {
			size += int64(len(val) - len(old))
		} else {
			size += int64(len(o.key) + len(val))
		}
	}
	e.roots, e.bytes = roots, size
	return nil
}

type snapshot struct {
	e     *Engine
	mu    sync.Mutex
	roots *[db.NumCF]*node // nil once released
}

// Snapshot implements db.Engine: the roots of the moment, which no later
// write modifies.
func (e *Engine) Snapshot() (db.EngineSnapshot, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return nil, db.ErrClosed
	}
	roots := e.roots
	return &snapshot{e: e, roots: &roots}, nil
}

func (s *snapshot) root(cf db.CF) (*node, error) {
	s.e.mu.RLock()
	closed := s.e.closed
	s.e.mu.RUnlock()
	if closed {
		return nil, db.ErrClosed
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.roots == nil {
		return nil, errReleased
	}
	if !holds(cf) {
		return nil, nil
	}
	return s.roots[cf], nil
}

func (s *snapshot) Get(cf db.CF, key []byte) ([]byte, error) {
	r, err := s.root(cf)
	if err != nil {
		return nil, err
	}
	return getFrom(r, key), nil
}

func (s *snapshot) Iterate(cf db.CF, start, prefix []byte, fn func(k, v []byte) (bool, error)) error {
	r, err := s.root(cf)
	if err != nil {
		return err
	}
	return ascend(r, start, prefix, fn)
}

func (s *snapshot) IterateReverse(cf db.CF, start, prefix []byte, fn func(k, v []byte) (bool, error)) error {
	r, err := s.root(cf)
	if err != nil {
		return err
	}
	return descend(r, start, prefix, fn)
}

func (s *snapshot) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.roots = nil
}

// run is a staged sorted run.
type run struct {
	e        *Engine
	cf       db.CF
	name     string
	ops      []op
	finished bool
}

// NewRun implements db.Engine; the run is staged (visible to IngestRun)
// once finished.
func (e *Engine) NewRun(cf db.CF, name string) (db.RunWriter, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return nil, db.ErrClosed
	}
	if !holds(cf) || !e.held[cf] {
		return nil, fmt.Errorf("memdb: no column family %s", cf)
	}
	return &run{e: e, cf: cf, name: name}, nil
}

func (r *run) Add(key, value []byte, del bool) error {
	if r.finished {
		return fmt.Errorf("memdb: run %s already finished", r.name)
	}
	if n := len(r.ops); n > 0 && bytes.Compare(key, r.ops[n-1].key) <= 0 {
		return fmt.Errorf("memdb: run %s: key %x not above the previous one", r.name, key)
	}
	o := op{cf: r.cf, key: slices.Clone(key), del: del}
	if !del {
		o.val = append([]byte{}, value...)
	}
	r.ops = append(r.ops, o)
	return nil
}

func (r *run) Merge(key, operand []byte) error {
	if r.cf.Merger() == nil {
		return fmt.Errorf("memdb: run %s: merge operand for %s, which has no merger", r.name, r.cf)
	}
	if err := r.Add(key, operand, false); err != nil {
		return err
	}
	r.ops[len(r.ops)-1].merge = true
	return nil
}

func (r *run) Finish() error {
	if r.finished {
		return fmt.Errorf("memdb: run %s already finished", r.name)
	}
	r.finished = true
	if len(r.ops) == 0 {
		return fmt.Errorf("memdb: run %s is empty", r.name)
	}
	r.e.mu.Lock()
	defer r.e.mu.Unlock()
	if r.e.closed {
		return db.ErrClosed
	}
	r.e.runs[r.name] = r
	return nil
}

func (r *run) Abort() { r.finished = true }

// SyncRuns implements db.Engine.
func (e *Engine) SyncRuns() error { return e.check() }

// IngestRun implements db.Engine.
func (e *Engine) IngestRun(cf db.CF, name string) (bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return false, db.ErrClosed
	}
	r := e.runs[name]
	if r == nil {
		return false, nil
	}
	if r.cf != cf {
		return false, fmt.Errorf("memdb: run %s holds %s rows, not %s", name, r.cf, cf)
	}
	if err := e.apply(r.ops); err != nil {
		return false, err
	}
	delete(e.runs, name)
	return true, nil
}

// ClearRuns implements db.Engine.
func (e *Engine) ClearRuns() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return db.ErrClosed
	}
	clear(e.runs)
	return nil
}

// Size implements db.Engine: the bytes of the keys and values held.
func (e *Engine) Size() int64 {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.bytes
}

// Compact implements db.Engine; there is nothing to compact.
func (e *Engine) Compact(db.CF) error { return e.check() }

// CancelCompaction implements db.Engine.
func (e *Engine) CancelCompaction() {}

// TuneForLoad implements db.Engine; nothing is compacted or compressed,
// and there are no blocks.
func (e *Engine) TuneForLoad(db.CF, db.LoadTuning) error { return e.check() }

// Level0Files implements db.Engine; there are no files.
func (e *Engine) Level0Files(db.CF) (int, bool) { return 0, false }

// SetCacheBytes implements db.Engine; there is no cache.
func (e *Engine) SetCacheBytes(int64) {}

// Path implements db.Engine.
func (e *Engine) Path() string { return e.path }

// Close implements db.Engine: the rows are dropped.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	e.roots = [db.NumCF]*node{}
	e.runs, e.bytes = nil, 0
	return nil
}

func (e *Engine) check() error {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return db.ErrClosed
	}
	return nil
}
