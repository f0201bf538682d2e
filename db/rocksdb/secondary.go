package rocksdb

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/linxGnu/grocksdb"

	"github.com/openexplorer/blockbook/db"
)

// errSecondaryWrite refuses a write on a secondary instance: the index
// belongs to the primary process, a replica only reads it.
var errSecondaryWrite = fmt.Errorf("%w: a replica (RocksDB secondary instance) never writes to the index", db.ErrReadOnly)

// OpenSecondary opens the index at o.Path, which another process (the
// primary) has open and writes, as a replica: RocksDB secondary instances
// that read what the primary had written when they opened and, after each
// CatchUp (db.DB.CatchUp), what it has written since. secondaryDir is the
// replica's own directory (RocksDB keeps the instances' info logs and
// catch-up state there); it is created if needed. Writes are refused in
// both the engine and db (o.ReadOnly is forced).
func OpenSecondary(o db.Options, secondaryDir string) (*db.DB, error) {
	p, err := openPair(o, secondaryDir)
	if err != nil {
		return nil, err
	}
	o.ReadOnly = true
	return db.OpenEngine(p, o)
}

// openSecondaryEngine opens the column families the primary's index holds
// (it must exist: a replica never creates one), reading through cache,
// which stays the caller's.
func openSecondaryEngine(o db.Options, secondaryDir string, cache *grocksdb.Cache) (*engine, error) {
	cfs := db.ColumnFamilies(o.ChainType)
	if cfs == nil {
		return nil, fmt.Errorf("rocksdb: no column families for %v", o.ChainType)
	}
	existing, err := checkForeign(o.Path, cfs)
	if err != nil {
		return nil, err
	}
	if existing == nil {
		return nil, fmt.Errorf("%w: %s holds no index yet; start the primary (with -sync) on it first", db.ErrIncompatible, o.Path)
	}
	// Off-chain families the primary has not created yet read as empty.
	cfs = slices.DeleteFunc(slices.Clone(cfs), func(cf db.CF) bool { return !slices.Contains(existing, cf.String()) })
	if err := os.MkdirAll(secondaryDir, 0o755); err != nil {
		return nil, fmt.Errorf("rocksdb: replica directory: %w", err)
	}
	all := newOptionsWithCache(&o, cache)
	opts := all.db
	// A secondary instance must keep every table file open: the primary may
	// delete a file (after a compaction) that the secondary still lists
	// until its next catch-up, and an open file stays readable.
	opts.SetMaxOpenFiles(-1)
	// Each catch-up logs several lines at the info level: only warnings,
	// or the replica's LOG would grow without end.
	opts.SetInfoLogLevel(grocksdb.WarnInfoLogLevel)
	opts.SetMaxLogFileSize(8 << 20)
	opts.SetKeepLogFileNum(2)
	opts.SetCreateIfMissing(false)
	opts.SetCreateIfMissingColumnFamilies(false)
	names, cfOpts := familyOptions(all, cfs)
	rdb, handles, err := grocksdb.OpenDbAsSecondaryColumnFamilies(opts, o.Path, secondaryDir, names, cfOpts)
	if err != nil {
		all.destroy()
		return nil, fmt.Errorf("rocksdb: open %s as a secondary instance in %s: %w", o.Path, secondaryDir, err)
	}
	e := newEngine(rdb, all, o.Path)
	e.secondary = true
	for i, cf := range cfs {
		e.handles[cf] = handles[i]
	}
	return e, nil
}

// CatchUp makes a secondary instance read what the primary has written
// since the last catch-up (its MANIFEST and WAL); snapshots taken before
// keep their view. Only secondary instances follow a primary.
func (e *engine) CatchUp() error {
	if e.closed.Load() {
		return db.ErrClosed
	}
	if !e.secondary {
		return errors.New("rocksdb: catch-up of an instance that is not a secondary")
	}
	if err := e.rdb.TryCatchUpWithPrimary(); err != nil {
		return fmt.Errorf("rocksdb: catch up with the primary: %w", err)
	}
	return nil
}
