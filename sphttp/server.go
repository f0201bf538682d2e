// Package sphttp serves the Silent Payments tweaks of the index
// (api.TweakQueries) on the -silentpayments listener, in the two shapes
// light wallets read today: BlindBit Oracle v1's routes at the root
// (blindbit.go) and the BIP352 index-server specification's routes under
// /bip352/ (bip352.go). A client takes http://host:port as its base URL.
package sphttp

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/internal/listen"
)

// Options configure the server.
type Options struct {
	// RequestTimeout bounds one request (0: 60 s).
	RequestTimeout time.Duration
	Log            *slog.Logger
}

// Queries is what the front reads: a block's tweaks and its taproot
// filters.
type Queries interface {
	api.TweakQueries
	api.TweakFilterQueries
}

// Server is the front; it is an http.Handler.
type Server struct {
	q      Queries
	mux    *http.ServeMux
	opts   Options
	log    *slog.Logger
	front  listen.JSONFront
	served http.Handler
}

// New builds the front over the tweak queries.
func New(q Queries, opts Options) *Server {
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = 60 * time.Second
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	s := &Server{q: q, mux: http.NewServeMux(), opts: opts, log: opts.Log.With("subsystem", "silentpayments")}
	s.front = listen.JSONFront{Name: "silent payments", Timeout: opts.RequestTimeout, ContentType: "application/json; charset=utf-8",
		Newline: true, Classify: s.classify, Log: s.log}
	s.served = s.front.Recover(s.mux)
	s.blindbitRoutes()
	s.bip352Routes()
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		listen.WriteJSONError(w, http.StatusNotFound, "unknown route "+strconv.Quote(listen.Bound(r.URL.Path, listen.MaxEcho)))
	})
	return s
}

// ServeHTTP answers a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.served.ServeHTTP(w, r)
}

// handler wraps a route: it bounds the request's time and maps errors
// once (a user error is a 400 with its text, anything else ours).
func (s *Server) handler(shape listen.ErrorShape, fn listen.Route) http.HandlerFunc {
	return s.front.Handler(shape, fn)
}

func (s *Server) classify(r *http.Request, err error) (int, string) {
	if ue, ok := api.AsUserError(err); ok {
		return http.StatusBadRequest, ue.Msg
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return http.StatusServiceUnavailable, "request timeout"
	}
	s.log.Error("silent payments request failed", "path", r.URL.Path, "err", err)
	return http.StatusInternalServerError, "internal error"
}

// uintParam reads an optional decimal query parameter (def when absent).
func uintParam(r *http.Request, name string, def uint64) (uint64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, &api.Error{Msg: "invalid " + name + " " + strconv.Quote(listen.Bound(v, listen.MaxEcho)) + ": give a non-negative decimal number"}
	}
	return n, nil
}

// keep reports whether a tx's tweak is served: with cutThrough, when one
// of its taproot outputs is unspent and worth at least dust; without, when
// one of them (spent or not) is.
func keep(t *api.TweakTx, cutThrough bool, dust uint64) bool {
	if cutThrough {
		return t.Live && t.Unspent >= dust
	}
	return t.Highest >= dust
}

// tweaks lists the served tweaks of a block.
func tweaks(b *api.BlockTweaks, cutThrough bool, dust uint64) []string {
	out := []string{}
	for i := range b.Txs {
		if keep(&b.Txs[i], cutThrough, dust) {
			out = append(out, b.Txs[i].Tweak)
		}
	}
	return out
}

// RequestCost is a request's cost in the per-client budget: a block's
// utxos, compute index, filters and spent index read a row per tx more
// than its tweaks.
func RequestCost(r *http.Request) int {
	if strings.Contains(r.URL.Path, "/utxos/") || strings.Contains(r.URL.Path, "/compute-index/") ||
		strings.Contains(r.URL.Path, "/filter/") || strings.Contains(r.URL.Path, "/spent-index/") {
		return 3
	}
	return 1
}
