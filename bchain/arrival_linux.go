package bchain

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// unreadBytes is the socket's receive queue length (FIONREAD, which
// x/sys names TIOCINQ on Linux).
func unreadBytes(raw syscall.RawConn) int {
	n := 0
	_ = raw.Control(func(fd uintptr) {
		if v, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ); err == nil {
			n = v
		}
	})
	return n
}
