package server

import (
	"math/big"
	"strings"
	"sync"
	"testing"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/static"
)

// Pages are parsed on their first render, once, also when several
// requests render a page first at the same time; the others stay unparsed.
func TestLazyPagesParsedOnFirstRender(t *testing.T) {
	e := &explorer{assets: loadAssets(static.Assets)}
	pages := e.parseTemplates()
	for name, p := range pages {
		if p.t != nil {
			t.Fatalf("page %s parsed before its first render", name)
		}
	}
	tx := &api.Tx{Txid: strings.Repeat("cd", 32), BlockHeight: -1, Value: (*api.Amount)(big.NewInt(1000))}
	var wg sync.WaitGroup
	out := make([]string, 4)
	for i := range out {
		wg.Go(func() {
			var buf strings.Builder
			if err := pages["mempool"].ExecuteTemplate(&buf, "txcard", tx); err != nil {
				t.Error(err)
			}
			out[i] = buf.String()
		})
	}
	wg.Wait()
	for _, s := range out {
		if s == "" || s != out[0] {
			t.Fatalf("concurrent first renders differ or are empty: %q", out)
		}
	}
	for name, p := range pages {
		if (p.t != nil) != (name == "mempool") {
			t.Errorf("page %s parsed: %v", name, p.t != nil)
		}
	}
	var missing *lazyPage
	if err := missing.ExecuteTemplate(&strings.Builder{}, "layout", nil); err == nil {
		t.Error("an unknown page rendered without an error")
	}
}
