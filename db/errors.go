package db

import "errors"

// Errors of connecting and disconnecting blocks that both chain types'
// indexes return; the sync worker reacts to them. ErrCorrupt is with the
// decoder (encoding.go); errors of one chain type alone stay with its
// index (ErrMissingPrevout, ErrNotPrepared).
var (
	// ErrNotNextBlock: the block does not extend the index tip (a reorg
	// happened or the caller skipped a block).
	ErrNotNextBlock = errors.New("block does not extend the index tip")
	// ErrOutsideWindow: the block to disconnect is older than the rollback
	// window, its undo data is gone.
	ErrOutsideWindow = errors.New("block is outside the rollback window")
	// ErrEmptyIndex: there is no block to disconnect.
	ErrEmptyIndex = errors.New("index is empty")
)
