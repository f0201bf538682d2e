package e2e

// Fetching, parsing and crawling the HTML explorer's pages for the
// explorer's end-to-end tests.

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/html"
)

// htmlPage is one fetched page.
type htmlPage struct {
	path   string // as requested: path and query
	final  string // after redirects
	status int
	ctype  string
	body   []byte
	doc    *html.Node // nil unless the page is HTML
}

// explorerClient does not follow redirects, so tests see them.
var explorerClient = &http.Client{Timeout: httpClient.Timeout,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// fetchPage GETs base+path, following redirects within the server.
func fetchPage(t testing.TB, base, path string) *htmlPage {
	t.Helper()
	p, err := getPage(base, path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// getPage is fetchPage for any goroutine.
func getPage(base, path string) (*htmlPage, error) {
	final := path
	for hops := 0; ; hops++ {
		resp, err := explorerClient.Get(base + final)
		if err != nil {
			return nil, fmt.Errorf("GET %s: %v", final, err)
		}
		if loc := resp.Header.Get("Location"); resp.StatusCode/100 == 3 && loc != "" && hops < 5 {
			resp.Body.Close()
			u, err := url.Parse(loc)
			if err != nil || u.Host != "" {
				return nil, fmt.Errorf("GET %s: redirect to %q leaves the server", final, loc)
			}
			final = u.RequestURI()
			continue
		}
		p, err := parseResponse(path, resp)
		if p != nil {
			p.final = final
		}
		return p, err
	}
}

// parseResponse reads an answer, parsing it when it is HTML.
func parseResponse(path string, resp *http.Response) (*htmlPage, error) {
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	p := &htmlPage{path: path, final: path, status: resp.StatusCode, ctype: resp.Header.Get("Content-Type"), body: body}
	if strings.HasPrefix(p.ctype, "text/html") {
		if p.doc, err = html.Parse(bytes.NewReader(body)); err != nil {
			return nil, fmt.Errorf("%s: unparsable HTML: %v", path, err)
		}
	}
	return p, nil
}

// walk visits n and its descendants in document order.
func walk(n *html.Node, fn func(*html.Node)) {
	if n == nil {
		return
	}
	fn(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, fn)
	}
}

func findAll(n *html.Node, pred func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	walk(n, func(c *html.Node) {
		if pred(c) {
			out = append(out, c)
		}
	})
	return out
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func isElem(n *html.Node, tag string) bool { return n.Type == html.ElementNode && n.Data == tag }

func hasClass(n *html.Node, class string) bool {
	return n.Type == html.ElementNode && slices.Contains(strings.Fields(attr(n, "class")), class)
}

var spaces = regexp.MustCompile(`\s+`)

// text is n's visible text with whitespace collapsed.
func text(n *html.Node) string {
	var b strings.Builder
	walk(n, func(c *html.Node) {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	})
	return strings.TrimSpace(spaces.ReplaceAllString(b.String(), " "))
}

// byID returns the element with the id, or nil.
func (p *htmlPage) byID(id string) *html.Node {
	if found := findAll(p.doc, func(n *html.Node) bool { return n.Type == html.ElementNode && attr(n, "id") == id }); len(found) > 0 {
		return found[0]
	}
	return nil
}

// textOf is the text of the element with the id; it fails when missing.
func (p *htmlPage) textOf(t testing.TB, id string) string {
	t.Helper()
	n := p.byID(id)
	if n == nil {
		t.Fatalf("%s: no element #%s", p.path, id)
	}
	return text(n)
}

// hrefs lists the links of n's <a> elements.
func hrefs(n *html.Node) []string {
	var out []string
	for _, a := range findAll(n, func(c *html.Node) bool { return isElem(c, "a") }) {
		out = append(out, attr(a, "href"))
	}
	return out
}

// relLink returns the href of the first link with rel=rel inside an
// element of the class (the pager, the block's previous/next nav), or "".
func (p *htmlPage) relLink(class, rel string) string {
	for _, box := range findAll(p.doc, func(c *html.Node) bool { return hasClass(c, class) }) {
		for _, a := range findAll(box, func(c *html.Node) bool { return isElem(c, "a") && attr(c, "rel") == rel }) {
			return attr(a, "href")
		}
	}
	return ""
}

// references lists every URL the page refers to: links, stylesheets,
// scripts, icons and form actions.
func (p *htmlPage) references() []string {
	var out []string
	walk(p.doc, func(n *html.Node) {
		if n.Type != html.ElementNode {
			return
		}
		for _, k := range []string{"href", "src", "action"} {
			if v := attr(n, k); v != "" {
				out = append(out, v)
			}
		}
	})
	return out
}

// cardTxids lists the txids of the tx cards (article.tx) under n, in order.
func cardTxids(n *html.Node) []string {
	var out []string
	for _, card := range findAll(n, func(c *html.Node) bool { return isElem(c, "article") && hasClass(c, "tx") }) {
		for _, h := range hrefs(card) {
			if strings.HasPrefix(h, "/tx/") {
				out = append(out, strings.TrimPrefix(h, "/tx/"))
				break
			}
		}
	}
	return out
}

// crawlResult is every page reachable from the start pages.
type crawlResult struct {
	pages map[string]*htmlPage // by path and query
	// fragments are the #ids links point at, by target path: each must
	// exist on the target page.
	fragments map[string][]string
	// from records one page linking to each path, for failure messages.
	from map[string]string
}

// crawlExplorer fetches every page reachable from start over internal
// links (8 at a time). API answers and assets are fetched but not followed.
func crawlExplorer(t testing.TB, base string, start ...string) *crawlResult {
	t.Helper()
	c := &crawlResult{pages: map[string]*htmlPage{}, fragments: map[string][]string{}, from: map[string]string{}}
	var mu sync.Mutex
	seen := map[string]bool{}
	queue := make(chan string, 1<<20)
	var pending sync.WaitGroup
	add := func(from, ref string) {
		u, err := url.Parse(ref)
		if err != nil || u.Scheme != "" || u.Host != "" || !strings.HasPrefix(u.Path, "/") {
			t.Errorf("%s links outside the server or to a malformed URL: %q", from, ref)
			return
		}
		if u.Query().Has("range") {
			return // the balance chart's other ranges: TestE2EExplorerCharts fetches them
		}
		key := u.Path
		if u.RawQuery != "" {
			key += "?" + u.RawQuery
		}
		mu.Lock()
		defer mu.Unlock()
		if u.Fragment != "" {
			c.fragments[key] = append(c.fragments[key], u.Fragment)
		}
		if seen[key] {
			return
		}
		seen[key] = true
		c.from[key] = from
		pending.Add(1)
		queue <- key
	}
	var workers sync.WaitGroup
	for range 8 {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for path := range queue {
				p, err := getPage(base, path)
				if err != nil {
					t.Error(err)
					pending.Done()
					continue
				}
				mu.Lock()
				c.pages[path] = p
				mu.Unlock()
				if p.doc != nil && !strings.HasPrefix(path, "/api/") {
					for _, ref := range p.references() {
						add(path, ref)
					}
				}
				pending.Done()
			}
		}()
	}
	for _, s := range start {
		add("(start)", s)
	}
	pending.Wait()
	close(queue)
	workers.Wait()
	return c
}

// html lists the crawled explorer pages (HTML answers).
func (c *crawlResult) html() []*htmlPage {
	var out []*htmlPage
	for _, p := range c.pages {
		if p.doc != nil {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b *htmlPage) int { return strings.Compare(a.path, b.path) })
	return out
}

// page returns a crawled page, failing when the crawl did not reach it.
func (c *crawlResult) page(t testing.TB, path string) *htmlPage {
	t.Helper()
	p := c.pages[path]
	if p == nil {
		t.Fatalf("no page links to %s", path)
	}
	return p
}

// artifactDir is where explorer tests leave pages and screenshots:
// $BLOCKBOOK_ARTIFACTS/<name> when set (CI), else a test temp dir.
func artifactDir(t testing.TB, name string) string {
	t.Helper()
	root := os.Getenv("BLOCKBOOK_ARTIFACTS")
	if root == "" {
		return t.TempDir()
	}
	dir := filepath.Join(root, name)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
