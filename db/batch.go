package db

import "fmt"

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
	eb    EngineBatch
	bytes int64 // of keys and values, for the free-space check
}

// NewBatch starts an atomic write. Call Destroy when done.
func (d *DB) NewBatch() *Batch { return &Batch{eb: d.eng.NewBatch()} }

func (b *Batch) put(cf CF, key, value []byte) {
	b.eb.Put(cf, key, value)
	b.bytes += int64(len(key) + len(value))
}

func (b *Batch) del(cf CF, key []byte) {
	b.eb.Delete(cf, key)
	b.bytes += int64(len(key))
}

// Len returns the number of row changes in the batch.
func (b *Batch) Len() int { return b.eb.Len() }

// Destroy frees the batch.
func (b *Batch) Destroy() { b.eb.Destroy() }

// Snapshot is a consistent read-only view of the database.
type Snapshot struct {
	d  *DB
	es EngineSnapshot
	// txids is the txid cache as this snapshot may use it (UseTxidCache;
	// nil: none), consulted by every read that resolves positions.
	txids *BoundTxids
	seq   uint64 // Seq
}

// Seq orders the snapshots of a DB as they were taken: one with a larger
// Seq sees every write an earlier one sees. (Taking the number and the
// snapshot under one lock is what makes this so: numbered apart, a block
// written between could pair a newer state with an older number.)
func (s *Snapshot) Seq() uint64 { return s.seq }

// UseTxidCache lets the snapshot's reads resolve positions through c,
// given the snapshot's tip (ReadTip); see TxidCache.Bind.
func (s *Snapshot) UseTxidCache(c *TxidCache, tip Tip, hasTip bool) {
	s.txids = c.Bind(s, tip, hasTip)
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
	d.snapMu.Lock()
	es, err := d.eng.Snapshot()
	d.snapSeq++
	seq := d.snapSeq
	d.snapMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("db: snapshot: %w", err)
	}
	return &Snapshot{d: d, es: es, seq: seq}, nil
}

// Release frees the snapshot. Call it only after every read on the
// snapshot has returned: on a replica a released snapshot no longer pins
// its instance, which a catch-up may then close, so a read racing
// Release can fail on a closed instance.
func (s *Snapshot) Release() {
	s.d.mu.RLock()
	defer s.d.mu.RUnlock()
	s.es.Release()
}

func (s *Snapshot) get(cf CF, key []byte) ([]byte, error) {
	s.d.mu.RLock()
	defer s.d.mu.RUnlock()
	if s.d.closed {
		return nil, ErrClosed
	}
	v, err := s.es.Get(cf, key)
	if err != nil {
		return nil, fmt.Errorf("db: get %s: %w", cf, err)
	}
	return v, nil
}

func (s *Snapshot) getMany(cf CF, keys [][]byte) ([][]byte, error) {
	s.d.mu.RLock()
	defer s.d.mu.RUnlock()
	if s.d.closed {
		return nil, ErrClosed
	}
	return engineGetMany(s.es, cf, keys, false)
}

func (s *Snapshot) iterate(cf CF, start, prefix []byte, fn func(k, v []byte) (bool, error)) error {
	s.d.mu.RLock()
	defer s.d.mu.RUnlock()
	if s.d.closed {
		return ErrClosed
	}
	return s.es.Iterate(cf, start, prefix, fn)
}

// visitMany is getMany for readers that need only part of each value: fn
// sees each value (nil when absent), valid during the call only, uncopied
// where the engine can (ManyVisitor).
func visitMany(r Reader, cf CF, keys [][]byte, fn func(i int, v []byte) error) error {
	if s, ok := r.(*Snapshot); ok {
		if vis, ok := s.es.(ManyVisitor); ok {
			s.d.mu.RLock()
			defer s.d.mu.RUnlock()
			if s.d.closed {
				return ErrClosed
			}
			var fnErr error // returned as is; the engine's are wrapped
			err := vis.VisitMany(cf, keys, func(i int, v []byte) error { fnErr = fn(i, v); return fnErr })
			if err != nil && fnErr == nil {
				err = fmt.Errorf("db: get %s: %w", cf, err)
			}
			return err
		}
	}
	vals, err := getMany(r, cf, keys)
	for i := 0; i < len(vals) && err == nil; i++ {
		err = fn(i, vals[i])
	}
	return err
}

// manyReader is a Reader that reads many keys of one column family at once.
type manyReader interface {
	getMany(cf CF, keys [][]byte) ([][]byte, error)
}

// getMany reads keys of one column family (nil for an absent key), in one
// engine call where the engine can.
func getMany(r Reader, cf CF, keys [][]byte) ([][]byte, error) {
	if m, ok := r.(manyReader); ok {
		return m.getMany(cf, keys)
	}
	out := make([][]byte, len(keys))
	for i, k := range keys {
		var err error
		if out[i], err = r.get(cf, k); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// engineGetMany is getMany on an engine reader: MultiGet where it has it,
// one that leaves the block cache alone if uncached and the engine can.
func engineGetMany(r EngineReader, cf CF, keys [][]byte, uncached bool) ([][]byte, error) {
	var out [][]byte
	var err error
	if u, ok := r.(UncachedGetter); ok && uncached {
		out, err = u.GetManyUncached(cf, keys)
	} else if m, ok := r.(MultiGetter); ok {
		out, err = m.GetMany(cf, keys)
	} else {
		out = make([][]byte, len(keys))
		for i := 0; i < len(keys) && err == nil; i++ {
			out[i], err = r.Get(cf, keys[i])
		}
	}
	if err != nil {
		return nil, fmt.Errorf("db: get %s: %w", cf, err)
	}
	return out, nil
}
