package db

// A full disk. RocksDB reacts badly to running out of space in the middle
// of a write: a failed log append puts the database into a read-only error
// state, and the packaged library's assertions can even abort the process.
// So the index never lets it get there: before each write it checks the
// free space of the datadir's filesystem against the write's size plus a
// reserve (Options.MinFreeBytes, -dbreservemb), and refuses the write with
// ErrDiskFull instead. Nothing has been written when the check fails, the
// index stays readable, and the sync worker retries until there is space.

import (
	"errors"
	"fmt"
	"syscall"
)

// ErrDiskFull means the datadir's filesystem has no room for the next
// write. It is syscall.ENOSPC, so it reads "no space left on device" and
// also matches that error from the operating system or the engine.
var ErrDiskFull error = syscall.ENOSPC

// statfsFree returns the bytes an unprivileged writer may still use on the
// filesystem holding path.
func statfsFree(path string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", path, err)
	}
	return int64(st.Bavail) * st.Bsize, nil
}

// checkSpace refuses a write of about need bytes that would leave less than
// the reserve free.
func (d *DB) checkSpace(need int64) error {
	if d.minFree <= 0 || d.path == "" {
		return nil
	}
	free, err := d.freeSpace(d.path)
	if err != nil {
		return fmt.Errorf("db: free space of the datadir: %w", err)
	}
	if free >= d.minFree+need {
		return nil
	}
	return fmt.Errorf("db: %w: the datadir %s has %s free, less than the %s reserve (-dbreservemb) plus %s to write; index writes are paused until there is space",
		ErrDiskFull, d.path, mib(free), mib(d.minFree), mib(need))
}

// CheckSpace reports ErrDiskFull while the datadir's free space is below
// the reserve, so that the sync worker says so before it has a block to
// write.
func (d *DB) CheckSpace() error { return d.checkSpace(0) }

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// errRoundPending refuses a block write computed while a bulk round was
// pending (a bug: the writers finish the round first).
var errRoundPending = errors.New("db: a bulk round is unfinished; a block write computed before it was finished is refused")

// resumePending completes a bulk round whose record was written but whose
// ingestion failed (a full disk, say) before anything else is written: the
// protocol of ingest.go finishes it, as an open after a crash would.
func (d *DB) resumePending() error {
	if !d.pendingRound.Load() {
		return nil
	}
	// As in commitRound: a checkpoint must not see half of the round.
	d.writeGate.RLock()
	err := d.recoverBulk()
	d.writeGate.RUnlock()
	if err != nil {
		return fmt.Errorf("db: completing an unfinished bulk round: %w", err)
	}
	d.pendingRound.Store(false)
	return nil
}
