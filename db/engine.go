package db

// The engine is the key/value store under a DB. Everything that gives the
// rows meaning (schema, accessors, index code, state checks, the crash-safe
// bulk protocol, fault injection, closed checks) lives in this package and
// works over any engine; an engine only stores ordered bytes per column
// family. db/rocksdb is the production engine, db/memdb an in-memory one
// for tests, and db/dbtest the suite both must pass.

// NumCF bounds column family values: engines may index their families by CF
// in [0, NumCF).
const NumCF = int(numCF)

// EngineReader reads the rows of a live engine or of one of its snapshots.
// A column family the engine does not hold (an off-chain family a read-only
// open could not add) reads as empty.
type EngineReader interface {
	// Get returns a copy of the value, or nil when the key is absent.
	Get(cf CF, key []byte) ([]byte, error)
	// Iterate calls fn for the keys from the first one >= start (>= prefix
	// when start is nil) on, in ascending order, until fn returns false or
	// an error or a key does not begin with prefix. k and v are valid only
	// during the call and must not be modified.
	Iterate(cf CF, start, prefix []byte, fn func(k, v []byte) (bool, error)) error
	// IterateReverse is Iterate in descending order, from the last key
	// <= start (the last key beginning with prefix when start is nil).
	IterateReverse(cf CF, start, prefix []byte, fn func(k, v []byte) (bool, error)) error
}

// MultiGetter is implemented by engine readers (engines and their
// snapshots) that read many keys of one column family in one call:
// RocksDB's MultiGet, where a Get each would cross into C once per key.
// values[i] is a copy of keys[i]'s value, nil when the key is absent.
type MultiGetter interface {
	GetMany(cf CF, keys [][]byte) (values [][]byte, err error)
}

// ManyVisitor is implemented by engine readers that show fn each of many
// values of one column family in turn without copying it out (RocksDB's
// pinned MultiGet values): readers that need a few bytes of large values
// (a txid of a blockTxids row) copy only those. v is nil for an absent
// key and valid only during the call; the first error fn returns stops
// the visit and is returned.
type ManyVisitor interface {
	VisitMany(cf CF, keys [][]byte, fn func(i int, v []byte) error) error
}

// UncachedGetter is implemented by engines with a block cache: GetManyUncached
// reads as GetMany does but keeps none of the blocks it reads in the cache
// (those already there are used). The index writer's reads of prevouts
// and balances are random over families many times the cache and rarely
// come back to a block; caching them only evicted the blocks other reads
// reuse.
type UncachedGetter interface {
	GetManyUncached(cf CF, keys [][]byte) (values [][]byte, err error)
}

// Engine is an ordered key/value store with column families, atomic batch
// writes, consistent snapshots and ingestion of sorted runs. Close must not
// run concurrently with other calls (DB guarantees it); after Close, calls
// return ErrClosed.
type Engine interface {
	EngineReader
	// NewBatch starts an atomic write.
	NewBatch() EngineBatch
	// Write commits a batch of this engine atomically: readers see all of
	// it or none. With sync it is durable when Write returns.
	Write(b EngineBatch, sync bool) error
	// Snapshot returns a view that later writes and ingests do not change.
	Snapshot() (EngineSnapshot, error)

	// NewRun stages a sorted run of rows for column family cf under name (a
	// plain file name). Runs are written concurrently, one goroutine each.
	NewRun(cf CF, name string) (RunWriter, error)
	// SyncRuns makes the finished staged runs durable.
	SyncRuns() error
	// IngestRun moves the staged run name into cf; its rows replace (or,
	// for deletions, remove) the stored ones as one batch would. It returns
	// false when no such run is staged, i.e. it was ingested before.
	IngestRun(cf CF, name string) (bool, error)
	// ClearRuns discards every staged run.
	ClearRuns() error

	// Size returns the bytes the engine holds, as it accounts them (cheap).
	Size() int64
	// Compact compacts a column family; CancelCompaction makes a running
	// Compact return early (Close calls it first).
	Compact(cf CF) error
	CancelCompaction()
	// TuneForLoad sets how a column family is tuned while a bulk load
	// runs (LoadTuning; the zero value restores the usual options), all
	// of it in one step where the engine can. Parts that do not apply to
	// the family are ignored.
	TuneForLoad(cf CF, t LoadTuning) error
	// Level0Files returns the number of overlapping table files of a
	// column family; ok is false when the engine has no such notion.
	Level0Files(cf CF) (n int, ok bool)
	// SetCacheBytes resizes the block cache, if the engine has one.
	SetCacheBytes(n int64)
	// Path returns where the engine keeps its data ("" for none).
	Path() string
	Close() error
}

// EngineBatch collects row changes for Engine.Write. A change to a column
// family the engine does not hold makes Write fail.
type EngineBatch interface {
	Put(cf CF, key, value []byte)
	Delete(cf CF, key []byte)
	// Len returns the number of changes.
	Len() int
	// Destroy frees the batch.
	Destroy()
}

// EngineSnapshot is a consistent view of an engine.
type EngineSnapshot interface {
	EngineReader
	// Release frees the snapshot, also after the engine was closed.
	Release()
}

// RunWriter writes one staged run: keys strictly ascending, at least one
// row. A deletion hides the key's stored value once the run is ingested.
type RunWriter interface {
	Add(key, value []byte, del bool) error
	// Merge adds a merge operand for key, in a column family with a
	// Merger: once the run is ingested, reads of key see the Merger's sum
	// of the stored value and the operands.
	Merge(key, operand []byte) error
	// Finish completes the run; Abort drops an unfinished one.
	Finish() error
	Abort()
}

// PrefixEnd returns the smallest key above every key that begins with
// prefix, or nil when there is none (an empty prefix or all 0xff bytes).
func PrefixEnd(prefix []byte) []byte {
	for i := len(prefix) - 1; i >= 0; i-- {
		if prefix[i] != 0xff {
			end := append([]byte(nil), prefix[:i+1]...)
			end[i]++
			return end
		}
	}
	return nil
}

// LoadTuning is how a bulk load tunes a column family while it runs; the
// next Compact rewrites the files written so.
type LoadTuning struct {
	// DeferCompaction lets the family's overlapping files pile up far
	// longer before a compaction merges them: a bulk load defers the
	// families it writes but never reads, whose every rewrite during the
	// load the compaction after it redoes.
	DeferCompaction bool
	// Compression compresses the family's lasting files more cheaply
	// while the load rewrites them.
	Compression bool
	// SmallBlocks writes the family's new files with small data blocks
	// while the load reads its rows at random (queries read the usual
	// blocks).
	SmallBlocks bool
}
