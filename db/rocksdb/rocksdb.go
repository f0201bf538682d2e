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
	opts := newOptions(&o)
	e, err := open(opts, o.Path, cfs, o.ReadOnly)
	if err != nil {
		opts.destroy()
		return nil, err
	}
	return e, nil
}

// open opens the database at path with the column families cfs; the
// engine owns opts from then on.
func open(opts *options, path string, cfs []db.CF, readOnly bool) (*engine, error) {
	names, cfOpts := familyOptions(opts, cfs)
	var rdb *grocksdb.DB
	var handles []*grocksdb.ColumnFamilyHandle
	var err error
	if readOnly {
		rdb, handles, err = grocksdb.OpenDbForReadOnlyColumnFamilies(opts.db, path, names, cfOpts, false)
	} else {
		rdb, handles, err = grocksdb.OpenDbColumnFamilies(opts.db, path, names, cfOpts)
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

// familyOptions returns the names and options of column families cfs.
func familyOptions(opts *options, cfs []db.CF) ([]string, []*grocksdb.Options) {
	names := make([]string, len(cfs))
	cfOpts := make([]*grocksdb.Options, len(cfs))
	for i, cf := range cfs {
		names[i], cfOpts[i] = cf.String(), opts.forCF(cf)
	}
	return names, cfOpts
}

// checkForeign refuses a datadir with column families we do not know, which
// is what Blockbook's own index (and any other program's) looks like, and
// returns the column families the datadir has (nil when there is no
// database yet). Missing off-chain families (fiatRates) are fine: Open adds
// them, as they hold nothing derived from the chain; so are missing
// optional-index families added since (pushdata): the index's state key
// is then unset, so the index is off and refuses to be switched on over
// the blocks indexed without it.
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
	if len(foreign) > 0 && !slices.ContainsFunc(foreign, func(n string) bool { return !slices.Contains(db.RetiredColumnFamilies, n) }) {
		// Families only an older format of ours wrote: say which format.
		if err := checkOlderFormat(path, present); err != nil {
			return nil, err
		}
	}
	if len(foreign) > 0 {
		return nil, fmt.Errorf("%w: %s holds a different index format, resync required (it has column families %v this program does not write: an index of Blockbook itself or of another chain type); point -datadir at an empty directory",
			db.ErrIncompatible, path, foreign)
	}
	for _, cf := range ours {
		if !cf.IsOffChain() && !cf.IsAddedOptional() && !slices.Contains(present, cf) {
			return nil, checkOlderFormat(path, present)
		}
	}
	return names, nil
}

// checkOlderFormat refuses, without modifying it, an index that lacks some
// of our column families but holds state (see db.CheckOlderIndex): opening
// it normally would add the missing column families.
func checkOlderFormat(path string, present []db.CF) error {
	opts := bareOptions()
	e, err := open(opts, path, present, true)
	if err != nil {
		opts.destroy()
		return err
	}
	err = db.CheckOlderIndex(e, path)
	if cerr := e.Close(); err == nil {
		err = cerr
	}
	return err
}
