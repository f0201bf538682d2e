package db

// Crash-safe ingestion of a bulk-load round. RocksDB ingests external SST
// files one column family per call, so a crash can fall between two
// ingests. The protocol makes every such state recoverable:
//
//  1. Every SST file of the round is written completely and fsynced into the
//     staging directory. A crash here leaves only garbage in staging, which
//     the next open deletes; the index is still at the previous tip.
//  2. A BulkRound record (round heights, new tip, file list) is written to
//     the default column family with a synced write.
//  3. Each file is ingested with move_files: RocksDB links it into the
//     database and, once the ingestion is durable, removes the staged name.
//     So a staged file that is gone has been ingested, one still present
//     may or may not have been, and ingesting it again is harmless: the
//     files hold absolute values (balances included), so a second copy with
//     a newer sequence number changes no visible byte.
//  4. One synced write stores the new tip and deletes the BulkRound record.
//
// Open finds a BulkRound record after a crash in 3 or 4 and finishes the
// round by ingesting the files still staged and committing the tip, before
// anything reads the index.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/linxGnu/grocksdb"
)

// stagingDirName is the staging directory for bulk rounds, inside the datadir.
const stagingDirName = "bulk-staging"

func (d *DB) stagingDir() string { return filepath.Join(d.path, stagingDirName) }

// faultPoint counts a step of a write protocol for fault injection; with
// KillAfterWrites set, the process dies right after the chosen step.
func (d *DB) faultPoint() { d.afterWrite() }

// sstFile writes sorted rows of one column family to a staged SST file.
type sstFile struct {
	w     *grocksdb.SSTFileWriter
	env   *grocksdb.EnvOptions
	path  string
	count int
	// halfway is the row count after which a fault point is taken, so that
	// crash tests can kill the process in the middle of a file.
	halfway int
}

func (d *DB) newSSTFile(path string, rows int) (*sstFile, error) {
	env := grocksdb.NewDefaultEnvOptions()
	w := grocksdb.NewSSTFileWriter(env, d.opts)
	if err := w.Open(path); err != nil {
		w.Destroy()
		env.Destroy()
		return nil, fmt.Errorf("db: open sst %s: %w", path, err)
	}
	return &sstFile{w: w, env: env, path: path, halfway: rows / 2}, nil
}

func (f *sstFile) add(d *DB, key, value []byte, del bool) error {
	var err error
	if del {
		err = f.w.Delete(key)
	} else {
		err = f.w.Put(key, value)
	}
	if err != nil {
		return fmt.Errorf("db: write sst %s: %w", f.path, err)
	}
	f.count++
	if f.count == f.halfway {
		d.faultPoint()
	}
	return nil
}

// finish completes and syncs the file.
func (f *sstFile) finish(d *DB) error {
	defer f.close()
	if err := f.w.Finish(); err != nil {
		return fmt.Errorf("db: finish sst %s: %w", f.path, err)
	}
	d.faultPoint()
	return nil
}

func (f *sstFile) close() {
	if f.w != nil {
		f.w.Destroy()
		f.env.Destroy()
		f.w = nil
	}
}

// syncedWrite commits a batch with an fsync of the WAL: the protocol's
// records must be durable before the next step.
func (d *DB) syncedWrite(b *Batch) error {
	wo := grocksdb.NewDefaultWriteOptions()
	defer wo.Destroy()
	wo.SetSync(true)
	d.mu.RLock()
	if d.closed {
		d.mu.RUnlock()
		return ErrClosed
	}
	err := d.rdb.Write(wo, b.wb)
	d.mu.RUnlock()
	if err != nil {
		return fmt.Errorf("db: write: %w", err)
	}
	d.faultPoint()
	return nil
}

// commitRound runs steps 2 to 4 of the protocol for a round whose files are
// staged (step 1 done by the caller, directory entries synced).
func (d *DB) commitRound(r *BulkRound) error {
	b := d.NewBatch()
	b.put(CFDefault, stateKeyBulk, packBulkRound(r))
	err := d.syncedWrite(b)
	b.Destroy()
	if err != nil {
		return err
	}
	return d.finishRound(r)
}

// finishRound runs steps 3 and 4: ingest what is still staged, then commit.
func (d *DB) finishRound(r *BulkRound) error {
	if err := d.ingestStaged(r); err != nil {
		return err
	}
	b := d.NewBatch()
	defer b.Destroy()
	writeTip(b, Tip{Height: r.To, Hash: r.TipHash})
	b.del(CFDefault, stateKeyBulk)
	if err := d.syncedWrite(b); err != nil {
		return err
	}
	return os.RemoveAll(d.stagingDir())
}

func (d *DB) ingestStaged(r *BulkRound) error {
	opts := grocksdb.NewDefaultIngestExternalFileOptions()
	defer opts.Destroy()
	opts.SetMoveFiles(true)
	opts.SetAllowGlobalSeqNo(true)
	opts.SetAllowBlockingFlush(true)
	// Snapshots are taken under ingestMu's read lock, so no reader sees a
	// round half ingested.
	d.ingestMu.Lock()
	defer d.ingestMu.Unlock()
	for _, f := range r.Files {
		path := filepath.Join(d.stagingDir(), f.Name)
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			continue // ingested before a crash; RocksDB removed the staged name
		} else if err != nil {
			return fmt.Errorf("db: staged file %s: %w", path, err)
		}
		if d.handles[f.CF] == nil {
			return fmt.Errorf("%w: staged file %s for column family %s not in this index", ErrCorrupt, f.Name, f.CF)
		}
		d.mu.RLock()
		err := d.rdb.IngestExternalFileCF(d.handles[f.CF], []string{path}, opts)
		d.mu.RUnlock()
		if err != nil {
			return fmt.Errorf("db: ingest %s into %s: %w", f.Name, f.CF, err)
		}
		d.faultPoint()
	}
	return nil
}

// recoverBulk completes a round interrupted by a crash, or clears staging
// garbage of a round that never reached its BulkRound record.
func (d *DB) recoverBulk() error {
	v, err := d.get(CFDefault, stateKeyBulk)
	if err != nil {
		return err
	}
	if v == nil {
		return os.RemoveAll(d.stagingDir())
	}
	r, err := unpackBulkRound(v)
	if err != nil {
		return err
	}
	d.log.Warn("completing a bulk-load round interrupted by a crash", "subsystem", "db", "from", r.From, "to", r.To)
	return d.finishRound(r)
}

// syncDir fsyncs a directory so that the names of files created in it are
// durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
