// Package regtest runs real btcd nodes on the regression test network for
// integration tests, demos and benchmarks.
//
// The btcd binary is built from the exact btcd version pinned in the
// repository's go.mod (see BtcdPath), so every test talks to the same node
// implementation that the indexer is developed against.
//
// btcd behaviours worth knowing when writing tests:
//   - submitblock reports rejections as a "rejected: ..." result string and
//     answers null for orphan blocks; Client.SubmitBlock turns both into errors.
//   - Stock btcd wipes its regtest database on every start; the binary built
//     by BtcdPath does not, so Restart keeps the chain.
//   - A node whose tip is more than 24h old is not "current": it serves no
//     headers to peers and does not evict mined txs from its mempool. Chains
//     for P2P or mempool tests need recent block timestamps.
package regtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

const (
	btcdModule = "github.com/btcsuite/btcd"
	cacheName  = "openexplorer-blockbook"

	// BtcdEnv names an environment variable that, when set, points to a
	// prebuilt btcd binary and disables the automatic build.
	BtcdEnv = "REGTEST_BTCD"
)

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
)

// BtcdPath returns the path of a btcd binary built from the btcd version
// pinned in the repository's go.mod (with the patch described at
// buildRecipe). The binary is built at most once per process into a
// per-user cache directory
// (<os.UserCacheDir>/openexplorer-blockbook/btcd-<version>/btcd) and reused
// by later processes while it is newer than go.mod. A file lock serialises
// concurrent builds from parallel test binaries.
func BtcdPath() (string, error) {
	buildOnce.Do(func() {
		if p := os.Getenv(BtcdEnv); p != "" {
			buildPath, buildErr = p, nil
			if _, err := os.Stat(p); err != nil {
				buildErr = fmt.Errorf("regtest: %s: %w", BtcdEnv, err)
			}
			return
		}
		buildPath, buildErr = buildBtcd()
	})
	return buildPath, buildErr
}

func buildBtcd() (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("regtest: go toolchain needed to build btcd: %w", err)
	}
	goMod, err := findGoMod(goBin)
	if err != nil {
		return "", err
	}
	root := filepath.Dir(goMod)
	version, err := goOutput(goBin, root, "list", "-m", "-f", "{{.Version}}", btcdModule)
	if err != nil {
		return "", err
	}
	if version == "" {
		return "", fmt.Errorf("regtest: %s is not required by %s", btcdModule, goMod)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("regtest: no cache dir: %w", err)
	}
	dir := filepath.Join(cache, cacheName, "btcd-"+version)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("regtest: %w", err)
	}
	unlock, err := lockFile(filepath.Join(dir, "build.lock"))
	if err != nil {
		return "", fmt.Errorf("regtest: lock btcd cache: %w", err)
	}
	defer unlock()

	bin := filepath.Join(dir, "btcd")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	stamp := filepath.Join(dir, "recipe")
	if fresh(bin, stamp, goMod) {
		return bin, nil
	}
	if err := goBuild(goBin, root, goMod, dir, bin); err != nil {
		return "", err
	}
	if err := os.WriteFile(stamp, []byte(buildRecipe), 0o644); err != nil {
		return "", fmt.Errorf("regtest: %w", err)
	}
	return bin, nil
}

// fresh reports whether bin exists, was built with the current recipe and
// after go.mod last changed.
func fresh(bin, stamp, goMod string) bool {
	b, err := os.Stat(bin)
	if err != nil {
		return false
	}
	if r, err := os.ReadFile(stamp); err != nil || string(r) != buildRecipe {
		return false
	}
	m, err := os.Stat(goMod)
	return err == nil && b.ModTime().After(m.ModTime())
}

// goBuild builds btcd against a private copy of go.mod/go.sum (-modfile), so
// a go.sum that lacks hashes for btcd-only dependencies (btcd's mempool
// package imports testify/mock outside tests) can be completed without
// touching the repository's files. Versions still come from go.mod.
func goBuild(goBin, root, goMod, cacheDir, bin string) error {
	tmp, err := os.MkdirTemp(cacheDir, "build-")
	if err != nil {
		return fmt.Errorf("regtest: %w", err)
	}
	defer os.RemoveAll(tmp)
	modFile := filepath.Join(tmp, "btcd.mod")
	if err := copyFile(goMod, modFile); err != nil {
		return err
	}
	sum := strings.TrimSuffix(goMod, ".mod") + ".sum"
	if err := copyFile(sum, filepath.Join(tmp, "btcd.sum")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := patchBtcd(goBin, root, modFile, cacheDir); err != nil {
		return err
	}
	out := filepath.Join(tmp, filepath.Base(bin))
	if _, err := goOutput(goBin, root, "build", "-modfile="+modFile, "-mod=mod",
		"-o", out, btcdModule); err != nil {
		return err
	}
	// Rename is atomic, so a concurrent reader never sees a partial binary.
	if err := os.Rename(out, bin); err != nil {
		return fmt.Errorf("regtest: install btcd: %w", err)
	}
	return nil
}

// findGoMod locates the repository's go.mod starting from this source file's
// directory (tests run from a checkout) and falling back to the working dir.
func findGoMod(goBin string) (string, error) {
	var dirs []string
	if _, file, _, ok := runtime.Caller(0); ok {
		if st, err := os.Stat(filepath.Dir(file)); err == nil && st.IsDir() {
			dirs = append(dirs, filepath.Dir(file))
		}
	}
	if wd, err := os.Getwd(); err == nil {
		dirs = append(dirs, wd)
	}
	for _, d := range dirs {
		p, err := goOutput(goBin, d, "env", "GOMOD")
		if err == nil && p != "" && p != os.DevNull {
			return p, nil
		}
	}
	return "", errors.New("regtest: cannot find the repository go.mod (run from inside the module)")
}

// goOutput runs the go command in dir and returns its trimmed stdout.
func goOutput(goBin, dir string, args ...string) (string, error) {
	cmd := exec.Command(goBin, args...)
	cmd.Dir = dir
	// Workspace mode and inherited -mod flags would override the pinned go.mod.
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("regtest: go %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(stdout.String()), nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close() //nolint:errcheck // opened for reading: Close has nothing to lose
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	// Close counts: it can lose the copy's last write.
	return errors.Join(err, out.Close())
}
