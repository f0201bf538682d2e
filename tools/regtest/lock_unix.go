//go:build unix

package regtest

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock on path, blocking until it is
// free. The lock dies with the process, so a crashed build never wedges it.
func lockFile(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return nil, errors.Join(err, f.Close())
	}
	// Closing the file releases the lock too; an unlock that fails
	// leaves nothing to do, and the lock dies with the process anyway.
	return func() { _ = f.Close() }, nil
}
