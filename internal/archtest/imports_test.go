package archtest

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The import rules. docs/architecture.md points here: these tables are the
// picture of the packages and their arrows that the build keeps true.
//
// Patterns name module packages relative to the module root: "x" is the
// package x, "x/..." is x and every package below it, "." the root package
// (main), "*" anything. Paths with a dot in their first element are
// outside the module.

// grocksdb is the RocksDB binding. Only the RocksDB engine links it.
const grocksdb = "github.com/linxGnu/grocksdb"

// layer is what the non-test code of some packages may import from the
// module. The first row whose pattern matches a package applies, and a
// package may always import inside the pattern that matched it. A package
// no row matches fails the test: a new package gets a row here and a place
// in docs/architecture.md.
type layer struct {
	pkg string
	may []string
	why string
}

// Services read and write the store and talk to the node.
var serviceMay = []string{"db", "bchain/...", "syncer", "internal/..."}

var layers = []layer{
	{".", []string{"app"}, "a short main over the wiring"},
	{"app/...", []string{"*"}, "the wiring: the one place that knows every concrete package"},
	{"cmd/...", []string{"*"}, "small tools stand outside the layers"},
	{"tools/...", []string{"*"}, "test kits stand outside the layers"},
	{"build/...", []string{"*"}, "packaging tools and their tests stand outside the layers"},
	{"e2e/...", []string{"*"}, "the end-to-end suite drives the whole program"},
	{"server/...", []string{"api/...", "bchain/...", "static/...", "internal/..."}, "fronts reach the index only through api"},
	{"esplora/...", []string{"api/...", "bchain/...", "internal/..."}, "the Esplora REST front reaches the index only through api"},
	{"electrum/...", []string{"api/...", "bchain/...", "internal/..."}, "the Electrum front, like server, reaches the index only through api"},
	{"sphttp/...", []string{"api/...", "bchain/...", "internal/..."}, "the Silent Payments front reaches the index only through api"},
	{"mesh/...", []string{"api/...", "bchain/...", "internal/..."}, "the Mesh (Rosetta) front reaches the index only through api"},
	{"ordapi/...", []string{"api/...", "bchain/...", "internal/..."}, "ord's JSON front reaches the index only through api"},
	{"api/...", []string{"bchain/...", "db", "db/optional/...", "mempool", "mempool/projected", "ethmempool", "syncer", "internal/..."}, "queries see the store's interfaces and records (the optional indexes' too), and the services only for their record types (mempool.Tx, syncer.State, projected.Snapshot)"},
	{"syncer/...", serviceMay, "services use the store and the chain, not the fronts"},
	{"mempool/...", serviceMay, "services use the store and the chain; the mempool follows syncer's block events"},
	{"ethmempool/...", serviceMay, "services use the store and the chain, not the fronts"},
	{"fiat/...", serviceMay, "services use the store and the chain, not the fronts"},
	{"fourbyte/...", serviceMay, "services use the store and the chain, not the fronts"},
	{"fees/...", []string{"bchain/...", "mempool/projected", "internal/..."}, "the alternative fee providers read projected blocks (or a remote copy) and serve the node's fee interface"},
	{"db/rocksdb/...", []string{"db", "bchain/...", "internal/..."}, "an engine implements the store's interfaces"},
	{"db/memdb/...", []string{"db", "bchain/...", "internal/..."}, "an engine implements the store's interfaces"},
	{"db/...", []string{"bchain/...", "internal/..."}, "the store knows chains' records, nothing above it"},
	{"bchain/...", []string{"internal/..."}, "the chain layer is the bottom of the module"},
	{"static/...", nil, "templates and assets import nothing of the module"},
	{"internal/...", nil, "shared helpers are leaves"},
}

// restricted names packages that only some others may import, whatever the
// layers allow. withTests also holds the importers' tests to the rule.
type restricted struct {
	target    string
	importers []string
	withTests bool
	why       string
}

// outside are the packages that stand outside the layers: they may import
// coin and engine packages.
var outside = []string{"app/...", "cmd/...", "tools/...", "e2e/..."}

var restrictedImports = []restricted{
	{grocksdb, []string{"db/rocksdb/..."}, true, "only the RocksDB engine (and its tests) links the binding"},
	{"bchain/coins/...", append([]string{"bchain/coins/..."}, outside...), false, "coins plug in through bchain's registry; only the wiring picks them"},
	{"db/rocksdb/...", append([]string{"db/rocksdb/..."}, outside...), false, "the wiring picks the engine; the rest sees the db interfaces"},
	{"db/memdb/...", append([]string{"db/memdb/..."}, outside...), false, "the wiring picks the engine (tests may use the in-memory one anywhere)"},
}

// closure forbids a package anywhere in the dependency graph of some
// roots, tests included if withTests.
type closure struct {
	roots     []string // go list patterns
	forbid    string
	withTests bool
	why       string
}

var closures = []closure{
	{[]string{"./api/...", "./server/...", "./esplora/...", "./mesh/...", "./sphttp/...", "./ordapi/..."}, grocksdb, false, "api and the fronts never link RocksDB"},
	{[]string{"./api/...", "./server/...", "./esplora/..."}, grocksdb, true, "api and server unit tests run on the in-memory store"},
}

// match reports whether a module-relative path (or a path outside the
// module) matches a pattern.
func match(pattern, path string) bool {
	if pattern == "*" {
		return true
	}
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == base || strings.HasPrefix(path, base+"/")
	}
	return path == pattern
}

func matchAny(patterns []string, path string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return match(p, path) })
}

// short is an import path as the rules spell it.
func short(importPath string) string {
	if r := rel(importPath); r != "" {
		return r
	}
	return importPath
}

// external reports whether a pattern names a path outside the module (its
// first element has a dot, as a host name does).
func external(pattern string) bool {
	first, _, _ := strings.Cut(pattern, "/")
	return strings.Contains(first, ".")
}

func layerOf(path string) (layer, bool) {
	for _, l := range layers {
		if match(l.pkg, path) {
			return l, true
		}
	}
	return layer{}, false
}

// TestLayers checks every module package's non-test imports of the module
// against its row in layers.
func TestLayers(t *testing.T) {
	var bad []string
	for _, p := range modulePackages(t) {
		path := rel(p.ImportPath)
		l, ok := layerOf(path)
		if !ok {
			bad = append(bad, fmt.Sprintf("%s: no row in the layers table of internal/archtest/imports_test.go; add one (and its place in docs/architecture.md)", path))
			continue
		}
		for _, imp := range p.Imports {
			to := rel(imp)
			if to == "" || match(l.pkg, to) || matchAny(l.may, to) {
				continue
			}
			bad = append(bad, fmt.Sprintf("%s imports %s: not allowed for %s (%s); it may import %s", path, to, l.pkg, l.why, mayText(l)))
		}
	}
	report(t, "layer rule", bad)
}

func mayText(l layer) string {
	if len(l.may) == 0 {
		return "nothing of the module outside " + l.pkg
	}
	return strings.Join(l.may, ", ")
}

// TestRestrictedImports checks who imports the packages of restrictedImports.
func TestRestrictedImports(t *testing.T) {
	var bad []string
	for _, p := range modulePackages(t) {
		path := rel(p.ImportPath)
		for _, r := range restrictedImports {
			if matchAny(r.importers, path) {
				continue
			}
			check := func(imports []string, what string) {
				for _, imp := range imports {
					if match(r.target, short(imp)) {
						bad = append(bad, fmt.Sprintf("%s%s imports %s: only %s may (%s)", path, what, short(imp), strings.Join(r.importers, ", "), r.why))
					}
				}
			}
			check(p.Imports, "")
			if r.withTests {
				check(p.TestImports, " (test)")
				check(p.XTestImports, " (external test)")
			}
		}
	}
	report(t, "restricted import", bad)
}

// TestClosures checks that the forbidden packages are nowhere in the roots'
// dependencies, and names the chain of imports that brings one in.
func TestClosures(t *testing.T) {
	for _, c := range closures {
		name := strings.Join(c.roots, ",")
		if c.withTests {
			name += ",tests"
		}
		t.Run(name, func(t *testing.T) {
			args := []string{"-deps"}
			if c.withTests {
				args = append(args, "-test")
			}
			pkgs := goList(t, append(args, c.roots...)...)
			var bad []string
			for _, chain := range chainsTo(pkgs, c.forbid, c.withTests) {
				bad = append(bad, fmt.Sprintf("%s links %s (%s): %s", chain[0], c.forbid, c.why, strings.Join(chain, " → ")))
			}
			report(t, "dependency rule", bad)
		})
	}
}

// chainsTo finds, for each root of a `go list -deps` answer whose
// dependencies hold target, one shortest import chain from it to target.
// With tests, the roots are the test binaries only (the packages themselves
// are the other closure's business).
func chainsTo(pkgs []pkg, target string, tests bool) [][]string {
	imports := make(map[string][]string, len(pkgs))
	var roots []string
	for _, p := range pkgs {
		imports[p.ImportPath] = p.Imports
		if !p.DepOnly && (!tests || strings.HasSuffix(p.ImportPath, ".test")) {
			roots = append(roots, p.ImportPath)
		}
	}
	sort.Strings(roots)
	var chains [][]string
	for _, r := range roots {
		if chain := shortestChain(imports, r, target); chain != nil {
			chains = append(chains, chain)
		}
	}
	return chains
}

// shortestChain is a breadth-first search from one package to target. In a
// `-test` listing a package built for some test reads "p [q.test]"; the
// chain shows it as p.
func shortestChain(imports map[string][]string, from, target string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if variantOf(cur) == target {
			var chain []string
			for p := cur; p != ""; p = prev[p] {
				chain = append(chain, short(variantOf(p)))
			}
			slices.Reverse(chain)
			return chain
		}
		for _, next := range imports[cur] {
			if _, seen := prev[next]; !seen {
				prev[next] = cur
				queue = append(queue, next)
			}
		}
	}
	return nil
}

// variantOf strips the " [q.test]" that `go list -test` adds to packages
// recompiled for a test.
func variantOf(importPath string) string {
	p, _, _ := strings.Cut(importPath, " ")
	return p
}

// report fails the test with every violation found, one a line.
func report(t *testing.T, rule string, bad []string) {
	t.Helper()
	if len(bad) == 0 {
		return
	}
	sort.Strings(bad)
	bad = slices.Compact(bad)
	t.Errorf("%d %s violation(s):\n\t%s", len(bad), rule, strings.Join(bad, "\n\t"))
}

// TestRuleTables keeps the tables themselves honest: every module pattern
// in them names a package that exists, so a renamed or misspelt package
// cannot quietly turn a rule off.
func TestRuleTables(t *testing.T) {
	var bad []string
	check := func(where, pattern string) {
		if !patternExists(t, pattern) {
			bad = append(bad, fmt.Sprintf("%s: %q matches no package of the module", where, pattern))
		}
	}
	for _, l := range layers {
		check("layers row", l.pkg)
		for _, m := range l.may {
			check("layers row "+l.pkg+" may", m)
		}
	}
	for _, r := range restrictedImports {
		if !external(r.target) {
			check("restricted target", r.target)
		}
		for _, m := range r.importers {
			check("restricted "+r.target+" importers", m)
		}
	}
	report(t, "rule table", bad)
}

func patternExists(t *testing.T, pattern string) bool {
	if pattern == "*" || pattern == "internal/..." {
		return true // anything, or a home that may be empty
	}
	for _, p := range modulePackages(t) {
		if match(pattern, rel(p.ImportPath)) {
			return true
		}
	}
	return false
}
