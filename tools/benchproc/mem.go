package benchproc

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Mem returns a process's resident set size now (VmRSS) and at its peak
// (VmHWM), in bytes; zeros where there is no /proc.
func Mem(pid int) (rss, hwm int64) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = kb << 10
		case "VmHWM:":
			hwm = kb << 10
		}
	}
	return rss, hwm
}

// MemParts returns a process's resident memory now by kind, in bytes:
// anonymous (heaps: Go's and the C allocator's) and file-backed (mostly
// the binary's own pages); zeros where there is no /proc.
func MemParts(pid int) (anon, file int64) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "RssAnon:":
			anon = kb << 10
		case "RssFile:":
			file = kb << 10
		}
	}
	return anon, file
}
