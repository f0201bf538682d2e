package benchproc

import (
	"io/fs"
	"path/filepath"
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
