package db

import (
	"github.com/linxGnu/grocksdb"
)

// Reader reads rows, either the live database or a consistent snapshot.
// Accessors take a Reader so the same code serves the sync worker (live) and
// API requests (a snapshot that a concurrent block connect cannot change).
type Reader interface {
	// get returns a copy of the value, or nil when the key is absent.
	get(cf CF, key []byte) ([]byte, error)
	// iterate visits keys >= start (or >= prefix when start is nil) that
	// begin with prefix, in order, until fn returns false.
	iterate(cf CF, start, prefix []byte, fn func(k, v []byte) (bool, error)) error
}

// Writer collects row changes that are committed together.
type Writer interface {
	put(cf CF, key, value []byte)
	del(cf CF, key []byte)
}

var (
	_ Reader = (*DB)(nil)
	_ Reader = (*Snapshot)(nil)
	_ Writer = (*Batch)(nil)
)

// Batch is an atomic write in preparation.
type Batch struct {
	wb      *grocksdb.WriteBatch
	handles *[numCF]*grocksdb.ColumnFamilyHandle
}

// NewBatch starts an atomic write. Call Destroy when done.
func (d *DB) NewBatch() *Batch {
	return &Batch{wb: grocksdb.NewWriteBatch(), handles: &d.handles}
}

func (b *Batch) put(cf CF, key, value []byte) { b.wb.PutCF(b.handles[cf], key, value) }
func (b *Batch) del(cf CF, key []byte)        { b.wb.DeleteCF(b.handles[cf], key) }

// Len returns the number of row changes in the batch.
func (b *Batch) Len() int { return b.wb.Count() }

// Destroy frees the batch.
func (b *Batch) Destroy() { b.wb.Destroy() }

// Snapshot is a consistent read-only view of the database.
type Snapshot struct {
	d    *DB
	snap *grocksdb.Snapshot
	ro   *grocksdb.ReadOptions
}

// Snapshot returns a consistent view; call Release when done.
func (d *DB) Snapshot() (*Snapshot, error) {
	d.ingestMu.RLock() // never between two column families of a bulk round
	defer d.ingestMu.RUnlock()
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return nil, ErrClosed
	}
	s := &Snapshot{d: d, snap: d.rdb.NewSnapshot(), ro: grocksdb.NewDefaultReadOptions()}
	s.ro.SetSnapshot(s.snap)
	return s, nil
}

// Release frees the snapshot.
func (s *Snapshot) Release() {
	s.d.mu.RLock()
	defer s.d.mu.RUnlock()
	if !s.d.closed {
		s.d.rdb.ReleaseSnapshot(s.snap)
	}
	s.ro.Destroy()
}

func (s *Snapshot) get(cf CF, key []byte) ([]byte, error) {
	s.d.mu.RLock()
	defer s.d.mu.RUnlock()
	if s.d.closed {
		return nil, ErrClosed
	}
	return getWith(s.d.rdb, s.ro, s.d.handles[cf], cf, key)
}

func (s *Snapshot) iterate(cf CF, start, prefix []byte, fn func(k, v []byte) (bool, error)) error {
	s.d.mu.RLock()
	defer s.d.mu.RUnlock()
	if s.d.closed {
		return ErrClosed
	}
	return iterateWith(s.d.rdb, s.ro, s.d.handles[cf], start, prefix, fn)
}
