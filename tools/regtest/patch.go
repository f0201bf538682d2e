package regtest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// btcd deletes its regtest block database on every start, which would make
// Restart come back at height 0. The build compiles a copy of the pinned
// sources with that one call disabled, so regtest nodes keep their chain
// like bitcoind's do. buildRecipe names the patch; a cached binary built
// with another recipe is rebuilt.
const (
	buildRecipe    = "keep-regtest-db/1"
	keepDBOriginal = "\tremoveRegressionDB(dbPath)\n"
	keepDBPatched  = "\t_ = removeRegressionDB // disabled by tools/regtest: keep the database across restarts\n"
)

// patchBtcd copies btcd's non-test sources from the module cache (which
// go build -overlay refuses to patch) into cacheDir/src with the database
// wipe disabled, and points the private modfile at that copy. The stable
// path lets the Go build cache serve rebuilds.
func patchBtcd(goBin, root, modFile, cacheDir string) error {
	if _, err := goOutput(goBin, root, "mod", "download", "-modfile="+modFile, btcdModule); err != nil {
		return err
	}
	modDir, err := goOutput(goBin, root, "list", "-modfile="+modFile, "-mod=mod", "-m", "-f", "{{.Dir}}", btcdModule)
	if err != nil {
		return err
	}
	src := filepath.Join(cacheDir, "src")
	if err := os.RemoveAll(src); err != nil {
		return fmt.Errorf("regtest: %w", err)
	}
	err = filepath.WalkDir(modDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if name == "testdata" || (strings.HasPrefix(name, ".") && path != modDir) {
				return filepath.SkipDir
			}
			return nil
		}
		if !(strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") || name == "go.mod" || name == "go.sum") {
			return nil
		}
		rel, err := filepath.Rel(modDir, path)
		if err != nil {
			return err
		}
		dst := filepath.Join(src, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return copyFile(path, dst)
	})
	if err != nil {
		return fmt.Errorf("regtest: copy btcd sources: %w", err)
	}
	main := filepath.Join(src, "btcd.go")
	code, err := os.ReadFile(main)
	if err != nil {
		return fmt.Errorf("regtest: %w", err)
	}
	if strings.Count(string(code), keepDBOriginal) != 1 {
		return fmt.Errorf("regtest: cannot patch btcd.go of %s: removeRegressionDB call not found once", modDir)
	}
	code = []byte(strings.Replace(string(code), keepDBOriginal, keepDBPatched, 1))
	if err := os.WriteFile(main, code, 0o644); err != nil {
		return fmt.Errorf("regtest: %w", err)
	}
	_, err = goOutput(goBin, root, "mod", "edit", "-modfile="+modFile, "-replace="+btcdModule+"="+src)
	return err
}
