package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/openexplorer/blockbook/api"
)

// Internal serves /metrics and /health on the internal address (loopback by
// default); it must not be exposed publicly.
type Internal struct {
	srv *http.Server
	mux *http.ServeMux // Admin adds its routes
	log *slog.Logger
}

// NewInternal builds the internal server. MaxLag is how many blocks behind
// the node the index may be and still be healthy. Node is the liveness
// probe (may be nil): a node that does not answer it makes /health fail, so
// that a load balancer stops sending traffic here within seconds.
func NewInternal(addr string, gatherer prometheus.Gatherer, sync api.SyncStatus, node api.NodeProbe, maxLag uint32, log *slog.Logger) *Internal {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		st := sync.State()
		healthy, reason := health(st, maxLag)
		if node != nil {
			if err := node.Check(); err != nil {
				healthy, reason = false, err.Error()
			}
		}
		code := http.StatusOK
		if !healthy {
			code = http.StatusServiceUnavailable
		}
		writeJSON(w, code, struct {
			Status     string `json:"status"`
			Reason     string `json:"reason,omitempty"`
			BestHeight uint32 `json:"bestHeight"`
			NodeHeight uint32 `json:"nodeHeight"`
		}{map[bool]string{true: "ok", false: "unhealthy"}[healthy], reason, st.BestHeight, st.NodeHeight})
	})
	return &Internal{log: log.With("subsystem", "internal"), mux: mux, srv: &http.Server{
		Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second, WriteTimeout: 30 * time.Second,
	}}
}

// health decides readiness for load balancers: the index must have caught up
// with the node (within maxLag blocks) and sync must not be failing.
func health(st api.SyncState, maxLag uint32) (bool, string) {
	switch {
	case st.Err != "":
		return false, st.Err
	case !st.HasTip:
		return false, "index is empty"
	case st.NodeHeight > st.BestHeight+maxLag:
		return false, "index is " + strconv.FormatUint(uint64(st.NodeHeight-st.BestHeight), 10) + " blocks behind the node"
	case st.InitialSync:
		return false, "initial sync in progress"
	}
	return true, ""
}

// Wrap wraps the server's handler (a path prefix); call it before Serve.
func (i *Internal) Wrap(f func(http.Handler) http.Handler) { i.srv.Handler = f(i.srv.Handler) }

// Serve listens until Shutdown.
func (i *Internal) Serve(ln net.Listener) error {
	i.log.Info("internal server listening (metrics, health)", "addr", ln.Addr().String())
	if err := i.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown stops the server.
func (i *Internal) Shutdown(ctx context.Context) error { return i.srv.Shutdown(ctx) }
