package server

import (
	"bytes"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/tools/apitest"
	"github.com/openexplorer/blockbook/tools/openapicheck"
)

// The OpenAPI description (server/openapi/openapi.yaml) against the route
// table and the answers of the fixture's server; e2e/openapi_test.go
// checks it against the goldens and against real nodes.

func loadSpec(t *testing.T) *openapicheck.Checker {
	t.Helper()
	c, err := openapicheck.New(OpenAPISpec())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Every object schema is closed (an answer field the spec does not list
// fails validation), except the node's own tx JSON, which passes through.
func TestOpenAPISchemasClosed(t *testing.T) {
	open := loadSpec(t).OpenObjects()
	want := []string{"#/components/schemas/TxSpecific"}
	if !slices.Equal(open, want) {
		t.Errorf("object schemas without additionalProperties: false: %v, want only %v", open, want)
	}
}

// specOp turns a registered pattern ("GET /api/v2/utxo/{address...}") into
// the operation the spec must have ("GET /api/v2/utxo/{address}").
func specOp(pattern string) (openapicheck.Op, bool) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok || !strings.HasPrefix(path, "/api/v2") {
		return openapicheck.Op{}, false
	}
	path = strings.ReplaceAll(strings.ReplaceAll(path, "{$}", ""), "...}", "}")
	return openapicheck.Op{Method: method, Path: path}, true
}

// Every /api/v2 route the public server registers is described, and every
// described operation is a route the mux sends to its own handler (not to
// the catch-all of unknown /api paths).
func TestOpenAPIRoutesMatchSpec(t *testing.T) {
	c := loadSpec(t)
	p := NewPublic(newServed(t).svc, PublicConfig{}, apitest.Quiet(), prometheus.NewRegistry())
	{
		var routes []openapicheck.Op
		registered := map[string]bool{}
		for _, pattern := range p.patterns {
			// GET routes under /api take any method (see handle).
			registered[pattern], registered[strings.TrimPrefix(pattern, "GET ")] = true, true
			if op, ok := specOp(pattern); ok && !slices.Contains(routes, op) {
				routes = append(routes, op)
			}
		}
		for _, op := range routes {
			if !slices.Contains(c.Operations(), op) {
				t.Errorf("route %s is not in the OpenAPI spec", op)
			}
		}
		if len(routes) < 20 {
			t.Fatalf("only %d /api/v2 routes registered: %v", len(routes), routes)
		}
		sample := regexp.MustCompile(`\{[^}]+\}`)
		for _, op := range c.Operations() {
			if !slices.Contains(routes, op) {
				t.Errorf("spec operation %s is no route of the server", op)
			}
			req := httptest.NewRequest(op.Method, sample.ReplaceAllString(op.Path, "x1"), nil)
			if _, pattern := p.mux.Handler(req); !registered[pattern] || pattern == "/api/" {
				t.Errorf("spec operation %s is served by %q", op, pattern)
			}
		}
	}
}

// API routes are registered with handle (so that p.patterns lists them):
// no source file of the package puts an /api path on the mux directly.
func TestAPIRoutesUseHandle(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	direct := regexp.MustCompile(`mux\.Handle(Func)?\("([A-Z]+ )?/api[/"]`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if m := direct.Find(src); m != nil {
			t.Errorf("%s registers %s on the mux directly; use p.handle", f, m)
		}
	}
}

// The answers of every REST case of the fixture tests (200s and 400s)
// match the spec.
func TestOpenAPIFixtureAnswers(t *testing.T) {
	c := loadSpec(t)
	s := newServed(t)
	cases := append(append(restChainCases(s.f), restAccountCases(s.f)...), restOtherCases(t, s.f)...)
	errSchema, err := c.Schema("Error")
	if err != nil {
		t.Fatal(err)
	}
	checked := map[openapicheck.Op]bool{}
	var skipped []string
	for _, tc := range cases {
		method := tc.method
		if method == "" {
			method = "GET"
		}
		u, err := url.Parse(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		code, _, body := s.do(t, method, tc.path, tc.body)
		op, ok := matchRest(c, method, u.EscapedPath())
		if !ok && method != "GET" {
			// GET routes under /api take any method (see handle).
			op, ok = matchRest(c, "GET", u.EscapedPath())
		}
		if !ok && code == 200 {
			// The catch-all: an empty height is the tip's hash, anything
			// else the status object.
			target := "/api/v2/"
			if u.Path == "/api/v2/block-index/" {
				target = "/api/v2/block-index/0"
			}
			op, ok = c.Match("GET", target)
		}
		switch {
		case ok:
			err = c.CheckAnswer(op, code, body)
			checked[op] = true
		case strings.HasPrefix(u.Path, "/api/v2/") && code == 400:
			// A path no operation has (a missing id, an unknown endpoint).
			err = openapicheck.Validate(errSchema, body)
		default:
			skipped = append(skipped, tc.path)
			continue
		}
		if err != nil {
			t.Errorf("%s %s: %v\n%s", method, tc.path, err, truncate(string(body), 400))
		}
	}
	for _, p := range skipped {
		if strings.HasPrefix(p, "/api/v2") {
			t.Errorf("%s: no operation of the spec", p)
		}
	}
	if len(checked) < 15 {
		t.Errorf("only %d operations checked: %v", len(checked), checked)
	}
}

// matchRest is Match for the routes that take the rest of the path (an
// account descriptor sent unescaped): the rest counts as one segment.
func matchRest(c *openapicheck.Checker, method, path string) (openapicheck.Op, bool) {
	if op, ok := c.Match(method, path); ok {
		return op, true
	}
	parts := strings.SplitN(path, "/", 5) // "", "api", "v2", route, rest
	if len(parts) < 5 {
		return openapicheck.Op{}, false
	}
	return c.Match(method, strings.Join(parts[:4], "/")+"/"+strings.ReplaceAll(parts[4], "/", "%2F"))
}

// /openapi.yaml is the embedded spec; /api-docs renders every operation
// and schema as a self-contained page.
func TestOpenAPIServed(t *testing.T) {
	c := loadSpec(t)
	s := newServed(t)
	code, ctype, body := s.do(t, "GET", "/openapi.yaml", "")
	if code != 200 || !strings.HasPrefix(ctype, "application/yaml") || !bytes.Equal(body, OpenAPISpec()) {
		t.Fatalf("/openapi.yaml: %d %q, %d bytes", code, ctype, len(body))
	}
	code, ctype, body = s.do(t, "GET", "/api-docs", "")
	if code != 200 || ctype != "text/html; charset=utf-8" {
		t.Fatalf("/api-docs: %d %q %s", code, ctype, truncate(string(body), 300))
	}
	page := string(body)
	for _, op := range c.Operations() {
		if !strings.Contains(page, ">"+op.Path+"</a>") || !strings.Contains(page, "<code>"+op.Path+"</code>") {
			t.Errorf("/api-docs lacks %s", op)
		}
	}
	for name := range c.Doc.Components.Schemas {
		if !strings.Contains(page, `id="schema-`+name+`"`) {
			t.Errorf("/api-docs lacks schema %s", name)
		}
	}
	ids := map[string]bool{}
	for _, m := range regexp.MustCompile(`id="([^"]+)"`).FindAllStringSubmatch(page, -1) {
		if ids[m[1]] {
			t.Errorf("/api-docs: duplicate id %q", m[1])
		}
		ids[m[1]] = true
	}
	// Links resolve, and nothing is loaded from elsewhere.
	for _, m := range regexp.MustCompile(`href="#([^"]+)"`).FindAllStringSubmatch(page, -1) {
		if !strings.Contains(page, `id="`+m[1]+`"`) {
			t.Errorf("/api-docs links to missing #%s", m[1])
		}
	}
	if regexp.MustCompile(`(?i)(src|href)="(https?:)?//`).MatchString(page) || strings.Contains(page, "<script") {
		t.Error("/api-docs loads external resources or scripts")
	}
	for _, want := range []string{"<code>/api/v2/xpub/{xpub}</code>", "map of string to number", `<a href="#schema-Tx">Tx</a>`, "required"} {
		if !strings.Contains(page, want) {
			t.Errorf("/api-docs lacks %q", want)
		}
	}
}
