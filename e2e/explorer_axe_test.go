package e2e

// axe-core (the pinned npm package in tools/js) run in headless Chromium on
// the explorer's pages: no serious or critical accessibility violation, in
// the light and the dark scheme.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// axeSource is axe.min.js from tools/js/node_modules.
func axeSource(t *testing.T) string {
	t.Helper()
	path := filepath.Join("..", "tools", "js", "node_modules", "axe-core", "axe.min.js")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: run `make deps` to install the pinned npm packages (npm ci in tools/js)", err)
	}
	return string(src)
}

type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target []any  `json:"target"`
		HTML   string `json:"html"`
	} `json:"nodes"`
}

// checkAxe runs axe on the open page (injected through the DevTools
// protocol, which the page's CSP does not govern) and fails on serious and
// critical violations.
func (b *browser) checkAxe(src, what string) {
	b.t.Helper()
	if !b.eval(`typeof window.axe === 'object'`) {
		if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](src+";true")); err != nil {
			b.t.Fatalf("injecting axe-core: %v", err)
		}
	}
	out, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](
		`axe.run(document, {resultTypes: ['violations']}).then(r => JSON.stringify(r.violations))`, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("axe on %s: %v", what, err)
	}
	var vs []axeViolation
	if err := json.Unmarshal([]byte(out), &vs); err != nil {
		b.t.Fatalf("axe on %s: %v", what, err)
	}
	for _, v := range vs {
		if v.Impact != "serious" && v.Impact != "critical" {
			continue
		}
		var where []string
		for i, n := range v.Nodes {
			if i == 3 {
				where = append(where, "…")
				break
			}
			where = append(where, cut(n.HTML, 160))
		}
		b.t.Errorf("%s: axe %s (%s): %s; %d elements: %s", what, v.ID, v.Impact, v.Help, len(v.Nodes), strings.Join(where, " | "))
	}
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
