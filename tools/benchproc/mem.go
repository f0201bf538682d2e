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
	f := statusBytes(pid)
	return f["VmRSS:"], f["VmHWM:"]
}

// MemParts returns a process's resident memory now by kind, in bytes:
// anonymous (heaps: Go's and the C allocator's) and file-backed (mostly
// the binary's own pages); zeros where there is no /proc.
func MemParts(pid int) (anon, file int64) {
	f := statusBytes(pid)
	return f["RssAnon:"], f["RssFile:"]
}

// statusBytes reads the kB fields of /proc/<pid>/status, in bytes, keyed
// by their name with its colon.
func statusBytes(pid int) map[string]int64 {
	out := map[string]int64{}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[2] == "kB" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			out[f[0]] = kb << 10
		}
	}
	return out
}
