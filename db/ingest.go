package db

// Crash-safe ingestion of a bulk-load round. An engine ingests sorted runs
// (RocksDB: external SST files) one column family per call, so a crash can
// fall between two ingests. The protocol makes every such state
// recoverable:
//
//  1. Every run of the round is written completely and made durable in the
//     engine's staging area. A crash here leaves only garbage there, which
//     the next open deletes; the index is still at the previous tip.
//  2. A BulkRound record (round heights, new tip, run list) is written to
//     the default column family with a synced write.
//  3. Each run is ingested. Once the ingestion is durable the engine drops
//     the staged run (RocksDB ingests a copy, never the staged file, which
//     is removed after the ingestion returned). So a
//     run no longer staged has been ingested, one still staged may or may
//     not have been. Ingesting a run of absolute values again is harmless:
//     a second copy changes no visible byte. A run of merge operands
//     (balance changes) would count twice, so it carries a mark that tells
//     whether it was ingested (mergeRunMark), and is not ingested again.
//  4. One synced write stores the new tip, deletes the BulkRound record and
//     the marks.
//
// Opening finds a BulkRound record after a crash in 3 or 4 and finishes the
// round by ingesting the runs still staged and committing the tip, before
// anything reads the index.

import (
	"fmt"
	"slices"
)

// faultPoint counts a step of a write protocol for fault injection; with
// KillAfterWrites set, the process dies right after the chosen step.
func (d *DB) faultPoint() { d.afterWrite() }

// stagedRun writes sorted rows of one column family to a staged run.
type stagedRun struct {
	w     RunWriter
	name  string
	count int
	// halfway is the row count after which a fault point is taken, so that
	// crash tests can kill the process in the middle of a run.
	halfway int
}

func (d *DB) newRun(cf CF, name string, rows int) (*stagedRun, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return nil, ErrClosed
	}
	w, err := d.eng.NewRun(cf, name)
	if err != nil {
		return nil, fmt.Errorf("db: stage run %s: %w", name, err)
	}
	return &stagedRun{w: w, name: name, halfway: rows / 2}, nil
}

func (f *stagedRun) add(d *DB, key, value []byte, op rowOp) error {
	var err error
	if op == opMerge {
		err = f.w.Merge(key, value)
	} else {
		err = f.w.Add(key, value, op == opDelete)
	}
	if err != nil {
		return fmt.Errorf("db: write run %s: %w", f.name, err)
	}
	f.count++
	if f.count == f.halfway {
		d.faultPoint()
	}
	return nil
}

// finish completes the run.
func (f *stagedRun) finish(d *DB) error {
	if err := f.w.Finish(); err != nil {
		return fmt.Errorf("db: finish run %s: %w", f.name, err)
	}
	d.faultPoint()
	return nil
}

// syncRuns makes the staged runs durable (step 1's end).
func (d *DB) syncRuns() error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return ErrClosed
	}
	if err := d.eng.SyncRuns(); err != nil {
		return fmt.Errorf("db: sync staged runs: %w", err)
	}
	return nil
}

// syncedWrite commits a batch durably: the protocol's records must be
// durable before the next step.
func (d *DB) syncedWrite(b *Batch) error {
	if err := d.commit(b, true); err != nil {
		return err
	}
	d.faultPoint()
	return nil
}

// commitRound runs steps 2 to 4 of the protocol for a round whose runs are
// staged and synced (step 1 done by the caller).
func (d *DB) commitRound(r *BulkRound) error {
	// A checkpoint must not fall between the record and the tip.
	d.writeGate.RLock()
	defer d.writeGate.RUnlock()
	b := d.NewBatch()
	b.put(CFDefault, stateKeyBulk, packBulkRound(r))
	err := d.syncedWrite(b)
	b.Destroy()
	if err != nil {
		if cerr := d.clearRuns(); cerr != nil {
			d.log.Warn("clearing the staged runs of a failed round", "subsystem", "db", "err", cerr)
		}
		return err
	}
	if err := d.finishRound(r); err != nil {
		// The record stays: the next connect, disconnect or bulk session
		// finishes the round before it reads the tip (resumePending), or
		// the next open does.
		d.pendingRound.Store(true)
		return err
	}
	return nil
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
	for _, f := range r.Files {
		if f.CF.Merger() != nil {
			b.del(f.CF, mergeRunMark(r.To))
		}
	}
	if err := d.syncedWrite(b); err != nil {
		return err
	}
	return d.clearRuns()
}

func (d *DB) ingestStaged(r *BulkRound) error {
	// Snapshots are taken under ingestMu's read lock, so no reader sees a
	// round half ingested.
	d.ingestMu.Lock()
	defer d.ingestMu.Unlock()
	for _, f := range r.Files {
		if !slices.Contains(d.cfs, f.CF) {
			return fmt.Errorf("%w: staged run %s for column family %s not in this index", ErrCorrupt, f.Name, f.CF)
		}
		if f.CF.Merger() != nil {
			done, err := d.mergeRunIngested(f.CF, r)
			if err != nil {
				return err
			}
			if done { // a kill fell between its ingestion and the removal of its staged copy
				continue
			}
		}
		ingested, err := d.ingestRun(f)
		if err != nil {
			return err
		}
		if ingested {
			d.faultPoint()
		} // else ingested before a crash: the engine dropped the staged run
	}
	return nil
}

func (d *DB) ingestRun(f BulkFile) (bool, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return false, ErrClosed
	}
	ok, err := d.eng.IngestRun(f.CF, f.Name)
	if err != nil {
		return false, fmt.Errorf("db: ingest %s into %s: %w", f.Name, f.CF, err)
	}
	return ok, nil
}

func (d *DB) clearRuns() error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return ErrClosed
	}
	if err := d.eng.ClearRuns(); err != nil {
		return fmt.Errorf("db: clear staged runs: %w", err)
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
		return d.clearRuns()
	}
	r, err := unpackBulkRound(v)
	if err != nil {
		return err
	}
	d.log.Warn("completing a bulk-load round interrupted by a crash", "subsystem", "db", "from", r.From, "to", r.To)
	return d.finishRound(r)
}
