package server

import (
	_ "embed"
	"net/http"
	"strconv"
)

// The OpenAPI description of REST v2, embedded so that /openapi.yaml and
// /api-docs need nothing at run time. Tests check it against the routes
// and against real answers (server/openapi_test.go, e2e/openapi_test.go).
var (
	//go:embed openapi/openapi.yaml
	openAPISpec []byte
	//go:embed openapi/page.html
	openAPIPageTemplate string
)

// OpenAPISpec returns the embedded OpenAPI description (for tests).
func OpenAPISpec() []byte { return openAPISpec }

// openAPIRoutes serves the description as YAML and as a readable page,
// rendered here once: the page is plain HTML with its own style, so it
// works offline and without scripts.
func (p *Public) openAPIRoutes() {
	p.mux.HandleFunc("GET /openapi.yaml", func(w http.ResponseWriter, _ *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/yaml; charset=utf-8")
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Content-Length", strconv.Itoa(len(openAPISpec)))
		_, _ = w.Write(openAPISpec)
	})
	page, err := renderAPIDocs(openAPISpec, openAPIPageTemplate)
	if err != nil {
		// Tests render the embedded spec, so this is a broken build.
		p.log.Error("cannot render /api-docs", "err", err)
	}
	p.mux.HandleFunc("GET /api-docs", func(w http.ResponseWriter, _ *http.Request) {
		if err != nil {
			writeJSON(w, http.StatusInternalServerError, errorBody{"Internal server error"})
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
		h.Set("Content-Length", strconv.Itoa(len(page)))
		_, _ = w.Write(page)
	})
}
