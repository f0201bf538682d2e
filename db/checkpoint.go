package db

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unicode"
)

// Checkpoints: a consistent copy of a running index in another directory,
// from which a new host starts (docs/operations.md, "Bootstrap a new
// host"). Every block write is one atomic batch that moves the tip with
// its rows, so any instant of the engine is at a block boundary, except
// inside a bulk round's commit (ingest.go): between its BulkRound record
// and its tip the engine holds part of the round, and the rest waits in
// the staging area, which a checkpoint does not carry. The round commit
// therefore holds writeGate's read lock for all of its steps, as block
// writes do for theirs, and a checkpoint takes the write lock: it sees
// the state before a round or after it, never inside.

// ErrCheckpointTarget is returned for a checkpoint directory that cannot be
// used (relative, not clean, existing, inside the datadir, no parent).
var ErrCheckpointTarget = errors.New("bad checkpoint directory")

// ErrNoCheckpoints is returned when the engine cannot take checkpoints.
var ErrNoCheckpoints = errors.New("this index engine cannot take checkpoints")

// Checkpointer is an engine that can write a consistent copy of itself
// into a new directory (db/rocksdb: RocksDB checkpoints, hard links where
// the directory is on the same filesystem).
type Checkpointer interface {
	Checkpoint(dir string) error
}

// CheckpointInfo describes a checkpoint taken.
type CheckpointInfo struct {
	Dir    string
	Tip    Tip // the last block the checkpoint holds
	HasTip bool
	// Bytes and Files count the checkpoint's files; with hard links
	// (SameFilesystem) they share their disk space with the live index
	// until it compacts them away.
	Bytes          int64
	Files          int
	SameFilesystem bool
	// Took is the whole time; Paused the part during which index writes
	// waited for it.
	Took, Paused time.Duration
}

// CheckCheckpointDir checks a checkpoint target: an absolute, clean path
// (no "." or ".." elements) that does not exist yet, whose parent is a
// directory, outside the datadir.
func CheckCheckpointDir(dir, datadir string) error {
	if dir == "" {
		return fmt.Errorf("%w: no directory given", ErrCheckpointTarget)
	}
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("%w: %q is not an absolute path", ErrCheckpointTarget, dir)
	}
	if filepath.Clean(dir) != dir || strings.ContainsRune(dir, 0) {
		return fmt.Errorf("%w: %q is not a clean path (no \".\" or \"..\" elements, no trailing slash)", ErrCheckpointTarget, dir)
	}
	// A newline or escape in a name would forge log lines and confuse
	// the scripts that copy the checkpoint.
	if strings.IndexFunc(dir, unicode.IsControl) >= 0 {
		return fmt.Errorf("%w: %q has a control character", ErrCheckpointTarget, dir)
	}
	if _, err := os.Lstat(dir); err == nil {
		return fmt.Errorf("%w: %s already exists (a checkpoint goes into a new directory)", ErrCheckpointTarget, dir)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s: %w", ErrCheckpointTarget, dir, err)
	}
	parent := filepath.Dir(dir)
	if st, err := os.Stat(parent); err != nil || !st.IsDir() {
		return fmt.Errorf("%w: the parent directory %s does not exist", ErrCheckpointTarget, parent)
	}
	if datadir != "" {
		abs, err := filepath.Abs(datadir)
		if err == nil && inside(dir, abs) {
			return fmt.Errorf("%w: %s is inside the datadir %s", ErrCheckpointTarget, dir, abs)
		}
		// The same with symlinks resolved: a parent that links into the
		// datadir would put the checkpoint inside it all the same.
		realParent, perr := filepath.EvalSymlinks(parent)
		realData, derr := filepath.EvalSymlinks(abs)
		if perr != nil || derr != nil {
			realData = abs
		}
		if perr == nil && err == nil && inside(filepath.Join(realParent, filepath.Base(dir)), realData) {
			return fmt.Errorf("%w: %s resolves to a place inside the datadir %s", ErrCheckpointTarget, dir, realData)
		}
	}
	return nil
}

// inside reports whether path is dir or below it (both clean).
func inside(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))
}

// Checkpoint writes a consistent copy of the index into dir, a new
// directory (see CheckCheckpointDir), at a block boundary and never inside
// a bulk round. Index writes wait while the engine takes it (RocksDB:
// flush the memtables, link the files); queries go on.
func (d *DB) Checkpoint(dir string) (CheckpointInfo, error) {
	start := time.Now()
	info := CheckpointInfo{Dir: dir}
	if err := CheckCheckpointDir(dir, d.path); err != nil {
		return info, err
	}
	cp, ok := d.eng.(Checkpointer)
	if !ok {
		return info, ErrNoCheckpoints
	}
	d.writeGate.Lock()
	paused := time.Now()
	// Again under the lock: two requests may race for one directory.
	err := CheckCheckpointDir(dir, d.path)
	var tip Tip
	var hasTip bool
	if err == nil {
		tip, hasTip, err = ReadTip(d)
	}
	if err == nil {
		err = d.checkpoint(cp, dir)
	}
	info.Paused = time.Since(paused)
	d.writeGate.Unlock()
	if err != nil {
		return info, err
	}
	info.Tip, info.HasTip = tip, hasTip
	info.SameFilesystem = sameFilesystem(d.path, dir)
	if info.Files, info.Bytes, err = dirSize(dir); err != nil {
		return info, fmt.Errorf("db: checkpoint %s taken, but measuring it failed: %w", dir, err)
	}
	info.Took = time.Since(start)
	d.log.Info("checkpoint taken", "subsystem", "db", "dir", dir, "height", tip.Height, "hash", tip.Hash,
		"bytes", info.Bytes, "files", info.Files, "same_filesystem", info.SameFilesystem,
		"writes_paused", info.Paused.Round(time.Millisecond).String(), "took", info.Took.Round(time.Millisecond).String())
	return info, nil
}

func (d *DB) checkpoint(cp Checkpointer, dir string) error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return ErrClosed
	}
	if err := cp.Checkpoint(dir); err != nil {
		return fmt.Errorf("db: checkpoint into %s: %w", dir, err)
	}
	return nil
}

// sameFilesystem reports whether a and b's parent are on one filesystem,
// where the engine can hard-link instead of copying.
func sameFilesystem(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(filepath.Dir(b))
	if errA != nil || errB != nil {
		return false
	}
	devA, okA := sa.Sys().(*syscall.Stat_t)
	devB, okB := sb.Sys().(*syscall.Stat_t)
	return okA && okB && devA.Dev == devB.Dev
}

// dirSize counts the regular files under dir and their bytes.
func dirSize(dir string) (files int, bytes int64, err error) {
	err = filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return err
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		files++
		bytes += fi.Size()
		return nil
	})
	return files, bytes, err
}
