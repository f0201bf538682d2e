package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// module is the import path of the module under test.
const module = "github.com/openexplorer/blockbook"

// pkg is the part of `go list -json` these tests read.
type pkg struct {
	ImportPath   string
	Dir          string
	DepOnly      bool
	Imports      []string
	TestImports  []string
	XTestImports []string
	Error        *struct{ Err string }
}

// rel is a module package's path relative to the module ("." for the
// root package), or "" for a package from outside the module.
func rel(importPath string) string {
	switch {
	case importPath == module:
		return "."
	case strings.HasPrefix(importPath, module+"/"):
		return strings.TrimPrefix(importPath, module+"/")
	}
	return ""
}

var root struct {
	once sync.Once
	dir  string
	err  error
}

// moduleRoot is the directory holding go.mod, found by the go command
// itself so that the test works from any package directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root.once.Do(func() {
		out, err := exec.Command(goTool(), "env", "GOMOD").Output()
		if err != nil {
			root.err = fmt.Errorf("go env GOMOD: %w", err)
			return
		}
		gomod := strings.TrimSpace(string(out))
		if gomod == "" || gomod == os.DevNull {
			root.err = errors.New("go env GOMOD: not inside a module")
			return
		}
		root.dir = filepath.Dir(gomod)
	})
	if root.err != nil {
		t.Fatal(root.err)
	}
	return root.dir
}

// goTool is the go command: the one of the toolchain running the test when
// GOROOT says where it is, else the first on PATH.
func goTool() string {
	if r := os.Getenv("GOROOT"); r != "" {
		if p := filepath.Join(r, "bin", "go"); fileExists(p) {
			return p
		}
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// goList runs `go list -e -json args...` from the module root and decodes
// its stream of package objects.
func goList(t *testing.T, args ...string) []pkg {
	t.Helper()
	cmd := exec.Command(goTool(), append([]string{"list", "-e", "-json"}, args...)...)
	cmd.Dir = moduleRoot(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list %s: decoding its output: %v", strings.Join(args, " "), err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

var modulePkgs struct {
	once sync.Once
	pkgs []pkg
}

// modulePackages is `go list ./...`, listed once per test binary.
func modulePackages(t *testing.T) []pkg {
	t.Helper()
	modulePkgs.once.Do(func() { modulePkgs.pkgs = goList(t, "./...") })
	if len(modulePkgs.pkgs) == 0 {
		t.Fatal("go list ./... listed no package")
	}
	return modulePkgs.pkgs
}
