//go:build !linux

package nodeproc

import "os/exec"

func bindToParent(*exec.Cmd) {}
