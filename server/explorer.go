package server

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/static"
)

// The HTML explorer: server-rendered pages built on the same api.Service as
// REST, with templates and assets embedded from static/. Pages are rendered
// on every request (nothing is cached), so a new block shows at once.

// Page sizes, as in Blockbook's explorer.
const (
	explorerTxsPerPage     = 25
	explorerBlocksPerPage  = 50
	explorerMempoolPerPage = 50
	explorerIndexBlocks    = 10
)

// explorer renders the pages.
type explorer struct {
	svc     api.Service
	caps    api.Capabilities
	log     *slog.Logger
	metrics *httpMetrics
	timeout time.Duration
	pages   map[string]*lazyPage
	assets  *assets
	nfts    *nftFetcher // NFT metadata (explorer_nftmeta.go)
	// maxWeight is a full block's weight, the 100% of a block's fill.
	maxWeight uint32

	coin atomic.Pointer[coinInfo] // static coin parameters, fetched once

	runesState runesState // whether the Runes index is on (explorer_runes.go)
}

// coinInfo is what every page shows of the coin.
type coinInfo struct {
	Name, Shortcut string
	Decimals       int
}

// pageData is what the layout template receives.
type pageData struct {
	Title string
	Coin  coinInfo
	Query string // the search box's text
	Page  any    // the page's own data
	Pager *pager
	Fiat  *fiatView // the fiat currency chosen; nil without rates
}

// result is what a page handler produces: a page to render or a redirect.
type result struct {
	tmpl     string
	status   int
	title    string
	query    string
	page     any
	pager    *pager
	redirect string
}

// explorerRoutes registers the explorer's pages on the public server. The
// paths are Blockbook's, so links people know keep working.
func (p *Public) explorerRoutes() {
	e := &explorer{svc: p.svc, caps: p.caps, log: p.log.With("part", "explorer"), metrics: p.metrics, timeout: p.cfg.RequestTimeout,
		assets: loadAssets(static.Assets), maxWeight: cmp.Or(p.cfg.MaxBlockWeight, defaultBlockWeight),
		nfts: newNFTFetcher(cmp.Or(p.cfg.NFTGateway, defaultNFTGateway), nftFetchTimeout)}
	e.pages = e.parseTemplates()
	route := func(pattern, name string, h func(*http.Request) (*result, error)) {
		p.mux.HandleFunc(pattern, e.handler(name, h))
	}
	route("GET /{$}", "index", e.index)
	route("GET /blocks", "blocks", e.blocks)
	route("GET /block/{id}", "block", e.block)
	if u := p.cfg.ExplorerURL; u != "" {
		// As Blockbook: links from wallets to a tx or an address go to the
		// operator's explorer; the other pages stay ours.
		redirect := func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, joinURL(u, r.URL.Path), http.StatusFound)
		}
		p.mux.HandleFunc("GET /tx/{txid}", redirect)
		p.mux.HandleFunc("GET /address/{address}", redirect)
	} else {
		route("GET /tx/{txid}", "tx", e.tx)
		route("GET /address/{address}", "address", e.address)
	}
	route("GET /spending/{txid}/{vout}", "spending", e.spending)
	route("GET /xpub/{xpub...}", "xpub", e.xpub)
	route("GET /search", "search", e.search)
	route("GET /search/", "search", e.search)
	route("GET /sendtx", "sendtx", e.sendTxForm)
	route("POST /sendtx", "sendtx", e.sendTx)
	route("GET /mempool", "mempool", e.mempool)
	route("GET /nft/{contract}/{id}", "nft", e.nft)
	route("GET /rune/{rune}", "rune", e.runePage)
	route("GET /runes", "runes", e.runeList)
	p.mux.Handle("GET /static/{name}", e.assets)
	p.mux.Handle("GET /favicon.ico", http.RedirectHandler(e.assets.url("favicon.svg"), http.StatusMovedPermanently))
	// Anything else outside /api: the explorer's 404 page.
	route("/", "unknown", func(r *http.Request) (*result, error) {
		return nil, &api.Error{Msg: "There is no page at " + truncate(r.URL.Path, 100) + ".", Err: api.ErrNotFound}
	})
}

// sharedTemplates are parsed into every page; the other files are pages.
var sharedTemplates = []string{"layout.html", "partials.html", "charts.html", "fiat.html", "runes.html"}

func (e *explorer) parseTemplates() map[string]*lazyPage {
	base := template.Must(template.New("").Funcs(e.funcs()).Funcs(e.fiatFuncs()).Funcs(e.runeFuncs()).Funcs(txIOFuncs).ParseFS(static.Templates, sharedTemplates...))
	names, err := fs.Glob(static.Templates, "*.html")
	if err != nil {
		panic(err)
	}
	pages := map[string]*lazyPage{}
	for _, n := range names {
		if slices.Contains(sharedTemplates, n) {
			continue
		}
		p := &lazyPage{base: base, file: n}
		template.Must(p.parse()) // a broken page fails the start; the parse is dropped (lazyPage)
		pages[strings.TrimSuffix(n, ".html")] = p
	}
	return pages
}

// handler wraps a page with the timeout, panic recovery, metrics, error
// pages and rendering.
func (e *explorer) handler(name string, h func(*http.Request) (*result, error)) http.HandlerFunc {
	endpoint := "explorer-" + name
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ctx, cancel := context.WithTimeout(r.Context(), e.timeout)
		defer cancel()
		r = r.WithContext(ctx)
		code := http.StatusOK
		defer func() {
			if v := recover(); v != nil {
				e.log.Error("panic in page", "page", name, "panic", v, "stack", string(debug.Stack()))
				code = e.write(w, r, e.errorPage(r, name, errors.New("panic")))
			}
			e.metrics.observe(endpoint, code, time.Since(start))
		}()
		// The pages' charts and flows take the coin's unit from
		// loadedCoin: ask for it first, or the first page after a start
		// shows no unit (found by the screenshot test).
		e.coinInfo(ctx)
		r = e.withFiat(r)
		res, err := h(r)
		if err != nil {
			res = e.errorPage(r, name, err)
		}
		code = e.write(w, r, res)
	}
}

// errorPage is the one place errors become explorer pages: unknown objects
// 404, user mistakes 400 with their message, an unreachable node or a
// request over its time limit 503, our own faults 500 (logged, no details
// on the page).
func (e *explorer) errorPage(r *http.Request, name string, err error) *result {
	msg := func(status int, heading, class, text string, search bool) *result {
		return &result{tmpl: "message", status: status, title: heading, query: r.URL.Query().Get("q"),
			page: messagePage{Heading: heading, Class: class, Text: text, Search: search}}
	}
	ue, isUser := api.AsUserError(err)
	switch {
	case isUser && api.IsNotFound(err):
		return msg(http.StatusNotFound, "Not found", "warn", ue.Msg, true)
	case isUser:
		return msg(http.StatusBadRequest, "Cannot show this", "bad", ue.Msg, true)
	case errors.Is(err, bchain.ErrNodeUnavailable):
		e.log.Warn("page failed: node unavailable", "page", name, "path", r.URL.Path, "err", err)
		return msg(http.StatusServiceUnavailable, "Temporarily unavailable", "warn",
			"The blockchain node is not responding. Please try again in a moment.", false)
	case errors.Is(err, context.DeadlineExceeded):
		e.log.Warn("page failed: timed out", "page", name, "path", r.URL.Path, "err", err)
		return msg(http.StatusServiceUnavailable, "Temporarily unavailable", "warn",
			"This page took too long to prepare. Please try again in a moment.", false)
	}
	e.log.Error("page failed", "page", name, "path", r.URL.Path, "err", err)
	return msg(http.StatusInternalServerError, "Something went wrong", "bad",
		"The server could not show this page. The problem has been logged; please try again later.", false)
}

// messagePage is the data of message.html (errors, not found, notices).
type messagePage struct {
	Heading, Class, Text string
	Search               bool
}

// write renders a result.
func (e *explorer) write(w http.ResponseWriter, r *http.Request, res *result) int {
	if res.redirect != "" {
		http.Redirect(w, r, res.redirect, http.StatusFound)
		return http.StatusFound
	}
	status := res.status
	if status == 0 {
		status = http.StatusOK
	}
	data := pageData{Title: res.title, Coin: e.coinInfo(r.Context()), Query: res.query, Page: res.page, Pager: res.pager,
		Fiat: e.pageFiat(w, r)}
	var buf bytes.Buffer
	if err := e.pages[res.tmpl].ExecuteTemplate(&buf, "layout", data); err != nil {
		e.log.Error("rendering page failed", "template", res.tmpl, "path", r.URL.Path, "err", err)
		status, buf = http.StatusInternalServerError, *bytes.NewBufferString(fallbackPage)
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
	sendPage(w, r, status, buf.Bytes()) // explorer_gzip.go
	return status
}

// fallbackPage is answered when a template fails (a bug, logged).
const fallbackPage = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Something went wrong</title></head>
<body><h1>Something went wrong</h1><p>The server could not show this page. <a href="/">Start page</a></p></body></html>
`

// coinInfo returns the coin's name, shortcut and decimals, asking the
// service until it answers once (they never change).
func (e *explorer) coinInfo(ctx context.Context) coinInfo {
	if c := e.coin.Load(); c != nil {
		return *c
	}
	info, err := e.svc.Info(ctx)
	if err != nil {
		e.log.Warn("coin info unavailable", "err", err)
		return e.loadedCoin()
	}
	c := &coinInfo{Name: info.Name, Shortcut: info.Shortcut, Decimals: info.Decimals}
	e.coin.Store(c)
	return *c
}

// loadedCoin is coinInfo without asking the service: what the template
// functions use (write asked before rendering).
func (e *explorer) loadedCoin() coinInfo {
	if c := e.coin.Load(); c != nil {
		return *c
	}
	return coinInfo{Name: "Blockchain", Decimals: 8}
}

// joinURL appends a request path to the external explorer's base URL with
// exactly one slash between them.
func joinURL(base, path string) string {
	return strings.TrimSuffix(base, "/") + "/" + strings.TrimPrefix(path, "/")
}
