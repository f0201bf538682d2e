package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// storeDir is where the schema and its decoders live.
const storeDir = "db"

// A decoder is a function of the store's non-test code that reads stored
// bytes: by the schema's naming, unpackX; or any function that opens a
// bounds-checked decoder over bytes (calls newDecoder), whatever its name.
// The decoder type's own methods are its primitives, exercised through the
// decoders. Every decoder must be called directly from a Fuzz target in the
// tests of its package, so that corrupt bytes are proved to give an error,
// never a panic.
func isDecoder(fn *ast.FuncDecl) bool {
	if fn.Name.Name == "newDecoder" || fn.Body == nil {
		return false
	}
	if strings.HasPrefix(fn.Name.Name, "unpack") {
		return true
	}
	return calls(fn.Body)["newDecoder"]
}

// calls is the set of plain function names called in a body (closures
// included).
func calls(body ast.Node) map[string]bool {
	names := map[string]bool{}
	ast.Inspect(body, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if id, ok := c.Fun.(*ast.Ident); ok {
				names[id.Name] = true
			}
		}
		return true
	})
	return names
}

// storePackage is what one directory under db/ holds: its decoders (name to
// file:line) and the functions its Fuzz targets call.
type storePackage struct {
	decoders map[string]string
	fuzzed   map[string]bool
	targets  int
}

func readStorePackages(t *testing.T) map[string]*storePackage {
	t.Helper()
	root := moduleRoot(t)
	pkgs := map[string]*storePackage{}
	err := filepath.WalkDir(filepath.Join(root, storeDir), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		dir, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		sp := pkgs[dir]
		if sp == nil {
			sp = &storePackage{decoders: map[string]string{}, fuzzed: map[string]bool{}}
			pkgs[dir] = sp
		}
		return sp.add(root, p)
	})
	if err != nil {
		t.Fatalf("reading %s: %v", storeDir, err)
	}
	return pkgs
}

// add records one file's decoders (non-test files) or Fuzz targets' calls
// (test files).
func (sp *storePackage) add(root, path string) error {
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return fmt.Errorf("parsing %s: %w", path, err)
	}
	test := strings.HasSuffix(path, "_test.go")
	for _, decl := range file.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		switch {
		case test && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Fuzz"):
			sp.targets++
			for name := range calls(fn.Body) {
				sp.fuzzed[name] = true
			}
		case !test && isDecoder(fn):
			pos := fset.Position(fn.Pos())
			r, err := filepath.Rel(root, pos.Filename)
			if err != nil {
				return fmt.Errorf("%s: %w", pos.Filename, err)
			}
			sp.decoders[funcName(fn)] = fmt.Sprintf("%s:%d", r, pos.Line)
		}
	}
	return nil
}

func TestEveryDecoderIsFuzzed(t *testing.T) {
	pkgs := readStorePackages(t)
	if len(pkgs[storeDir].decoders) == 0 {
		t.Fatalf("found no decoder in %s/: has the schema's naming changed? (see isDecoder)", storeDir)
	}
	var bad []string
	dirs := make([]string, 0, len(pkgs))
	for dir := range pkgs {
		dirs = append(dirs, dir)
	}
	sort.Strings(dirs)
	for _, dir := range dirs {
		sp := pkgs[dir]
		for name, at := range sp.decoders {
			if !sp.fuzzed[name] {
				bad = append(bad, fmt.Sprintf("%s: decoder %s has no fuzz target: no Fuzz function in %s's tests calls it", at, name, dir))
			}
		}
	}
	report(t, "fuzz coverage", bad)
}

// TestDecoderScanSeesTheSchema guards the scan itself: the decoders it finds
// include the well-known ones, so a parse or naming slip cannot make the
// fuzz-coverage test pass vacuously.
func TestDecoderScanSeesTheSchema(t *testing.T) {
	sp := readStorePackages(t)[storeDir]
	for _, name := range []string{"unpackTip", "unpackTxAddresses", "unpackBlockUndo"} {
		if _, ok := sp.decoders[name]; !ok {
			t.Errorf("decoder %s not found in %s/ (decoders found: %d)", name, storeDir, len(sp.decoders))
		}
	}
	if sp.targets == 0 {
		t.Errorf("no Fuzz target found in %s/'s tests", storeDir)
	}
}
