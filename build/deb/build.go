package deb

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/openexplorer/blockbook/internal/selfsigned"
)

// BaseDepends are the packages the maintainer scripts use.
const BaseDepends = "passwd, coreutils"

// Input is what one package is built from.
type Input struct {
	Coin   Coin
	Binary string // the blockbook binary
	Config string // the runtime config, configs/coins/<alias>.json
	// CertFile and KeyFile, when both set, are shipped instead of a newly
	// generated self-signed pair.
	CertFile, KeyFile string
	Meta              Meta
	OutDir            string
}

// FileName is the .deb's file name.
func FileName(c Coin, m Meta) string {
	return fmt.Sprintf("%s_%s_%s.deb", c.Package(), m.Version, m.Arch)
}

// Build stages the package tree in a temporary directory and builds the
// .deb with dpkg-deb; it returns the .deb's path.
func Build(in Input) (string, error) {
	cfg, err := os.ReadFile(in.Config)
	if err != nil {
		return "", fmt.Errorf("%s: %w", in.Coin.Alias, err)
	}
	coinName, err := CoinName(cfg)
	if err != nil {
		return "", fmt.Errorf("%s: %s: %w", in.Coin.Alias, in.Config, err)
	}
	tmp, err := os.MkdirTemp("", "blockbook-deb-")
	if err != nil {
		return "", fmt.Errorf("staging dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	root := filepath.Join(tmp, "root")
	if err := stage(root, in, cfg); err != nil {
		return "", fmt.Errorf("%s: stage: %w", in.Coin.Alias, err)
	}
	kb, err := treeKB(root)
	if err != nil {
		return "", err
	}
	if err := writeControl(root, in.Coin, coinName, in.Meta, kb); err != nil {
		return "", err
	}
	if err := os.MkdirAll(in.OutDir, 0o755); err != nil {
		return "", fmt.Errorf("output dir: %w", err)
	}
	// Older builds of the package go, so that <package>_*.deb names one file.
	old, _ := filepath.Glob(filepath.Join(in.OutDir, in.Coin.Package()+"_*_"+in.Meta.Arch+".deb"))
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return "", fmt.Errorf("remove an older build: %w", err)
		}
	}
	out := filepath.Join(in.OutDir, FileName(in.Coin, in.Meta))
	// gzip: xz takes most of a minute on the binary and saves little.
	cmd := exec.Command("dpkg-deb", "--root-owner-group", "-Zgzip", "--build", root, out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("dpkg-deb --build %s: %w: %s", in.Coin.Package(), err, bytes.TrimSpace(msg))
	}
	return out, nil
}

// stage lays out the installed files under root.
func stage(root string, in Input, cfg []byte) error {
	c := in.Coin
	dir := filepath.Join(root, c.Dir())
	bin, err := os.ReadFile(in.Binary)
	if err != nil {
		return fmt.Errorf("binary: %w", err)
	}
	certPEM, keyPEM, err := certPair(in)
	if err != nil {
		return err
	}
	unit, err := Render("service", c, mustCoinName(cfg), in.Meta, 0)
	if err != nil {
		return err
	}
	files := []struct {
		path string
		data []byte
		mode fs.FileMode
	}{
		{filepath.Join(dir, "bin", "blockbook"), bin, 0o755},
		{filepath.Join(dir, "config", "blockchaincfg.json"), cfg, 0o644},
		{filepath.Join(dir, "cert", "testcert.crt"), certPEM, 0o644},
		// postinst gives the service's group read access.
		{filepath.Join(dir, "cert", "testcert.key"), keyPEM, 0o600},
		{filepath.Join(root, UnitDir, c.Unit()), unit, 0o644},
	}
	for _, f := range files {
		if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
			return fmt.Errorf("mkdir: %w", err)
		}
		if err := os.WriteFile(f.path, f.data, f.mode); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		// WriteFile's mode is filtered by the umask; the package needs it exact.
		if err := os.Chmod(f.path, f.mode); err != nil {
			return fmt.Errorf("chmod: %w", err)
		}
	}
	// -certfile names blockbook.{crt,key}; they point at the shipped pair,
	// and an operator replaces the links with a real certificate.
	for _, ext := range []string{"crt", "key"} {
		if err := os.Symlink("testcert."+ext, filepath.Join(dir, "cert", "blockbook."+ext)); err != nil {
			return fmt.Errorf("cert link: %w", err)
		}
	}
	for _, d := range []string{filepath.Join(dir, "logs"), filepath.Join(root, filepath.Dir(c.DataDir()))} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("mkdir: %w", err)
		}
	}
	return nil
}

func mustCoinName(cfg []byte) string {
	n, _ := CoinName(cfg) // checked by Build before staging
	return n
}

// certPair reads the operator's pair or generates a self-signed one.
func certPair(in Input) (certPEM, keyPEM []byte, err error) {
	if in.CertFile == "" && in.KeyFile == "" {
		return selfsigned.Generate(time.Now(), selfsigned.PackageValidity)
	}
	if in.CertFile == "" || in.KeyFile == "" {
		return nil, nil, errors.New("give both a certificate and a key, or neither")
	}
	if certPEM, err = os.ReadFile(in.CertFile); err != nil {
		return nil, nil, fmt.Errorf("certificate: %w", err)
	}
	if keyPEM, err = os.ReadFile(in.KeyFile); err != nil {
		return nil, nil, fmt.Errorf("key: %w", err)
	}
	return certPEM, keyPEM, nil
}

// writeControl writes DEBIAN/: control, conffiles and the maintainer
// scripts.
func writeControl(root string, c Coin, coinName string, m Meta, kb int64) error {
	ctl := filepath.Join(root, "DEBIAN")
	if err := os.MkdirAll(ctl, 0o755); err != nil {
		return fmt.Errorf("mkdir DEBIAN: %w", err)
	}
	for _, name := range []string{"control", "conffiles", "postinst", "prerm", "postrm"} {
		data, err := Render(name, c, coinName, m, kb)
		if err != nil {
			return err
		}
		mode := fs.FileMode(0o644)
		if strings.HasPrefix(name, "post") || strings.HasPrefix(name, "pre") {
			mode = 0o755
		}
		p := filepath.Join(ctl, name)
		if err := os.WriteFile(p, data, mode); err != nil {
			return fmt.Errorf("write DEBIAN/%s: %w", name, err)
		}
		if err := os.Chmod(p, mode); err != nil {
			return fmt.Errorf("chmod DEBIAN/%s: %w", name, err)
		}
	}
	return nil
}

// treeKB is the Installed-Size: the staged files' size in KiB.
func treeKB(root string) (int64, error) {
	var n int64
	err := filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		n += info.Size()
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("size of the package tree: %w", err)
	}
	return (n + 1023) / 1024, nil
}

// ShlibDepends asks dpkg-shlibdeps for the packages of the shared
// libraries the binary links (librocksdb, libc, ...), versioned as
// Debian does. A static binary yields "".
func ShlibDepends(binary string) (string, error) {
	abs, err := filepath.Abs(binary)
	if err != nil {
		return "", fmt.Errorf("binary path: %w", err)
	}
	if _, err := exec.LookPath("dpkg-shlibdeps"); err != nil {
		return "", fmt.Errorf("dpkg-shlibdeps (package dpkg-dev) is needed to find the library dependencies: %w", err)
	}
	tmp, err := os.MkdirTemp("", "blockbook-shlibs-")
	if err != nil {
		return "", fmt.Errorf("temp dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	// dpkg-shlibdeps reads debian/control of the "source package" it runs in.
	if err := os.MkdirAll(filepath.Join(tmp, "debian"), 0o755); err != nil {
		return "", fmt.Errorf("temp dir: %w", err)
	}
	control := "Source: blockbook\n\nPackage: blockbook\nArchitecture: any\n"
	if err := os.WriteFile(filepath.Join(tmp, "debian", "control"), []byte(control), 0o644); err != nil {
		return "", fmt.Errorf("temp control: %w", err)
	}
	cmd := exec.Command("dpkg-shlibdeps", "-O", abs)
	cmd.Dir = tmp
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("dpkg-shlibdeps %s: %w: %s", binary, err, bytes.TrimSpace(stderr.Bytes()))
	}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "shlibs:Depends="); ok {
			return v, nil
		}
	}
	return "", nil
}

// JoinDepends merges dependency lists, dropping empty ones and duplicates.
func JoinDepends(lists ...string) string {
	seen := map[string]bool{}
	var all []string
	for _, l := range lists {
		for _, d := range strings.Split(l, ",") {
			d = strings.TrimSpace(d)
			if d != "" && !seen[d] {
				seen[d] = true
				all = append(all, d)
			}
		}
	}
	sort.Strings(all)
	return strings.Join(all, ", ")
}
