package benchproc

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// DirSize returns the bytes of the files under dir (what a datadir takes,
// WAL, logs and options files included); unreadable entries count 0.
func DirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// DirParts returns the bytes under a RocksDB datadir by kind of file:
// "sst" (table files), "wal" (write-ahead logs, *.log), "info-log" (LOG
// and LOG.old.*), "manifest" (MANIFEST-*, CURRENT), "options" (OPTIONS-*)
// and "other"; what tells why two indexes of the same rows differ in size.
func DirParts(dir string) map[string]int64 {
	parts := map[string]int64{}
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		parts[fileKind(d.Name())] += fi.Size()
		return nil
	})
	return parts
}

func fileKind(name string) string {
	switch {
	case strings.HasSuffix(name, ".sst"):
		return "sst"
	case strings.HasSuffix(name, ".log"):
		return "wal"
	case name == "LOG" || strings.HasPrefix(name, "LOG.old"):
		return "info-log"
	case strings.HasPrefix(name, "MANIFEST-") || name == "CURRENT":
		return "manifest"
	case strings.HasPrefix(name, "OPTIONS-"):
		return "options"
	}
	return "other"
}

// FormatParts prints DirParts as "sst 3.1 MB, wal 0.9 MB, ..." in a fixed
// order, leaving out kinds with no bytes.
func FormatParts(parts map[string]int64) string {
	var out []string
	for _, k := range []string{"sst", "wal", "info-log", "manifest", "options", "other"} {
		if n := parts[k]; n > 0 {
			out = append(out, fmt.Sprintf("%s %.2f MB", k, float64(n)/(1<<20)))
		}
	}
	return strings.Join(out, ", ")
}
