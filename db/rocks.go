// Package db is the index: the RocksDB layout (schema.go), typed accessors,
// the pure block → rows step, and atomic connect/disconnect of blocks. The
// sync loop that drives it lives in syncer; queries live in api.
package db

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/linxGnu/grocksdb"

	"github.com/openexplorer/blockbook/bchain"
)

// ErrIncompatible means the datadir holds an index this binary must not use.
var ErrIncompatible = errors.New("incompatible index")

// ErrClosed is returned by operations on a closed database.
var ErrClosed = errors.New("database closed")

// Options configure Open.
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
	Log             *slog.Logger
}

// DB is an open index database.
type DB struct {
	mu       sync.RWMutex // write-locked only by Close
	ingestMu sync.RWMutex // write-locked while a bulk round is ingested
	closed   bool
	rdb      *grocksdb.DB
	handles  [numCF]*grocksdb.ColumnFamilyHandle
	cfs      []CF
	opts     *grocksdb.Options
	bbto     *grocksdb.BlockBasedTableOptions
	cache    *grocksdb.Cache
	ro       *grocksdb.ReadOptions
	wo       *grocksdb.WriteOptions
	path     string
	log      *slog.Logger

	killAfter atomic.Int64
	writes    atomic.Int64

	compacting sync.WaitGroup // background compaction, cancelled by Close
}

func newOptions(o *Options) (*grocksdb.Options, *grocksdb.BlockBasedTableOptions, *grocksdb.Cache) {
	cacheBytes := o.CacheBytes
	if cacheBytes <= 0 {
		cacheBytes = 64 << 20
	}
	cache := grocksdb.NewLRUCache(uint64(cacheBytes))
	bbto := grocksdb.NewDefaultBlockBasedTableOptions()
	bbto.SetBlockCache(cache)
	bbto.SetBlockSize(16 << 10)
	// Bloom filters make point lookups of absent keys (new addresses, txs not
	// yet seen) skip disk reads.
	bbto.SetFilterPolicy(grocksdb.NewBloomFilter(10))
	bbto.SetCacheIndexAndFilterBlocks(true)
	bbto.SetCacheIndexAndFilterBlocksWithHighPriority(true)
	bbto.SetFormatVersion(5)

	opts := grocksdb.NewDefaultOptions()
	opts.SetCreateIfMissing(true)
	opts.SetCreateIfMissingColumnFamilies(true)
	opts.SetBlockBasedTableFactory(bbto)
	opts.SetCompression(grocksdb.LZ4Compression)
	opts.SetLevelCompactionDynamicLevelBytes(true)
	opts.SetMaxBackgroundJobs(4)
	opts.SetBytesPerSync(8 << 20)
	wb := o.WriteBufferBytes
	if wb <= 0 {
		wb = 64 << 20
	}
	opts.SetWriteBufferSize(uint64(wb))
	opts.SetMaxWriteBufferNumber(2)
	opts.SetMaxTotalWalSize(512 << 20)
	// Flushes of all column families happen together, so a crash with the
	// WAL disabled (bulk loads) can never leave some families ahead of others.
	opts.SetAtomicFlush(true)
	if o.MaxOpenFiles > 0 {
		opts.SetMaxOpenFiles(o.MaxOpenFiles)
	} else {
		opts.SetMaxOpenFiles(-1)
	}
	return opts, bbto, cache
}

// Open opens (creating if needed) the index at o.Path and checks that it was
// made by this program's format version for the same coin and network.
func Open(o Options) (*DB, error) {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	cfs := ColumnFamilies(o.ChainType)
	if cfs == nil {
		return nil, fmt.Errorf("db: no column families for %v", o.ChainType)
	}
	if err := os.MkdirAll(o.Path, 0o755); err != nil {
		return nil, fmt.Errorf("db: %w", err)
	}
	existing, err := checkForeign(o.Path, cfs)
	if err != nil {
		return nil, err
	}
	if o.ReadOnly && existing != nil {
		// A read-only open cannot add the off-chain families an index
		// made before them lacks; reads of them find nothing.
		cfs = slices.DeleteFunc(slices.Clone(cfs), func(cf CF) bool { return !slices.Contains(existing, cf.String()) })
	}
	opts, bbto, cache := newOptions(&o)
	names := make([]string, len(cfs))
	cfOpts := make([]*grocksdb.Options, len(cfs))
	for i, cf := range cfs {
		names[i] = cf.String()
		cfOpts[i] = opts
	}
	var rdb *grocksdb.DB
	var handles []*grocksdb.ColumnFamilyHandle
	if o.ReadOnly {
		rdb, handles, err = grocksdb.OpenDbForReadOnlyColumnFamilies(opts, o.Path, names, cfOpts, false)
	} else {
		rdb, handles, err = grocksdb.OpenDbColumnFamilies(opts, o.Path, names, cfOpts)
	}
	if err != nil {
		opts.Destroy()
		bbto.Destroy()
		cache.Destroy()
		return nil, fmt.Errorf("db: open %s: %w", o.Path, err)
	}
	d := &DB{rdb: rdb, cfs: cfs, opts: opts, bbto: bbto, cache: cache, path: o.Path, log: o.Log,
		ro: grocksdb.NewDefaultReadOptions(), wo: grocksdb.NewDefaultWriteOptions()}
	for i, cf := range cfs {
		d.handles[cf] = handles[i]
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

// checkForeign refuses a datadir with column families we do not know, which
// is what Blockbook's own index (and any other program's) looks like, and
// returns the column families the datadir has (nil when there is no
// database yet). Missing off-chain families (fiatRates) are fine: Open adds
// them, as they hold nothing derived from the chain.
func checkForeign(path string, ours []CF) ([]string, error) {
	if _, err := os.Stat(filepath.Join(path, "CURRENT")); err != nil {
		return nil, nil // no database yet
	}
	opts := grocksdb.NewDefaultOptions()
	defer opts.Destroy()
	names, err := grocksdb.ListColumnFamilies(opts, path)
	if err != nil {
		return nil, fmt.Errorf("db: list column families of %s: %w", path, err)
	}
	known := make(map[string]bool)
	for _, cf := range ours {
		known[cf.String()] = true
	}
	var foreign []string
	for _, n := range names {
		if !known[n] {
			foreign = append(foreign, n)
		}
	}
	if len(foreign) > 0 {
		return nil, fmt.Errorf("%w: %s holds a different index format, resync required (it has column families %v this program does not write: an index of Blockbook itself or of another chain type); point -datadir at an empty directory",
			ErrIncompatible, path, foreign)
	}
	for _, cf := range ours {
		if !cf.IsOffChain() && !slices.Contains(names, cf.String()) {
			return nil, checkOlderFormat(opts, path, names)
		}
	}
	return names, nil
}

// checkOlderFormat refuses, without modifying it, an index that lacks some
// of our column families but holds a format version: one written by an
// older version of this program (opening it normally would add the missing
// column families, which that version would then refuse as foreign). An
// index written by Blockbook (its internalState key) is refused likewise.
func checkOlderFormat(opts *grocksdb.Options, path string, names []string) error {
	cfOpts := make([]*grocksdb.Options, len(names))
	for i := range cfOpts {
		cfOpts[i] = opts
	}
	rdb, handles, err := grocksdb.OpenDbForReadOnlyColumnFamilies(opts, path, names, cfOpts, false)
	if err != nil {
		return fmt.Errorf("db: open %s: %w", path, err)
	}
	var format, bb []byte
	if i := slices.Index(names, CFDefault.String()); i >= 0 {
		ro := grocksdb.NewDefaultReadOptions()
		format, err = getWith(rdb, ro, handles[i], CFDefault, stateKeyFormat)
		if err == nil {
			bb, err = getWith(rdb, ro, handles[i], CFDefault, blockbookStateKey)
		}
		ro.Destroy()
	}
	for _, h := range handles {
		h.Destroy()
	}
	rdb.Close()
	if err != nil {
		return err
	}
	if bb != nil {
		return fmt.Errorf("%w: %s was written by Blockbook, different index format, resync required", ErrIncompatible, path)
	}
	if format == nil {
		return nil // a database being created: Open adds the column families
	}
	v, _ := unpackHeightKey(format)
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
		return d.rdb.Write(d.wo, b.wb)
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
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return ErrClosed
	}
	return d.rdb.Write(d.wo, b.wb)
}

// SetBlockCacheBytes changes the block cache capacity (the sync worker
// shrinks it during bulk loads to stay within its memory budget).
func (d *DB) SetBlockCacheBytes(n int64) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if !d.closed && n > 0 {
		d.cache.SetCapacity(uint64(n))
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
		opts := grocksdb.NewCompactRangeOptions()
		defer opts.Destroy()
		opts.SetExclusiveManualCompaction(false)
		for _, cf := range d.cfs {
			d.mu.RLock()
			if d.closed {
				d.mu.RUnlock()
				return
			}
			d.rdb.CompactRangeCFOpt(d.handles[cf], grocksdb.Range{}, opts)
			d.mu.RUnlock()
		}
		d.log.Info("compaction after bulk load finished", "subsystem", "db", "took", time.Since(start).Round(time.Millisecond).String())
	}()
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
		if n, err := strconv.Atoi(d.rdb.GetPropertyCF("rocksdb.num-files-at-level0", d.handles[cf])); err == nil {
			out[cf.String()] = n
		}
	}
	return out
}

// Path returns the database directory.
func (d *DB) Path() string { return d.path }

// Close releases the database. Column-family handles are destroyed before
// the database, as Debian's assertion-enabled RocksDB requires.
func (d *DB) Close() {
	// Stop a running manual compaction first: it holds the read lock.
	d.mu.RLock()
	if !d.closed {
		d.rdb.DisableManualCompaction()
	}
	d.mu.RUnlock()
	d.compacting.Wait()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	d.closed = true
	for i, h := range d.handles {
		if h != nil {
			h.Destroy()
			d.handles[i] = nil
		}
	}
	d.rdb.Close()
	d.ro.Destroy()
	d.wo.Destroy()
	d.opts.Destroy()
	d.bbto.Destroy()
	d.cache.Destroy()
}

// Size returns the bytes of the database's table files and memtables, as
// RocksDB accounts them (cheap: no directory walk).
func (d *DB) Size() int64 {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return 0
	}
	var total int64
	for _, cf := range d.cfs {
		for _, p := range []string{"rocksdb.total-sst-files-size", "rocksdb.size-all-mem-tables"} {
			if v, err := strconv.ParseInt(d.rdb.GetPropertyCF(p, d.handles[cf]), 10, 64); err == nil {
				total += v
			}
		}
	}
	return total
}

// Writes returns the number of atomic writes done since Open.
func (d *DB) Writes() int64 { return d.writes.Load() }

// write commits a batch atomically (with the WAL, so it survives a crash).
func (d *DB) write(b *Batch) error {
	d.mu.RLock()
	if d.closed {
		d.mu.RUnlock()
		return ErrClosed
	}
	err := d.rdb.Write(d.wo, b.wb)
	d.mu.RUnlock()
	if err != nil {
		return fmt.Errorf("db: write: %w", err)
	}
	d.afterWrite()
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
	return getWith(d.rdb, d.ro, d.handles[cf], cf, key)
}

func getWith(rdb *grocksdb.DB, ro *grocksdb.ReadOptions, h *grocksdb.ColumnFamilyHandle, cf CF, key []byte) ([]byte, error) {
	if h == nil {
		return nil, nil // an off-chain family a read-only open could not add
	}
	s, err := rdb.GetCF(ro, h, key)
	if err != nil {
		return nil, fmt.Errorf("db: get %s: %w", cf, err)
	}
	defer s.Free()
	if !s.Exists() {
		return nil, nil
	}
	return slices.Clone(s.Data()), nil
}

func (d *DB) iterate(cf CF, start, prefix []byte, fn func(k, v []byte) (bool, error)) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return ErrClosed
	}
	return iterateWith(d.rdb, d.ro, d.handles[cf], start, prefix, fn)
}

// iterateWith calls fn for keys >= start that begin with prefix, in key
// order, until fn returns false. k and v are valid only during the call.
func iterateWith(rdb *grocksdb.DB, ro *grocksdb.ReadOptions, h *grocksdb.ColumnFamilyHandle, start, prefix []byte, fn func(k, v []byte) (bool, error)) error {
	if h == nil {
		return nil // an off-chain family a read-only open could not add
	}
	it := rdb.NewIteratorCF(ro, h)
	defer it.Close()
	if start == nil {
		start = prefix
	}
	if start == nil {
		it.SeekToFirst()
	} else {
		it.Seek(start)
	}
	for ; it.Valid(); it.Next() {
		k, v := it.Key(), it.Value()
		kd := k.Data()
		if prefix != nil && !hasPrefix(kd, prefix) {
			k.Free()
			v.Free()
			break
		}
		more, err := fn(kd, v.Data())
		k.Free()
		v.Free()
		if err != nil {
			return err
		}
		if !more {
			return nil
		}
	}
	return it.Err()
}

func hasPrefix(b, p []byte) bool { return len(b) >= len(p) && string(b[:len(p)]) == string(p) }

// countKeys counts up to limit keys of a column family.
func (d *DB) countKeys(cf CF, limit int) (int, error) {
	n := 0
	err := d.iterate(cf, nil, nil, func(_, _ []byte) (bool, error) {
		n++
		return n < limit, nil
	})
	return n, err
}
