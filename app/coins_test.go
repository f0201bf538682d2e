package app

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/btc"
)

// Every registered Bitcoin-type coin name has a params test and a
// real-block test in its coin package: a test function named TestParams...
// and one named TestRealBlocks... that mention the name as a string
// literal. (Its config is checked by TestShippedConfigs.)
func TestCoinRegistryCompleteness(t *testing.T) {
	files, err := filepath.Glob("../bchain/coins/*/*_test.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("coin tests: %v %v", files, err)
	}
	mentioned := map[string]map[string]bool{"TestParams": {}, "TestRealBlocks": {}}
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			for prefix, names := range mentioned {
				if strings.HasPrefix(fn.Name.Name, prefix) {
					collectStrings(fn, names)
				}
			}
		}
	}
	n := 0
	for _, name := range bchain.CoinNames() {
		if _, ok := btc.NetworkFor(name); !ok {
			continue // Ethereum-type names: bchain/coins/eth/networks_test.go
		}
		n++
		for prefix, names := range mentioned {
			if !names[name] {
				t.Errorf("coin %q has no %s... test naming it", name, prefix)
			}
		}
	}
	if n < 5 {
		t.Fatalf("only %d Bitcoin-type coins registered", n)
	}
}

// collectStrings adds every string literal inside node to set.
func collectStrings(node ast.Node, set map[string]bool) {
	ast.Inspect(node, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil {
				set[s] = true
			}
		}
		return true
	})
}
