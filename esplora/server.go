// Package esplora serves Blockstream's Esplora REST API (the API of
// electrs' new-index and blockstream.info) under /api, from the index
// through api: Service for the core, ScriptQueries for per-script history,
// balances and UTXOs, and EsploraQueries for txs with prevouts, blocks and
// the mempool. Shapes, paging and error texts follow electrs' REST server.
package esplora

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/internal/listen"
)

// Esplora's page sizes and limits (electrs' constants).
const (
	chainTxsPerPage    = 25
	maxMempoolTxs      = 50
	blocksPerPage      = 10
	addressSearchLimit = 10
	recentTxs          = 10
	// DefaultMaxUtxos is electrs' default utxos_limit.
	DefaultMaxUtxos = 500
	// DefaultMaxHistory caps the history one address page reads.
	DefaultMaxHistory = 250_000
	// maxBodySize bounds POST /tx (electrs: 1 MB).
	maxBodySize = 1_000_000
)

// AddressSearcher finds the indexed addresses that begin with a prefix, in
// order, up to limit (the address-prefix index).
type AddressSearcher interface {
	AddressesWithPrefix(ctx context.Context, prefix string, limit int) ([]string, error)
}

// Options configure the server.
type Options struct {
	// AddressSearch answers address-prefix; nil answers Esplora's
	// "address search disabled".
	AddressSearch AddressSearcher
	// MaxUtxos caps a utxo answer (0: DefaultMaxUtxos).
	MaxUtxos int
	// MaxHistory caps the txs of a script that history answers read (0:
	// DefaultMaxHistory).
	MaxHistory int
	// RequestTimeout bounds one request (0: 60 s).
	RequestTimeout time.Duration
	// Now is the clock of the difficulty adjustment (nil: time.Now).
	Now func() time.Time
	// WS bounds the clients of mempool.space's websocket (/api/v1/ws).
	WS  WSConfig
	Log *slog.Logger
	// Registerer takes the front's metrics (nil: none registered).
	Registerer prometheus.Registerer
}

// Server is the Esplora REST front; it is an http.Handler serving /api/...
type Server struct {
	svc     api.Service
	scripts api.ScriptQueries
	q       api.EsploraQueries
	caps    api.Capabilities
	opts    Options
	log     *slog.Logger
	ws      *mpWS
	// hashrates caches mining/hashrate answers per tip and minute.
	hashrates hashrateCache
}

// New builds the front over a Bitcoin-type service.
func New(svc api.Service, scripts api.ScriptQueries, q api.EsploraQueries, opts Options) *Server {
	if opts.MaxUtxos <= 0 {
		opts.MaxUtxos = DefaultMaxUtxos
	}
	if opts.MaxHistory <= 0 {
		opts.MaxHistory = DefaultMaxHistory
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = 60 * time.Second
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Server{svc: svc, scripts: scripts, q: q, caps: svc.Capabilities(), opts: opts,
		log: opts.Log.With("subsystem", "esplora")}
	s.ws = newMpWS(s, opts.WS)
	return s
}

// CloseWS drops the websocket's clients (http.Server.Shutdown leaves
// hijacked connections alone).
func (s *Server) CloseWS() { s.ws.close() }

// WSQueuedBytes is the bytes queued to the websocket's clients or being
// written to them.
func (s *Server) WSQueuedBytes() int64 { return s.ws.queued.Used() }

// httpError is an answer other than 200: Esplora answers errors as plain
// text with a status code.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func badRequest(msg string) error { return &httpError{status: http.StatusBadRequest, msg: msg} }
func notFound(msg string) error   { return &httpError{status: http.StatusNotFound, msg: msg} }

// reply is a successful answer.
type reply struct {
	contentType string
	body        []byte
}

func jsonReply(v any) (*reply, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode answer: %w", err)
	}
	return &reply{"application/json", b}, nil
}

func textReply(s string) (*reply, error) { return &reply{"text/plain", []byte(s)}, nil }

// ServeHTTP answers a request under /api.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/api/v1/ws" && r.Method == http.MethodGet {
		s.ws.ServeHTTP(w, r)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.RequestTimeout)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("panic in esplora handler", "path", r.URL.Path, "panic", p, "stack", string(debug.Stack()))
			writeText(w, http.StatusInternalServerError, "text/plain", []byte("Internal server error"))
		}
	}()
	rep, err := s.route(ctx, r)
	if err != nil {
		var he *httpError
		if !errors.As(err, &he) {
			he = s.classify(r, err)
		}
		// mempool.space's routes (/api/v1) answer errors as its handleError.
		if strings.HasPrefix(r.URL.Path, "/api/v1/") && acceptsJSON(r) {
			body, _ := json.Marshal(map[string]string{"error": he.msg})
			writeText(w, he.status, "application/json", body)
			return
		}
		writeText(w, he.status, "text/plain", []byte(he.msg))
		return
	}
	writeText(w, http.StatusOK, rep.contentType, rep.body)
}

// classify maps an error from api: a user error (bad input, the node
// refusing a tx) is a 400 with its text, anything else is ours.
func (s *Server) classify(r *http.Request, err error) *httpError {
	if ue, ok := api.AsUserError(err); ok {
		return &httpError{status: http.StatusBadRequest, msg: ue.Msg}
	}
	if errors.Is(err, bchain.ErrNodeUnavailable) {
		return &httpError{status: http.StatusServiceUnavailable, msg: "Service temporarily unavailable: the blockchain node is not responding"}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &httpError{status: http.StatusServiceUnavailable, msg: "Request timeout"}
	}
	s.log.Error("esplora request failed", "path", r.URL.Path, "err", err)
	return &httpError{status: http.StatusInternalServerError, msg: "Internal server error"}
}

// acceptsJSON is Express's req.accepts('json'): true without an Accept
// header or when it admits application/json.
func acceptsJSON(r *http.Request) bool {
	a := r.Header.Get("Accept")
	return a == "" || strings.Contains(a, "json") || strings.Contains(a, "*/*") || strings.Contains(a, "application/*")
}

func writeText(w http.ResponseWriter, status int, contentType string, body []byte) {
	listen.SafeHeaders(w, contentType)
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// route dispatches on the path below /api, as electrs matches its first
// five segments.
func (s *Server) route(ctx context.Context, r *http.Request) (*reply, error) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/api/")
	if !ok {
		return nil, noEndpoint(r.URL.Path)
	}
	seg := strings.Split(rest, "/")
	if len(seg) > 5 {
		return nil, noEndpoint("/" + rest)
	}
	p := make([]string, 5)
	copy(p, seg)
	n := len(seg)
	var (
		rep *reply
		err error
	)
	switch {
	case r.Method == http.MethodPost && p[0] == "tx" && n == 1:
		rep, err = s.postTx(ctx, r)
	case r.Method == http.MethodPost && isTxsRPC(p, n):
		rpc := "testmempoolaccept"
		if p[n-1] == "package" {
			rpc = "submitpackage"
		}
		rep, err = s.txsUnsupported(r, rpc)
	case r.Method == http.MethodGet && p[0] == "broadcast" && n == 1:
		rep, err = s.broadcast(ctx, r.URL.Query().Get("tx"), r.URL.Query().Has("tx"))
	case r.Method != http.MethodGet:
		err = errNoRoute
	case p[0] == "tx":
		rep, err = s.routeTx(ctx, p, n)
	case p[0] == "address" || p[0] == "scripthash":
		rep, err = s.routeScript(ctx, r, p, n)
	case p[0] == "address-prefix" && n == 2:
		rep, err = s.addressPrefix(ctx, p[1])
	case p[0] == "block" || p[0] == "block-height" || p[0] == "blocks":
		rep, err = s.routeBlock(ctx, p, n)
	case p[0] == "mempool":
		rep, err = s.routeMempool(ctx, p, n)
	case p[0] == "fee-estimates" && n == 1:
		rep, err = s.feeEstimates(ctx)
	case p[0] == "v1" && n == 2 && p[1] == "historical-price":
		rep, err = s.historicalPrice(ctx, r.URL.Query())
	case p[0] == "v1":
		rep, err = s.routeV1(ctx, p, n)
	default:
		err = errNoRoute
	}
	if errors.Is(err, errNoRoute) {
		return nil, noEndpoint("/" + rest)
	}
	return rep, err
}

// isTxsRPC matches txs/test and txs/package, under /api (electrs, BDK)
// and /api/v1 (mempool.space's backend).
func isTxsRPC(p []string, n int) bool {
	if p[0] == "v1" {
		p, n = p[1:], n-1
	}
	return n == 2 && p[0] == "txs" && (p[1] == "test" || p[1] == "package")
}

// noEndpoint is electrs' 404, quoting at most listen.MaxEcho bytes of the
// path: a 900 KB path must not come back as a 900 KB answer.
func noEndpoint(path string) error {
	return notFound(fmt.Sprintf("endpoint does not exist %q", listen.Bound(path, listen.MaxEcho)))
}

// errNoRoute is a path no route matches (answered 404 by route).
var errNoRoute = errors.New("no route")

// postTx broadcasts the hex tx in the body and answers its txid.
func (s *Server) postTx(ctx context.Context, r *http.Request) (*reply, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBodySize+1))
	if err != nil {
		return nil, badRequest("cannot read the request body")
	}
	if len(body) > maxBodySize {
		return nil, &httpError{status: http.StatusRequestEntityTooLarge, msg: "Request body too large"}
	}
	return s.broadcast(ctx, string(body), true)
}

func (s *Server) broadcast(ctx context.Context, txHex string, present bool) (*reply, error) {
	if !present {
		return nil, badRequest("Missing tx")
	}
	res, err := s.svc.SendTx(ctx, strings.TrimSpace(txHex))
	if err != nil {
		return nil, err
	}
	return textReply(res.Result)
}
