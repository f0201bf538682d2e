// Package db is the index: the layout (schema.go), typed accessors, the
// pure block → rows step, and atomic connect/disconnect of blocks, over a
// key/value engine (engine.go) that db/rocksdb or db/memdb opens. The sync
// loop that drives it lives in syncer; queries live in api.
package db

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/openexplorer/blockbook/bchain"
)

// ErrIncompatible means the datadir holds an index this binary must not use.
var ErrIncompatible = errors.New("incompatible index")

// ErrClosed is returned by operations on a closed database or engine.
var ErrClosed = errors.New("database closed")

// Options configure the opening of an index (rocksdb.Open, memdb.Open).
type Options struct {
	Path      string
	ChainType bchain.ChainType
	Coin      string // coin_name; a datadir made for another coin is refused
	Network   string // network name; likewise
	// CacheBytes is the RocksDB block cache size (the -dbcache flag).
	CacheBytes int64
	// MaxOpenFiles limits RocksDB's open files (-dbmaxopenfiles); <=0 unlimited.
	MaxOpenFiles int
	// WriteBufferBytes is each column family's memtable size (RocksDB keeps
	// up to two per column family); default 64 MiB.
	WriteBufferBytes int64
	// ReadOnly opens an existing index without writing anything (no state
	// initialization, no recovery of an interrupted bulk round): for
	// inspection tools and tests that must observe without acting.
	ReadOnly bool
	// KillAfterWrites, when > 0, makes the process SIGKILL itself right
	// after that many atomic writes. Crash tests use it to stop the process
	// at a chosen point between two writes.
	KillAfterWrites int64
	// MinFreeBytes is the free space the datadir's filesystem keeps: a
	// write that would leave less is refused with ErrDiskFull (space.go);
	// 0 turns the check off.
	MinFreeBytes int64
	// FreeSpace returns the free bytes of the filesystem holding path
	// (default: statfs); tests replace it.
	FreeSpace func(path string) (int64, error)
	Log       *slog.Logger
}

// DB is an open index database.
type DB struct {
	mu       sync.RWMutex // write-locked only by Close
	ingestMu sync.RWMutex // write-locked while a bulk round is ingested
	closed   bool
	readOnly bool // Options.ReadOnly: every write is refused (ErrReadOnly)
	eng      Engine
	cfs      []CF
	path     string
	log      *slog.Logger

	// writeGate is read-locked by block writes and bulk round commits and
	// write-locked by Checkpoint (checkpoint.go).
	writeGate sync.RWMutex

	killAfter atomic.Int64
	writes    atomic.Int64

	compacting sync.WaitGroup // background compaction, cancelled by Close

	minFree      int64
	freeSpace    func(string) (int64, error)
	pendingRound atomic.Bool // a bulk round's record is written but the round is not finished

	// snapMu pairs each snapshot with the next snapSeq (Snapshot.Seq).
	snapMu  sync.Mutex
	snapSeq uint64
}

// OpenEngine makes a DB over an open engine holding the column families of
// o.ChainType: it checks that the index was made by this program's format
// version for the same coin and network (initializing a new one) and
// completes a bulk-load round interrupted by a crash. On error the engine
// is closed. Engine packages call it from their Open.
func OpenEngine(e Engine, o Options) (*DB, error) {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	cfs := ColumnFamilies(o.ChainType)
	if cfs == nil {
		_ = e.Close()
		return nil, fmt.Errorf("db: no column families for %v", o.ChainType)
	}
	d := &DB{eng: e, cfs: cfs, path: e.Path(), log: o.Log, readOnly: o.ReadOnly, minFree: o.MinFreeBytes, freeSpace: o.FreeSpace}
	if d.freeSpace == nil {
		d.freeSpace = statfsFree
	}
	d.killAfter.Store(o.KillAfterWrites)
	if err := d.checkState(o); err != nil {
		d.Close()
		return nil, err
	}
	if o.ReadOnly {
		return d, nil
	}
	if err := d.recoverBulk(); err != nil {
		d.Close()
		return nil, fmt.Errorf("db: recovering an interrupted bulk-load round: %w", err)
	}
	return d, nil
}

// CheckOlderIndex refuses an index that lacks some chain column families
// but holds state: one written by an older version of this program, or by
// Blockbook (its internalState key). Engines call it before adding the
// missing families, which that version would then refuse as foreign; r
// reads the existing families only. nil means a database being created.
func CheckOlderIndex(r EngineReader, path string) error {
	format, err := r.Get(CFDefault, stateKeyFormat)
	if err != nil {
		return fmt.Errorf("db: read format of %s: %w", path, err)
	}
	bb, err := r.Get(CFDefault, blockbookStateKey)
	if err != nil {
		return fmt.Errorf("db: read state of %s: %w", path, err)
	}
	if bb != nil {
		return fmt.Errorf("%w: %s was written by Blockbook, different index format, resync required", ErrIncompatible, path)
	}
	if format == nil {
		return nil
	}
	v, _ := unpackHeightKey(format)
	if v == FormatVersion {
		// The same version with other families: an Ethereum-type index made
		// before addressAliases was added, or a Bitcoin-type one with the
		// scriptHashes family format 4 had before its release.
		return fmt.Errorf("%w: %s was made by an older build of this program (its column families are not the ones this one writes), different index format, resync required",
			ErrIncompatible, path)
	}
	return fmt.Errorf("%w: %s has index format version %d, this binary writes version %d, different index format, resync required",
		ErrIncompatible, path, v, FormatVersion)
}

// checkState verifies or, for a new database, writes the identity keys.
func (d *DB) checkState(o Options) error {
	format, err := d.get(CFDefault, stateKeyFormat)
	if err != nil {
		return err
	}
	if format == nil && o.ReadOnly {
		return fmt.Errorf("%w: %s holds no index", ErrIncompatible, d.path)
	}
	if format == nil {
		if bb, err := d.get(CFDefault, blockbookStateKey); err != nil {
			return err
		} else if bb != nil {
			return fmt.Errorf("%w: %s was written by Blockbook, different index format, resync required", ErrIncompatible, d.path)
		}
		if n, err := d.countKeys(CFHeight, 1); err != nil {
			return err
		} else if n > 0 {
			return fmt.Errorf("%w: %s has blocks but no format version, different index format, resync required", ErrIncompatible, d.path)
		}
		b := d.NewBatch()
		defer b.Destroy()
		b.put(CFDefault, stateKeyFormat, heightKey(FormatVersion))
		b.put(CFDefault, stateKeyCoin, []byte(o.Coin))
		b.put(CFDefault, stateKeyNetwork, []byte(o.Network))
		b.put(CFDefault, stateKeyCreated, (&encoder{}).uvarintBytes(uint64(time.Now().Unix())))
		return d.writeUncounted(b)
	}
	if v, err := unpackHeightKey(format); err != nil || v != FormatVersion {
		return fmt.Errorf("%w: %s has index format version %d, this binary writes version %d, different index format, resync required",
			ErrIncompatible, d.path, v, FormatVersion)
	}
	for _, c := range []struct {
		key  []byte
		want string
		what string
	}{{stateKeyCoin, o.Coin, "coin"}, {stateKeyNetwork, o.Network, "network"}} {
		got, err := d.get(CFDefault, c.key)
		if err != nil {
			return err
		}
		if string(got) != c.want {
			return fmt.Errorf("%w: %s was created for %s %q but the configuration says %q", ErrIncompatible, d.path, c.what, got, c.want)
		}
	}
	return nil
}

func (e *encoder) uvarintBytes(v uint64) []byte { e.uvarint(v); return e.b }

// checkFilterParams stores the block filter parameters in a new index (one
// without blocks) or verifies them against the stored ones: filters built
// with other parameters cannot be mixed, so a change needs a reindex.
func (d *DB) checkFilterParams(p FilterParams) error {
	stored, ok, err := ReadFilterParams(d)
	if err != nil {
		return err
	}
	if ok {
		if stored != p {
			return fmt.Errorf("%w: %s was indexed with block_golomb_filter_p=%d, block_filter_scripts=%q, block_filter_use_zeroed_key=%v "+
				"but the configuration says block_golomb_filter_p=%d, block_filter_scripts=%q, block_filter_use_zeroed_key=%v; "+
				"changing the block filter settings requires a reindex: point -datadir at an empty directory or restore the settings",
				ErrIncompatible, d.path, stored.P, stored.Scripts, stored.ZeroedKey, p.P, p.Scripts, p.ZeroedKey)
		}
		return nil
	}
	if n, err := d.countKeys(CFHeight, 1); err != nil {
		return err
	} else if n > 0 {
		return fmt.Errorf("%w: %s has blocks but no block filter parameters, different index format, resync required", ErrIncompatible, d.path)
	}
	b := d.NewBatch()
	defer b.Destroy()
	b.put(CFDefault, stateKeyFilters, packFilterParams(p))
	// Like the identity keys, not a block write: no fault-injection count.
	return d.writeUncounted(b)
}

// SetBlockCacheBytes changes the block cache capacity (the sync worker
// shrinks it during bulk loads to stay within its memory budget).
func (d *DB) SetBlockCacheBytes(n int64) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if !d.closed && n > 0 {
		d.eng.SetCacheBytes(n)
	}
}

// CompactInBackground compacts every column family, one after the other, in
// a background goroutine: after a bulk load the LSM holds overlapping files
// of many rounds, and a compaction leaves queries one file per level to
// read. Close cancels it.
func (d *DB) CompactInBackground() {
	d.compacting.Add(1)
	go func() {
		defer d.compacting.Done()
		start := time.Now()
		if cf, err := d.CompactAll(); errors.Is(err, ErrClosed) {
			return
		} else if err != nil {
			d.log.Warn("compaction after bulk load failed", "subsystem", "db", "cf", cf.String(), "err", err)
			return
		}
		d.log.Info("compaction after bulk load finished", "subsystem", "db", "took", time.Since(start).Round(time.Millisecond).String())
	}()
}

// CompactAll compacts every column family, one after the other, and
// returns the family it failed on. A closed database stops it (ErrClosed).
func (d *DB) CompactAll() (CF, error) {
	for _, cf := range d.cfs {
		d.mu.RLock()
		if d.closed {
			d.mu.RUnlock()
			return cf, ErrClosed
		}
		err := d.eng.Compact(cf)
		d.mu.RUnlock()
		if err != nil {
			return cf, err
		}
	}
	return 0, nil
}

// FilesAtLevel0 returns, per column family, the number of table files in
// level 0 (files that overlap, so every read checks each of them).
func (d *DB) FilesAtLevel0() map[string]int {
	d.mu.RLock()
	defer d.mu.RUnlock()
	out := make(map[string]int)
	if d.closed {
		return out
	}
	for _, cf := range d.cfs {
		if n, ok := d.eng.Level0Files(cf); ok {
			out[cf.String()] = n
		}
	}
	return out
}

// Path returns the database directory.
func (d *DB) Path() string { return d.path }

// Close releases the database and its engine.
func (d *DB) Close() {
	// Stop a running manual compaction first: it holds the read lock.
	d.mu.RLock()
	if !d.closed {
		d.eng.CancelCompaction()
	}
	d.mu.RUnlock()
	d.compacting.Wait()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	d.closed = true
	if err := d.eng.Close(); err != nil {
		d.log.Warn("closing the index", "subsystem", "db", "path", d.path, "err", err)
	}
}

// Size returns the bytes of the database, as its engine accounts them
// (cheap: no directory walk).
func (d *DB) Size() int64 {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return 0
	}
	return d.eng.Size()
}

// Writes returns the number of atomic writes done since Open.
func (d *DB) Writes() int64 { return d.writes.Load() }

// write commits a block write atomically (durable unless the process dies
// before the engine's log reaches the disk) and counts it. A bulk round
// left pending must have been finished before the batch was computed
// (chainIndex.tipForWrite): finishing it here would put rows built on the
// old tip over the round's.
func (d *DB) write(b *Batch) error {
	if d.pendingRound.Load() {
		return errRoundPending
	}
	if err := d.checkSpace(b.bytes); err != nil {
		return err
	}
	d.writeGate.RLock()
	err := d.commit(b, false)
	d.writeGate.RUnlock()
	if err != nil {
		return err
	}
	d.afterWrite()
	return nil
}

// writeUncounted commits a write that is not a block write (identity keys,
// caches, off-chain data): no fault-injection count.
func (d *DB) writeUncounted(b *Batch) error {
	if err := d.checkSpace(b.bytes); err != nil {
		return err
	}
	return d.commit(b, false)
}

func (d *DB) commit(b *Batch, sync bool) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return ErrClosed
	}
	if d.readOnly {
		return fmt.Errorf("db: write to %s: %w", d.path, ErrReadOnly)
	}
	if err := d.eng.Write(b.eb, sync); err != nil {
		return fmt.Errorf("db: write: %w", err)
	}
	return nil
}

// afterWrite counts writes and carries out a requested fault injection.
func (d *DB) afterWrite() {
	n := d.writes.Add(1)
	if k := d.killAfter.Load(); k > 0 && n >= k {
		d.log.Warn("fault injection: killing the process", "subsystem", "db", "writes", n)
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // never returns; the signal is on its way
	}
}

func (d *DB) get(cf CF, key []byte) ([]byte, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return nil, ErrClosed
	}
	v, err := d.eng.Get(cf, key)
	if err != nil {
		return nil, fmt.Errorf("db: get %s: %w", cf, err)
	}
	return v, nil
}

func (d *DB) getMany(cf CF, keys [][]byte) ([][]byte, error) {
	return d.readMany(cf, keys, false)
}

func (d *DB) readMany(cf CF, keys [][]byte, uncached bool) ([][]byte, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return nil, ErrClosed
	}
	return engineGetMany(d.eng, cf, keys, uncached)
}

// uncachedReader reads through a DB, its MultiGets keeping nothing they
// read in the block cache (UncachedGetter): the index writer's reads of
// prevouts, which a bulk load makes by the million at random.
// Filling the cache with them made a 20 M-tx load 13% slower, and its
// peak RSS 440 MB higher (docs/performance.md, step 10).
type uncachedReader struct{ *DB }

func (u uncachedReader) getMany(cf CF, keys [][]byte) ([][]byte, error) {
	return u.readMany(cf, keys, true)
}

func (d *DB) iterate(cf CF, start, prefix []byte, fn func(k, v []byte) (bool, error)) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return ErrClosed
	}
	return d.eng.Iterate(cf, start, prefix, fn)
}

// countKeys counts up to limit keys of a column family.
func (d *DB) countKeys(cf CF, limit int) (int, error) {
	n := 0
	err := d.iterate(cf, nil, nil, func(_, _ []byte) (bool, error) {
		n++
		return n < limit, nil
	})
	return n, err
}
