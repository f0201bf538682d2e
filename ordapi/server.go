// Package ordapi serves ord's JSON API for what it says about runes
// (/runes, /runes/:page, /rune/:rune, /output/:outpoint, /address/:address,
// as ord answers them with Accept: application/json) from the Runes index,
// through api.OrdQueries. Only JSON is served, whatever the Accept header;
// errors are {"error": "..."} with ord's status codes (400 bad input, 404
// unknown or no rune index).
package ordapi

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

// Server is the ord front, an http.Handler.
type Server struct {
	q      api.OrdQueries
	mux    *http.ServeMux
	log    *slog.Logger
	front  listen.JSONFront
	served http.Handler
}

// New builds the front.
func New(q api.OrdQueries, log *slog.Logger) *Server {
	if log == nil {
		log = slog.Default()
	}
	s := &Server{q: q, mux: http.NewServeMux(), log: log.With("subsystem", "ord")}
	// ord's answers: application/json without a trailing newline.
	s.front = listen.JSONFront{Name: "ord", Timeout: 60 * time.Second, ContentType: "application/json", Classify: s.classify, Log: s.log}
	s.served = s.front.Recover(s.mux)
	s.route("GET /runes", func(ctx context.Context, _ *http.Request) (any, error) { return s.q.OrdRunes(ctx, 0) })
	s.route("GET /runes/{page}", func(ctx context.Context, r *http.Request) (any, error) {
		page, err := strconv.ParseUint(r.PathValue("page"), 10, 31)
		if err != nil {
			return nil, &api.Error{Msg: "invalid page " + strconv.Quote(listen.Bound(r.PathValue("page"), 40))}
		}
		return s.q.OrdRunes(ctx, int(page))
	})
	s.route("GET /rune/{rune}", func(ctx context.Context, r *http.Request) (any, error) {
		return s.q.OrdRune(ctx, r.PathValue("rune"))
	})
	s.route("GET /output/{outpoint}", func(ctx context.Context, r *http.Request) (any, error) {
		return s.q.OrdOutput(ctx, r.PathValue("outpoint"))
	})
	s.route("GET /address/{address}", func(ctx context.Context, r *http.Request) (any, error) {
		return s.q.OrdAddress(ctx, r.PathValue("address"))
	})
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		listen.WriteJSONError(w, http.StatusNotFound, "no such route (ord's rune routes only)")
	})
	return s
}

func (s *Server) route(pattern string, h listen.Route) {
	s.mux.Handle(pattern, s.front.Handler(listen.WriteJSONError, h))
}

// classify gives ord's statuses: 400 for bad input, 404 for what is not
// there; anything else is ours, logged and not shown.
func (s *Server) classify(r *http.Request, err error) (int, string) {
	if e, ok := api.AsUserError(err); ok {
		if errors.Is(err, api.ErrOrdNotFound) {
			return http.StatusNotFound, e.Msg
		}
		return http.StatusBadRequest, e.Msg
	}
	s.log.Error("ord request failed", "path", listen.Bound(r.URL.Path, 200), "err", err)
	return http.StatusInternalServerError, "Internal server error"
}

// ServeHTTP serves the routes; a panic answers 500, not a dropped
// connection.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.served.ServeHTTP(w, r)
}

// RequestCost weighs a request against the public port's budget: an
// address reads all its outputs, a page of runes its 50 entries (a seek to
// the page's number rows, not a walk over every rune).
func RequestCost(r *http.Request) int {
	switch {
	case strings.HasPrefix(r.URL.Path, "/address/"):
		return 3
	case strings.HasPrefix(r.URL.Path, "/runes"):
		return 2
	}
	return 1
}
