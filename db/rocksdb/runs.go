package rocksdb

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/linxGnu/grocksdb"

	"github.com/openexplorer/blockbook/db"
)

var errReleased = errors.New("rocksdb: snapshot released")

// Runs are SST files staged in the datadir's staging directory. RocksDB
// ingests a copy of a run (not the file itself, see IngestRun) and the
// staged name is removed once the ingestion has returned, so a name that is
// gone has been ingested.

func (e *engine) stagingDir() string { return filepath.Join(e.path, stagingDirName) }

// runPath returns the staged file of a run; the name comes from the
// database (a BulkRound record), so it must not leave the directory.
func (e *engine) runPath(name string) (string, error) {
	if name == "" || name == "." || name == ".." || filepath.Base(name) != name {
		return "", fmt.Errorf("rocksdb: bad staged run name %q", name)
	}
	return filepath.Join(e.stagingDir(), name), nil
}

type run struct {
	w    *grocksdb.SSTFileWriter // nil once finished or aborted
	env  *grocksdb.EnvOptions
	cf   db.CF
	path string
}

func (e *engine) NewRun(cf db.CF, name string) (db.RunWriter, error) {
	if e.secondary {
		return nil, errSecondaryWrite
	}
	if e.closed.Load() {
		return nil, db.ErrClosed
	}
	if e.handle(cf) == nil {
		return nil, fmt.Errorf("rocksdb: run for column family %s, not open", cf)
	}
	path, err := e.runPath(name)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(e.stagingDir(), 0o755); err != nil {
		return nil, fmt.Errorf("rocksdb: %w", err)
	}
	env := grocksdb.NewDefaultEnvOptions()
	w := grocksdb.NewSSTFileWriter(env, e.opts.forRun(cf, func() bool { return e.loadRuns[cf].Load() || !e.holdsNoRows(cf) }))
	if err := w.Open(path); err != nil {
		w.Destroy()
		env.Destroy()
		return nil, noSpace(fmt.Errorf("rocksdb: open sst %s: %w", path, err))
	}
	return &run{w: w, env: env, cf: cf, path: path}, nil
}

func (r *run) Add(key, value []byte, del bool) error {
	if r.w == nil {
		return fmt.Errorf("rocksdb: sst %s already finished", r.path)
	}
	var err error
	if del {
		err = r.w.Delete(key)
	} else {
		err = r.w.Put(key, value)
	}
	if err != nil {
		return noSpace(fmt.Errorf("rocksdb: write sst %s: %w", r.path, err))
	}
	return nil
}

func (r *run) Merge(key, operand []byte) error {
	if r.w == nil {
		return fmt.Errorf("rocksdb: sst %s already finished", r.path)
	}
	if r.cf.Merger() == nil {
		return fmt.Errorf("rocksdb: sst %s: merge operand for %s, which has no merger", r.path, r.cf)
	}
	if err := r.w.Merge(key, operand); err != nil {
		return noSpace(fmt.Errorf("rocksdb: write sst %s: %w", r.path, err))
	}
	return nil
}

// Finish completes the file (RocksDB syncs it) and frees the writer.
func (r *run) Finish() error {
	if r.w == nil {
		return fmt.Errorf("rocksdb: sst %s already finished", r.path)
	}
	defer r.Abort()
	if err := r.w.Finish(); err != nil {
		return noSpace(fmt.Errorf("rocksdb: finish sst %s: %w", r.path, err))
	}
	return nil
}

// Abort frees the writer; a partial file stays until ClearRuns.
func (r *run) Abort() {
	if r.w != nil {
		r.w.Destroy()
		r.env.Destroy()
		r.w = nil
	}
}

// holdsNoRows tells whether a column family has neither table files nor
// memtable entries.
func (e *engine) holdsNoRows(cf db.CF) bool {
	h := e.handle(cf)
	for _, p := range []string{"rocksdb.total-sst-files-size", "rocksdb.num-entries-active-mem-table", "rocksdb.num-entries-imm-mem-tables"} {
		if n, err := strconv.ParseInt(e.rdb.GetPropertyCF(p, h), 10, 64); err != nil || n != 0 {
			return false
		}
	}
	return true
}

// SyncRuns makes the staged files' names durable.
func (e *engine) SyncRuns() error {
	if e.closed.Load() {
		return db.ErrClosed
	}
	f, err := os.Open(e.stagingDir())
	if errors.Is(err, os.ErrNotExist) {
		return nil // nothing staged
	} else if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (e *engine) IngestRun(cf db.CF, name string) (bool, error) {
	if e.secondary {
		return false, errSecondaryWrite
	}
	if e.closed.Load() {
		return false, db.ErrClosed
	}
	path, err := e.runPath(name)
	if err != nil {
		return false, err
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return false, nil // ingested before: RocksDB removed the staged name
	} else if err != nil {
		return false, fmt.Errorf("rocksdb: staged file %s: %w", path, err)
	}
	h := e.handle(cf)
	if h == nil {
		return false, fmt.Errorf("rocksdb: ingest into column family %s, not open", cf)
	}
	opts := grocksdb.NewDefaultIngestExternalFileOptions()
	defer opts.Destroy()
	// Copy, not move: RocksDB writes the run's global sequence number into
	// the file it ingests. A moved (hard-linked) run was modified in place,
	// and a kill before RocksDB removed the staged name left a run whose
	// second ingestion fails ("Corruption: ... global seqno"), so the
	// index could not be reopened. The copy keeps the staged run as written.
	opts.SetMoveFiles(false)
	opts.SetAllowGlobalSeqNo(true)
	opts.SetAllowBlockingFlush(true)
	if err := e.rdb.IngestExternalFileCF(h, []string{path}, opts); err != nil {
		return false, noSpace(err)
	}
	// The ingestion is durable once RocksDB returns (the copy and the
	// manifest are synced). A kill before the removal leaves the run
	// staged; db ingests it again only if that changes no visible byte
	// (runs of merge operands carry a mark that it checks first).
	if err := os.Remove(path); err != nil {
		return true, fmt.Errorf("rocksdb: remove ingested run %s: %w", path, err)
	}
	return true, nil
}

func (e *engine) ClearRuns() error {
	if e.secondary {
		return errSecondaryWrite
	}
	if e.closed.Load() {
		return db.ErrClosed
	}
	return os.RemoveAll(e.stagingDir())
}

// Size returns the bytes of the table files and memtables, as RocksDB
// accounts them.
func (e *engine) Size() int64 {
	if e.closed.Load() {
		return 0
	}
	var total int64
	for _, h := range e.handles {
		if h == nil {
			continue
		}
		for _, p := range []string{"rocksdb.total-sst-files-size", "rocksdb.size-all-mem-tables"} {
			if v, err := strconv.ParseInt(e.rdb.GetPropertyCF(p, h), 10, 64); err == nil {
				total += v
			}
		}
	}
	return total
}

// writableHandle returns cf's handle for a change to how the family is
// stored; nil, with no error, when this open does not hold the family.
func (e *engine) writableHandle(cf db.CF) (*grocksdb.ColumnFamilyHandle, error) {
	if e.secondary {
		return nil, errSecondaryWrite
	}
	if e.closed.Load() {
		return nil, db.ErrClosed
	}
	return e.handle(cf), nil
}

func (e *engine) Compact(cf db.CF) error {
	h, err := e.writableHandle(cf)
	if h == nil {
		return err
	}
	opts := grocksdb.NewCompactRangeOptions()
	defer opts.Destroy()
	opts.SetExclusiveManualCompaction(false)
	if e.opts.recompressed(cf) {
		// The last level may hold files a bulk load wrote with LZ4
		// (loadCompression), in this process or in one killed before its
		// compaction: every file is rewritten with the usual compression,
		// even one no upper level overlaps. Compact runs after bulk loads,
		// whose upper levels overlap nearly all of a family keyed at random.
		opts.SetBottommostLevelCompaction(grocksdb.KForceOptimized)
	}
	e.rdb.CompactRangeCFOpt(h, grocksdb.Range{}, opts)
	return nil
}

// CancelCompaction stops manual compactions for good: Close calls it.
func (e *engine) CancelCompaction() {
	if !e.closed.Load() && !e.secondary {
		e.rdb.DisableManualCompaction()
	}
}

func (e *engine) Level0Files(cf db.CF) (int, bool) {
	h := e.handle(cf)
	if e.closed.Load() || h == nil {
		return 0, false
	}
	n, err := strconv.Atoi(e.rdb.GetPropertyCF("rocksdb.num-files-at-level0", h))
	return n, err == nil
}

func (e *engine) SetCacheBytes(n int64) {
	if !e.closed.Load() && e.opts.cache != nil && n > 0 {
		e.opts.cache.SetCapacity(uint64(n))
	}
}

func (e *engine) Path() string { return e.path }

// Close releases the database. Column-family handles are destroyed before
// the database, as Debian's assertion-enabled RocksDB requires.
func (e *engine) Close() error {
	if e.closed.Swap(true) {
		return nil
	}
	for i, h := range e.handles {
		if h != nil {
			h.Destroy()
			e.handles[i] = nil
		}
	}
	e.rdb.Close()
	e.ro.Destroy()
	e.roCold.Destroy()
	e.wo.Destroy()
	e.woSync.Destroy()
	e.opts.destroy()
	return nil
}

// PendingCompactionBytes is RocksDB's estimate of the bytes compaction has
// to rewrite to bring a column family's levels back within their targets.
func (e *engine) PendingCompactionBytes(cf db.CF) (int64, bool) {
	h := e.handle(cf)
	if e.closed.Load() || h == nil {
		return 0, false
	}
	n, err := strconv.ParseInt(e.rdb.GetPropertyCF("rocksdb.estimate-pending-compaction-bytes", h), 10, 64)
	return n, err == nil
}

// DiskBytes are the bytes of a column family's table files, compressed as
// they are on disk.
func (e *engine) DiskBytes(cf db.CF) (int64, bool) {
	h := e.handle(cf)
	if e.closed.Load() || h == nil {
		return 0, false
	}
	n, err := strconv.ParseInt(e.rdb.GetPropertyCF("rocksdb.total-sst-files-size", h), 10, 64)
	return n, err == nil
}
