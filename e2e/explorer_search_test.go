package e2e

// Search, error pages and html-validate for the explorer's tests.

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func checkSearch(t *testing.T, base string, o *oracle, z, pendingID string) []*htmlPage {
	var pages []*htmlPage
	var spendTx string
	for txid, ot := range o.txs {
		if !ot.coinbase {
			spendTx = txid
			break
		}
	}
	for _, c := range []struct{ q, want string }{
		{"5", "/block/5"},
		{" 17 ", "/block/17"},
		{o.hashes[9], "/block/" + o.hashes[9]},
		{strings.ToUpper(o.hashes[9]), "/block/" + o.hashes[9]},
		{spendTx, "/tx/" + spendTx},
		{pendingID, "/tx/" + pendingID},
		{z, "/address/" + z},
		{strings.ToUpper(z), "/address/" + z},
	} {
		p := fetchPage(t, base, "/search?q="+url.QueryEscape(c.q))
		if p.final != c.want || p.status != 200 {
			t.Errorf("search %q: %d at %s, want %s", c.q, p.status, p.final, c.want)
		}
	}
	for _, q := range []string{"nothing-like-this", "99999", strings.Repeat("ab", 32), "bcrt1qnotanaddress"} {
		p := fetchPage(t, base, "/search?q="+url.QueryEscape(q))
		if p.status != 404 || !strings.Contains(p.textOf(t, "message"), "No block, transaction, address or xpub matches") {
			t.Errorf("search %q: %d %q", q, p.status, text(p.doc))
		}
		if got := attr(p.byID("q2"), "value"); got != q {
			t.Errorf("search %q: the not-found page's search box holds %q", q, got)
		}
		pages = append(pages, p)
	}
	p := fetchPage(t, base, "/search?q=")
	if p.status != 200 || p.byID("q2") == nil {
		t.Errorf("empty search: %d %q", p.status, text(p.doc))
	}
	return append(pages, p)
}

// checkErrorPages: unknown objects are 404, malformed ids 400, each a page
// of the explorer with a clear message and no internals.
func checkErrorPages(t *testing.T, base string, o *oracle) []*htmlPage {
	var pages []*htmlPage
	var spent, unspent string
	for txid, ot := range o.txs {
		if sp, ok := ot.spentBy[0]; ok && spent == "" {
			spent = fmt.Sprintf("%s/0 /tx/%s", txid, sp.Hash)
		}
		if _, ok := ot.spentBy[0]; !ok && ot.outAddrs[0] != "" && unspent == "" {
			unspent = txid + "/0"
		}
	}
	sp := strings.Fields(spent)
	if p := fetchPage(t, base, "/spending/"+sp[0]); p.status != 200 || !strings.HasPrefix(p.final, sp[1]) {
		t.Errorf("spending %s: %d at %s, want %s", sp[0], p.status, p.final, sp[1])
	}
	for _, c := range []struct {
		path   string
		status int
		msg    string
	}{
		{"/tx/" + strings.Repeat("ab", 32), 404, "not found"},
		{"/block/99999", 404, "Block not found"},
		{"/block/" + strings.Repeat("cd", 32), 404, "Block not found"},
		{"/no/such/page", 404, "There is no page at /no/such/page"},
		{"/spending/" + unspent, 404, "is not spent"},
		{"/tx/xyz", 400, "Invalid txid"},
		{"/block/not-a-block", 400, "Invalid block height or hash"},
		{"/address/notanaddress", 400, "Invalid address"},
		{"/spending/" + sp[0] + "x", 400, "Invalid output index"},
		{"/xpub/" + strings.Repeat("z", 111), 400, ""},
	} {
		p := fetchPage(t, base, c.path)
		if p.status != c.status || p.doc == nil || !strings.Contains(p.textOf(t, "message"), c.msg) {
			t.Errorf("%s: %d %q, want %d with %q", c.path, p.status, text(p.doc), c.status, c.msg)
			continue
		}
		if p.byID("q") == nil {
			t.Errorf("%s: the error page lacks the explorer's layout", c.path)
		}
		noInternals(t, p)
		pages = append(pages, p)
	}
	return pages
}

// validateHTML checks pages with html-validate (tools/js, pinned in
// package.json). Its rules judge an element by its attributes, its text and
// its children, so the pages checked are chosen to cover every element
// shape that occurs in any page (tag, attributes, classes, ids with numbers
// masked, text or not, and the ordered kinds of its children) and every
// kind of page (path and query parameters); they are written to an artifact
// directory. Ids, whose values matter, are checked for duplicates on every
// page here.
func validateHTML(t *testing.T, pages []*htmlPage) {
	t.Helper()
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node (Node.js 20) is not installed: html-validate needs it; run `make deps`")
	}
	cli := filepath.Join("..", "tools", "js", "node_modules", "html-validate", "bin", "html-validate.mjs")
	if _, err := os.Stat(cli); err != nil {
		t.Fatalf("%s is missing (%v): run `make deps` to install the pinned npm packages (npm ci in tools/js)", cli, err)
	}
	dir := artifactDir(t, "explorer-pages-"+strings.ReplaceAll(t.Name(), "/", "-"))
	unsafe := regexp.MustCompile(`[^A-Za-z0-9._-]+`)
	covered := map[string]bool{}
	var distinct []*htmlPage
	for _, p := range pages {
		if dup := duplicateID(p.doc); dup != "" {
			t.Errorf("%s: duplicate id %q", p.path, dup)
		}
		shapes := append(elementShapes(p.doc), "kind "+pageKind(p.path))
		chosen := false
		for _, sh := range shapes {
			if !covered[sh] {
				covered[sh], chosen = true, true
			}
		}
		if chosen {
			distinct = append(distinct, p)
		}
	}
	for i, p := range distinct {
		name := fmt.Sprintf("%05d-%s.html", i, unsafe.ReplaceAllString(strings.TrimPrefix(p.path, "/"), "_"))
		if len(name) > 200 {
			name = name[:200] + ".html"
		}
		if err := os.WriteFile(filepath.Join(dir, name), p.body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(nodeBin, cli, "--config", filepath.Join("..", "tools", "js", "htmlvalidate.json"), "--ext", "html", dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("html-validate found problems in the explorer's pages (%d pages in %s):\n%s", len(distinct), dir, truncateBytes(out, 6000))
	}
	t.Logf("html-validate: %d pages covering the %d element shapes of %d pages valid (%s)", len(distinct), len(covered), len(pages), dir)
}

var digits = regexp.MustCompile(`[0-9]+`)

// elementShapes lists the shape of every element of a page.
func elementShapes(doc *html.Node) []string {
	var out []string
	walk(doc, func(n *html.Node) {
		if n.Type != html.ElementNode {
			return
		}
		var b strings.Builder
		b.WriteString(n.Data)
		for _, a := range n.Attr {
			b.WriteString(" " + a.Key)
			if a.Key != "href" && a.Key != "title" && a.Key != "value" && a.Key != "data-copy" && a.Key != "data-txid" && a.Key != "datetime" {
				b.WriteString("=" + digits.ReplaceAllString(a.Val, "#"))
			}
		}
		b.WriteString(" >")
		seen := map[string]bool{}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			k := ""
			switch {
			case c.Type == html.TextNode && strings.TrimSpace(c.Data) != "":
				k = "#text"
			case c.Type == html.ElementNode:
				k = c.Data + "." + attr(c, "class")
			}
			if k != "" && !seen[k] {
				seen[k] = true
				b.WriteString(" " + k)
			}
		}
		out = append(out, b.String())
	})
	return out
}

// pageKind is a page's path pattern: its first segment and query keys.
func pageKind(path string) string {
	u, err := url.Parse(path)
	if err != nil {
		return path
	}
	seg, _, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
	var keys []string
	for k := range u.Query() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return seg + "?" + strings.Join(keys, "&")
}

// duplicateID returns an id used twice in a page, or "".
func duplicateID(doc *html.Node) string {
	ids, dup := map[string]bool{}, ""
	walk(doc, func(n *html.Node) {
		if id := attr(n, "id"); n.Type == html.ElementNode && id != "" {
			if ids[id] && dup == "" {
				dup = id
			}
			ids[id] = true
		}
	})
	return dup
}
