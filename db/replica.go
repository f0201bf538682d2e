package db

import (
	"errors"
	"fmt"
)

// ErrReadOnly refuses a write to an index opened read-only (Options.ReadOnly,
// a replica's secondary instance).
var ErrReadOnly = errors.New("index is open read-only")

// follower is an engine that follows another process's writes (a RocksDB
// secondary instance).
type follower interface {
	CatchUp() error
}

// CatchUp brings a replica's view of the index up to what the primary
// process has written. Snapshots taken before keep their view; reads after
// it see the primary's latest committed blocks (each block, and each bulk
// round, is one atomic write, so a catch-up never shows half of one).
func (d *DB) CatchUp() error {
	d.mu.RLock()
	defer d.mu.RUnlock()
	if d.closed {
		return ErrClosed
	}
	f, ok := d.eng.(follower)
	if !ok {
		return fmt.Errorf("db: %s is not open as a replica", d.path)
	}
	return f.CatchUp()
}

// ReadOnly reports whether the index refuses writes.
func (d *DB) ReadOnly() bool { return d.readOnly }

// EngineTip reads the tip row straight from an engine (the replica tests
// compare an instance's tip with the primary's). ok is false while the
// index is empty.
func EngineTip(e EngineReader) (tip Tip, ok bool, err error) {
	v, err := e.Get(CFDefault, stateKeyTip)
	if err != nil || v == nil {
		return Tip{}, false, err
	}
	tip, err = unpackTip(v)
	return tip, err == nil, err
}
