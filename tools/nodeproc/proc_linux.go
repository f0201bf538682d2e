//go:build linux

package nodeproc

import (
	"os/exec"
	"syscall"
)

// bindToParent makes the kernel kill the node if the test process dies (e.g. a
// test timeout), so no orphaned nodes keep ports and CPU busy.
func bindToParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
