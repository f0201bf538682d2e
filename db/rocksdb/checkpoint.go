package rocksdb

import (
	"fmt"

	"github.com/openexplorer/blockbook/db"
)

var _ db.Checkpointer = (*engine)(nil)

// Checkpoint writes a RocksDB checkpoint of the database into dir (which
// must not exist; RocksDB creates it). A log size of 0 makes RocksDB flush
// the memtables first, so the checkpoint is table files (hard links on the
// same filesystem, copies otherwise) plus an empty log, and opens without
// replaying anything. The staging area of bulk rounds is not included:
// db.DB never takes a checkpoint inside a round's commit.
func (e *engine) Checkpoint(dir string) error {
	if e.closed.Load() {
		return db.ErrClosed
	}
	cp, err := e.rdb.NewCheckpoint()
	if err != nil {
		return fmt.Errorf("rocksdb: new checkpoint: %w", err)
	}
	defer cp.Destroy()
	if err := cp.CreateCheckpoint(dir, 0); err != nil {
		return fmt.Errorf("rocksdb: create checkpoint %s: %w", dir, err)
	}
	return nil
}
