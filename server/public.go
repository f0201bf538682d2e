// Package server exposes the api over HTTP: the public REST API, the
// websocket API and the HTML explorer, and the internal metrics and health
// endpoints. It maps errors to the wire in one place (writeError).
package server

import (
	"github.com/openexplorer/blockbook/internal/listen"

	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
)

// PublicConfig configures the public server.
type PublicConfig struct {
	Addr string
	// Gate, when set, is the process-wide bound on expensive requests
	// (those requestCost weighs more than 1), shared with the other fronts.
	Gate *listen.Gate
	// Wrap, when set, wraps the server's handler (a path prefix).
	Wrap func(http.Handler) http.Handler
	// RequestTimeout bounds the work of one request.
	RequestTimeout time.Duration
	// Listener are the listener kit's timeouts (zero: the defaults for
	// RequestTimeout); its caps are applied by whoever listens.
	Listener listen.HTTP
	// Websocket, when set, is served at /websocket.
	Websocket *Websocket
	// ExplorerURL, when set (Blockbook's -explorer), makes the explorer's tx
	// and address pages redirect to an external explorer with the same path.
	ExplorerURL string
	// NFTGateway is the IPFS gateway the NFT page reads ipfs:// metadata
	// through ("": Blockbook's, "none": not read).
	NFTGateway string
	// Limiter, when set, limits each client (see limits.go).
	Limiter *RESTLimiter
	// MaxBlockWeight is a full block's weight (Bitcoin-type chains), what
	// the explorer's block fill is measured against; 0: 4,000,000.
	MaxBlockWeight uint32
}

// Public serves the REST API.
type Public struct {
	svc     api.Service
	caps    api.Capabilities // what svc offers beyond the core, read once
	cfg     PublicConfig
	log     *slog.Logger
	metrics *httpMetrics
	mux     *http.ServeMux
	srv     *http.Server
	// patterns are the API routes registered with handle, in order (the
	// OpenAPI test compares them with the spec).
	patterns []string
}

// NewPublic builds the public server; call Serve to start it.
func NewPublic(svc api.Service, cfg PublicConfig, log *slog.Logger, reg prometheus.Registerer) *Public {
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 60 * time.Second
	}
	p := &Public{svc: svc, caps: svc.Capabilities(), cfg: cfg, log: log.With("subsystem", "public"), metrics: newHTTPMetrics(reg), mux: http.NewServeMux()}
	p.routes()
	var h http.Handler = p.mux
	// The per-client budget before the process-wide gate: a client over
	// its own is refused without taking a place.
	h = cfg.Gate.Wrap("rest", h, func(r *http.Request) bool { return requestCost(r) > 1 })
	if cfg.Limiter != nil {
		h = cfg.Limiter.Wrap(h)
	}
	if cfg.Wrap != nil {
		h = cfg.Wrap(h)
	}
	// Outermost, so that a preflight never reaches a handler or a limit.
	h = corsPreflight(h)
	kit := cfg.Listener
	if kit.Timeouts == (listen.Timeouts{}) {
		kit.Timeouts = listen.DefaultTimeouts(cfg.RequestTimeout)
	}
	kit.Log = p.log
	p.srv = kit.Server(h)
	p.srv.Addr = cfg.Addr
	return p
}

// Handler returns the HTTP handler (for tests).
func (p *Public) Handler() http.Handler { return corsPreflight(p.mux) }

// Serve listens until Shutdown. It reports a listen failure at once.
func (p *Public) Serve(ln net.Listener) error {
	p.log.Info("public server listening", "addr", ln.Addr().String())
	if err := p.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown stops accepting requests and waits for running ones, the
// websocket's included (the HTTP server does not track hijacked
// connections).
func (p *Public) Shutdown(ctx context.Context) error {
	var wsErr error
	if p.cfg.Websocket != nil {
		wsErr = p.cfg.Websocket.Shutdown(ctx)
	}
	return errors.Join(wsErr, p.srv.Shutdown(ctx))
}

func (p *Public) routes() {
	status := func(r *http.Request) (any, error) { return p.svc.Status(r.Context()) }
	for _, pattern := range []string{"GET /api", "GET /api/{$}", "GET /api/v2", "GET /api/v2/{$}", "GET /api/status"} {
		p.handle(pattern, "status", status)
	}
	p.handle("GET /api/v2/block-index/{height}", "block-index", func(r *http.Request) (any, error) {
		return p.svc.BlockIndex(r.Context(), r.PathValue("height"))
	})
	p.handle("GET /api/v2/block/{id}", "block", func(r *http.Request) (any, error) {
		return p.svc.Block(r.Context(), r.PathValue("id"), api.ParseInt(r.URL.Query().Get("page")), 0)
	})
	p.handle("GET /api/v2/tx/{txid}", "tx", func(r *http.Request) (any, error) {
		if api.ParseBool(r.URL.Query().Get("runes")) {
			if p.caps.Runes == nil {
				return nil, p.caps.NotSupported(api.CapRunes)
			}
			return p.caps.Runes.TxWithRunes(r.Context(), r.PathValue("txid"))
		}
		return p.svc.Tx(r.Context(), r.PathValue("txid"))
	})
	p.handle("GET /api/v2/address/{address}", "address", func(r *http.Request) (any, error) {
		return p.svc.Address(r.Context(), r.PathValue("address"), api.ParseAddressQuery(r.URL.Query()))
	})
	p.handle("GET /api/v2/sendtx/{hex}", "sendtx", func(r *http.Request) (any, error) {
		return p.svc.SendTx(r.Context(), r.PathValue("hex"))
	})
	sendPost := func(r *http.Request) (any, error) {
		body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, api.MaxTxHexLen+1))
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, &api.Error{Msg: "Request body too large"}
		}
		if err != nil {
			return nil, &api.Error{Msg: "Cannot read request body", Err: err}
		}
		return p.svc.SendTx(r.Context(), string(body))
	}
	p.handle("POST /api/v2/sendtx/{$}", "sendtx", sendPost)
	p.handle("POST /api/v2/sendtx", "sendtx", sendPost)
	p.handle("GET /api/v2/balancehistory/{address...}", "balancehistory", func(r *http.Request) (any, error) {
		q := r.URL.Query()
		return p.svc.BalanceHistory(r.Context(), r.PathValue("address"), api.BalanceHistoryQuery{
			From: int64(max(api.ParseInt(q.Get("from")), 0)), To: int64(max(api.ParseInt(q.Get("to")), 0)),
			GroupBy: uint32(max(api.ParseInt(q.Get("groupBy")), 0)), Currencies: splitNonEmpty(q.Get("fiatcurrency")),
			Gap: api.ParseInt(q.Get("gap")), REST: true,
		})
	})
	if p.cfg.Websocket != nil {
		p.mux.Handle("GET /websocket", p.cfg.Websocket)
		p.mux.HandleFunc("GET /test-websocket.html", testWebsocketPage)
	}
	p.capabilityRoutes()
	p.legacyRoutes() // /api/v1/ and the unversioned /api/<x>/ paths
	p.handle("GET /api/v2/tickers/", "tickers", p.tickers)
	p.handle("GET /api/v2/multi-tickers/", "multi-tickers", p.multiTickers)
	p.handle("GET /api/v2/tickers-list/", "tickers-list", p.tickersList)
	p.openAPIRoutes()  // /openapi.yaml and /api-docs
	p.explorerRoutes() // the HTML explorer, its start page at /
	// Everything else under /api; every registered route is more specific
	// and wins.
	p.handle("/api/", "unknown", p.unknownAPI)
}

// missingID are Blockbook's answers to a route called with its id empty
// (e.g. /api/v2/tx/), which reaches the catch-all.
var missingID = map[string]string{
	"tx": "Missing txid", "tx-specific": "Missing txid", "rawtx": "Missing txid",
	"address": "Missing address", "contract": "Missing contract",
	"sendtx": "Missing tx blob", "estimatefee": "Missing parameter 'number of blocks'",
	"block": "Block not found", "rawblock": "Block not found", "feestats": "Block not found",
}

// unknownAPI answers what no route takes under /api: a v2 route without its
// id as Blockbook's handler for it does (an empty height is the tip's hash),
// anything else the status object, as Blockbook's catch-all does.
func (p *Public) unknownAPI(r *http.Request) (any, error) {
	if name, ok := strings.CutPrefix(r.URL.Path, "/api/v2/"); ok && strings.HasSuffix(name, "/") {
		name = strings.TrimSuffix(name, "/")
		if name == "block-index" {
			return p.svc.BlockIndex(r.Context(), "")
		}
		if msg, ok := missingID[name]; ok {
			return nil, &api.Error{Msg: msg}
		}
	}
	return p.svc.Status(r.Context())
}

// handle wraps an API handler with the timeout, panic recovery, metrics and
// the JSON encoding of results and errors. A GET route under /api/ takes
// any method, as Blockbook's routes do (else the catch-all would answer a
// POST to it with the status); the sendtx routes stay GET, their POST
// forms reading the body.
func (p *Public) handle(pattern, endpoint string, h func(*http.Request) (any, error)) {
	p.patterns = append(p.patterns, pattern)
	if rest, ok := strings.CutPrefix(pattern, "GET "); ok && strings.HasPrefix(rest, "/api") && !strings.Contains(rest, "/sendtx/") {
		pattern = rest
	}
	p.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ctx, cancel := context.WithTimeout(r.Context(), p.cfg.RequestTimeout)
		defer cancel()
		r = r.WithContext(ctx)
		code := http.StatusOK
		defer func() {
			if e := recover(); e != nil {
				p.log.Error("panic in handler", "endpoint", endpoint, "panic", e, "stack", string(debug.Stack()))
				code = writeJSON(w, http.StatusInternalServerError, errorBody{"Internal server error"})
			}
			p.metrics.observe(endpoint, code, time.Since(start))
		}()
		data, err := h(r)
		if err != nil {
			code = p.writeError(w, r, endpoint, err)
			return
		}
		code = writeJSON(w, http.StatusOK, data)
	})
}

// unavailable says why err is a 503 on REST and the websocket, and how to
// log it: a node that does not answer, or a request past its time limit
// (RequestTimeout), which is not the node's fault and is not said to be.
func unavailable(err error) (msg, logMsg string, ok bool) {
	switch {
	case errors.Is(err, bchain.ErrNodeUnavailable):
		return "Service temporarily unavailable: the blockchain node is not responding", "request failed: node unavailable", true
	case errors.Is(err, context.DeadlineExceeded):
		return "Service temporarily unavailable: the request took too long", "request failed: timed out", true
	}
	return "", "", false
}

type errorBody struct {
	Error string `json:"error"`
}

// writeError is the one place errors become HTTP answers: user mistakes and
// unknown objects are 400 with their message (Blockbook's convention), an
// unreachable node or a request over its time limit 503, anything else 500
// without details.
func (p *Public) writeError(w http.ResponseWriter, r *http.Request, endpoint string, err error) int {
	if ue, ok := api.AsUserError(err); ok {
		return writeJSON(w, http.StatusBadRequest, errorBody{ue.Msg})
	}
	if msg, logMsg, ok := unavailable(err); ok {
		p.log.Warn(logMsg, "endpoint", endpoint, "path", r.URL.Path, "err", err)
		return writeJSON(w, http.StatusServiceUnavailable, errorBody{msg})
	}
	p.log.Error("request failed", "endpoint", endpoint, "path", r.URL.Path, "err", err)
	return writeJSON(w, http.StatusInternalServerError, errorBody{"Internal server error"})
}

func writeJSON(w http.ResponseWriter, code int, data any) int {
	h := w.Header()
	listen.SafeHeaders(w, "application/json; charset=utf-8")
	if raw, ok := data.(json.RawMessage); ok {
		w.WriteHeader(code)
		_, _ = w.Write(append(raw, '\n'))
		return code
	}
	// An Encoder writes what Marshal returns and a newline (HTML escaped
	// alike), into a pooled buffer: no copy of the answer out of
	// Marshal's buffer and none to append the newline.
	buf := answerBufs.Get().(*bytes.Buffer)
	defer putAnswerBuf(buf)
	buf.Reset()
	var err error
	if e, ok := data.(jsonEncoder); ok {
		err = e.EncodeJSON(buf)
	} else {
		err = json.NewEncoder(buf).Encode(data)
	}
	if err != nil {
		code = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"error":"Internal server error"}` + "\n")
	}
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
	return code
}

// jsonEncoder is an answer that writes itself as a json.Encoder would,
// faster (api.Address).
type jsonEncoder interface{ EncodeJSON(*bytes.Buffer) error }

// answerBufs holds writeJSON's buffers; one that grew past
// maxPooledAnswer is dropped rather than kept for the next answer.
var answerBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledAnswer = 4 << 20

func putAnswerBuf(b *bytes.Buffer) {
	if b.Cap() <= maxPooledAnswer {
		answerBufs.Put(b)
	}
}

// corsPreflight answers a CORS preflight (OPTIONS) to an API path itself,
// 204 with what a browser needs to go on with its request, so that it costs
// no handler work and counts against no limit. The API needs no
// credentials, hence the wildcard origin. Other OPTIONS requests pass on.
func corsPreflight(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodOptions || !isAPIPath(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Accept, Content-Type, X-Requested-With")
		h.Set("Access-Control-Max-Age", "86400")
		h.Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusNoContent)
	})
}

// isAPIPath reports whether path is /api or under it, behind any -public
// path prefix (the preflight runs before the prefix is stripped).
func isAPIPath(path string) bool {
	return strings.HasSuffix(path, "/api") || strings.Contains(path, "/api/")
}

// splitNonEmpty splits a comma-separated parameter, dropping empty items.
func splitNonEmpty(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
