package db

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A checkpoint target is refused inside the datadir however it is
// spelled: through a symlinked parent too, and with control characters in
// its name.
func TestCheckCheckpointDirRefuses(t *testing.T) {
	root := t.TempDir()
	datadir := filepath.Join(root, "data")
	if err := os.Mkdir(datadir, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(datadir, link); err != nil {
		t.Fatal(err)
	}
	for name, dir := range map[string]string{
		"inside":            filepath.Join(datadir, "cp"),
		"symlinked parent":  filepath.Join(link, "cp"),
		"newline":           filepath.Join(root, "cp\nforged log line"),
		"escape":            filepath.Join(root, "cp\x1b[31m"),
		"relative":          "cp",
		"not clean":         root + "/x/../cp",
		"missing parent":    filepath.Join(root, "none", "cp"),
		"exists (the link)": link,
	} {
		if err := CheckCheckpointDir(dir, datadir); !errors.Is(err, ErrCheckpointTarget) {
			t.Errorf("%s (%q): %v, want ErrCheckpointTarget", name, dir, err)
		}
	}
	if err := CheckCheckpointDir(filepath.Join(root, "cp"), datadir); err != nil {
		t.Errorf("a good target: %v", err)
	}
}
