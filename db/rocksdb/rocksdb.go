// Package rocksdb is the production engine of db: RocksDB through
// grocksdb, the only package that links it. Open opens an index; the
// engine stores bytes, package db gives them meaning.
package rocksdb

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/linxGnu/grocksdb"

	"github.com/openexplorer/blockbook/db"
)

// stagingDirName is the directory, inside the datadir, where the SST files
// of a bulk-load round are staged.
const stagingDirName = "bulk-staging"

func newOptions(o *db.Options) (*grocksdb.Options, *grocksdb.BlockBasedTableOptions, *grocksdb.Cache) {
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

// Open opens (creating if needed) the index at o.Path: it refuses a datadir
// of another program or format (checkForeign), then package db checks that
// the index was made by this program's format version for the same coin
// and network and completes an interrupted bulk-load round.
func Open(o db.Options) (*db.DB, error) {
	e, err := openEngine(o)
	if err != nil {
		return nil, err
	}
	return db.OpenEngine(e, o)
}

// openEngine opens the RocksDB database of an index with the column
// families of o.ChainType.
func openEngine(o db.Options) (*engine, error) {
	cfs := db.ColumnFamilies(o.ChainType)
	if cfs == nil {
		return nil, fmt.Errorf("rocksdb: no column families for %v", o.ChainType)
	}
	if err := os.MkdirAll(o.Path, 0o755); err != nil {
		return nil, fmt.Errorf("rocksdb: %w", err)
	}
	existing, err := checkForeign(o.Path, cfs)
	if err != nil {
		return nil, err
	}
	if o.ReadOnly && existing != nil {
		// A read-only open cannot add the off-chain families an index
		// made before them lacks; reads of them find nothing.
		cfs = slices.DeleteFunc(slices.Clone(cfs), func(cf db.CF) bool { return !slices.Contains(existing, cf.String()) })
	}
	opts, bbto, cache := newOptions(&o)
	e, err := open(opts, o.Path, cfs, o.ReadOnly)
	if err != nil {
		opts.Destroy()
		bbto.Destroy()
		cache.Destroy()
		return nil, err
	}
	e.bbto, e.cache = bbto, cache
	return e, nil
}

// open opens the database at path with the column families cfs; the
// engine owns opts from then on.
func open(opts *grocksdb.Options, path string, cfs []db.CF, readOnly bool) (*engine, error) {
	names := make([]string, len(cfs))
	cfOpts := make([]*grocksdb.Options, len(cfs))
	for i, cf := range cfs {
		names[i] = cf.String()
		cfOpts[i] = opts
	}
	var rdb *grocksdb.DB
	var handles []*grocksdb.ColumnFamilyHandle
	var err error
	if readOnly {
		rdb, handles, err = grocksdb.OpenDbForReadOnlyColumnFamilies(opts, path, names, cfOpts, false)
	} else {
		rdb, handles, err = grocksdb.OpenDbColumnFamilies(opts, path, names, cfOpts)
	}
	if err != nil {
		return nil, fmt.Errorf("rocksdb: open %s: %w", path, err)
	}
	e := newEngine(rdb, opts, path)
	for i, cf := range cfs {
		e.handles[cf] = handles[i]
	}
	return e, nil
}

// checkForeign refuses a datadir with column families we do not know, which
// is what Blockbook's own index (and any other program's) looks like, and
// returns the column families the datadir has (nil when there is no
// database yet). Missing off-chain families (fiatRates) are fine: Open adds
// them, as they hold nothing derived from the chain.
func checkForeign(path string, ours []db.CF) ([]string, error) {
	if _, err := os.Stat(filepath.Join(path, "CURRENT")); errors.Is(err, os.ErrNotExist) {
		return nil, nil // no database yet
	} else if err != nil {
		return nil, fmt.Errorf("rocksdb: %w", err)
	}
	opts := grocksdb.NewDefaultOptions()
	defer opts.Destroy()
	names, err := grocksdb.ListColumnFamilies(opts, path)
	if err != nil {
		return nil, fmt.Errorf("rocksdb: list column families of %s: %w", path, err)
	}
	known := make(map[string]db.CF)
	for _, cf := range ours {
		known[cf.String()] = cf
	}
	var foreign []string
	var present []db.CF
	for _, n := range names {
		if cf, ok := known[n]; ok {
			present = append(present, cf)
		} else {
			foreign = append(foreign, n)
		}
	}
	if len(foreign) > 0 {
		return nil, fmt.Errorf("%w: %s holds a different index format, resync required (it has column families %v this program does not write: an index of Blockbook itself or of another chain type); point -datadir at an empty directory",
			db.ErrIncompatible, path, foreign)
	}
	for _, cf := range ours {
		if !cf.IsOffChain() && !slices.Contains(present, cf) {
			return nil, checkOlderFormat(path, present)
		}
	}
	return names, nil
}

// checkOlderFormat refuses, without modifying it, an index that lacks some
// of our column families but holds state (see db.CheckOlderIndex): opening
// it normally would add the missing column families.
func checkOlderFormat(path string, present []db.CF) error {
	opts := grocksdb.NewDefaultOptions()
	e, err := open(opts, path, present, true)
	if err != nil {
		opts.Destroy()
		return err
	}
	err = db.CheckOlderIndex(e, path)
	if cerr := e.Close(); err == nil {
		err = cerr
	}
	return err
}
