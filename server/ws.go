package server

import (
	"github.com/openexplorer/blockbook/internal/bytebudget"
	"github.com/openexplorer/blockbook/internal/listen"

	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/api"
)

// The websocket API at /websocket, wire-compatible with Blockbook's (the
// protocol Trezor Suite's @trezor/blockchain-link speaks): requests
// {id, method, params}, answers {id, data}, errors {id, data:{error:
// {message}}}, and notifications that reuse the subscribing request's id.

// WebsocketConfig limits and opens the websocket API.
type WebsocketConfig struct {
	// Gate, when set, is the process-wide bound on expensive work that
	// every front shares: a request weighing more than 1 (wsCost) takes a
	// place while its handler runs, or is answered "Server busy".
	Gate *listen.Gate
	// AllowedOrigins, when not empty, is the list of browser origins
	// (scheme://host[:port]) that may connect; requests without an Origin
	// header (non-browser clients) are always allowed.
	AllowedOrigins []string
	// MaxConnsPerIP limits concurrent connections per client IP (IPv6 per
	// /64); 0 means unlimited.
	MaxConnsPerIP int
	// TrustedProxies are the peers whose X-Forwarded-For header names the
	// client; from anyone else the header is ignored.
	TrustedProxies []netip.Prefix
	// ClientIP attributes requests from other peers (Blockbook's
	// X-Real-Ip and Cloudflare headers).
	ClientIP ClientIPConfig
	// RPCCallAllowed, when set, decides which rpcCall requests may run
	// (Blockbook's <NET>_ALLOWED_RPC_CALL_TO and _ALLOWED_EVM_CALL_METHODS).
	RPCCallAllowed func(to, data string) bool
	// MessageRate messages per MessageWindow may come from one connection;
	// more get an error answer each and, with IPBlockDuration, block the
	// client's address from new connections for that long. 0 disables.
	MessageRate     int
	MessageWindow   time.Duration
	IPBlockDuration time.Duration
	// GetAccountInfoLimit caps getAccountInfo requests in progress on one
	// connection (Blockbook's _WS_GETACCOUNTINFO_LIMIT); 0: no own cap.
	GetAccountInfoLimit int
	// Over, when set, records the clients over the limits (for /admin).
	Over *OverLimits
	// EnableSubNewTx allows subscribeNewTransaction (-enablesubnewtx).
	EnableSubNewTx bool

	MaxMessageBytes int64 // a larger request frame closes the connection (4 MiB)
	SendQueue       int   // messages queued per connection before it is dropped (500)
	// SendQueueBytes bounds those messages in bytes (16 MiB; one answer
	// larger than that still passes when nothing else is queued), and
	// MaxQueuedBytes all connections' together (256 MiB): a client that
	// asks for large answers and never reads pins no more.
	SendQueueBytes     int
	MaxQueuedBytes     int
	MaxPendingRequests int // requests in progress per connection (48)
	MaxActiveRequests  int // requests in progress on the whole server (2048)
	MaxAddresses       int // subscribeAddresses cap (1000)
	MaxAddressesBlocks int // subscribeAddresses cap with newBlockTxs (100)
	RequestTimeout     time.Duration
	// PingInterval is how often the server pings idle clients; a client
	// that answers nothing for two intervals is disconnected.
	PingInterval time.Duration
}

func (c *WebsocketConfig) defaults() {
	setDefault := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	if c.MaxMessageBytes <= 0 {
		c.MaxMessageBytes = 4 << 20
	}
	setDefault(&c.SendQueue, 500)
	setDefault(&c.SendQueueBytes, 16<<20)
	setDefault(&c.MaxQueuedBytes, 256<<20)
	setDefault(&c.MaxPendingRequests, 48)
	setDefault(&c.MaxActiveRequests, 2048)
	setDefault(&c.MaxAddresses, 1000)
	setDefault(&c.MaxAddressesBlocks, 100)
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = 60 * time.Second
	}
	if c.MessageWindow <= 0 {
		c.MessageWindow = 10 * time.Minute
	}
	if c.PingInterval <= 0 {
		c.PingInterval = 50 * time.Second
	}
}

// Websocket serves /websocket.
type Websocket struct {
	svc      api.Service
	caps     api.Capabilities // what svc offers beyond the core, read once
	cfg      WebsocketConfig
	log      *slog.Logger
	m        *wsMetrics
	upgrader websocket.Upgrader
	origins  map[string]bool
	perIP    *listen.IPLimiter
	blocked  *blocklist
	hub      *hub
	active   chan struct{}      // server-wide request slots
	queued   *bytebudget.Budget // bytes queued to all connections

	mu       sync.Mutex
	closing  bool
	conns    map[*wsConn]struct{}
	requests sync.WaitGroup
	nextID   atomic.Uint64
}

// NewWebsocket builds the websocket server. Run must be started for
// notifications to flow.
func NewWebsocket(svc api.Service, cfg WebsocketConfig, log *slog.Logger, reg prometheus.Registerer) *Websocket {
	cfg.defaults()
	s := &Websocket{
		svc: svc, caps: svc.Capabilities(), cfg: cfg, log: log.With("subsystem", "websocket"), m: newWSMetrics(reg),
		perIP: listen.NewIPLimiter(cfg.MaxConnsPerIP), active: make(chan struct{}, cfg.MaxActiveRequests),
		conns: map[*wsConn]struct{}{}, blocked: newBlocklist(), queued: bytebudget.New(int64(cfg.MaxQueuedBytes)),
	}
	s.hub = newHub(s)
	if len(cfg.AllowedOrigins) > 0 {
		s.origins = map[string]bool{}
		for _, o := range cfg.AllowedOrigins {
			if n, ok := normalizeOrigin(o); ok {
				s.origins[n] = true
			}
		}
	}
	s.upgrader = websocket.Upgrader{
		// Small read buffers (larger frames are read in pieces) and pooled
		// write buffers keep idle connections cheap.
		ReadBufferSize: 4 << 10, WriteBufferSize: 16 << 10, WriteBufferPool: &sync.Pool{},
		CheckOrigin: s.checkOrigin, EnableCompression: true,
		Error: func(w http.ResponseWriter, _ *http.Request, status int, reason error) {
			http.Error(w, "Upgrade failed: "+reason.Error(), status)
		},
	}
	return s
}

// Run delivers notifications until ctx ends.
func (s *Websocket) Run(ctx context.Context) { s.hub.run(ctx) }

func (s *Websocket) checkOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	if origin == "" || s.origins == nil {
		return true
	}
	n, ok := normalizeOrigin(origin)
	return ok && s.origins[n]
}

// normalizeOrigin lowercases scheme and host of an origin URL.
func normalizeOrigin(o string) (string, bool) {
	o = strings.TrimSpace(strings.ToLower(o))
	scheme, host, ok := strings.Cut(o, "://")
	if !ok || scheme == "" || host == "" || strings.ContainsAny(host, "/?#") {
		return "", false
	}
	return scheme + "://" + host, true
}

// ServeHTTP upgrades a client to the websocket protocol.
func (s *Websocket) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	closing := s.closing
	s.mu.Unlock()
	if closing {
		http.Error(w, "Server shutting down", http.StatusServiceUnavailable)
		return
	}
	ip, exempt := listen.Attribute(r, s.cfg.TrustedProxies, s.cfg.ClientIP)
	key := listen.IPKey(ip)
	if exempt {
		key = "" // the operator's own tools or a proxy naming no client
	}
	if !s.admit(w, ip, key) {
		return
	}
	if !s.checkOrigin(r) {
		s.perIP.Release(key)
		s.m.rejected.WithLabelValues("origin").Inc()
		http.Error(w, "Origin not allowed", http.StatusForbidden)
		return
	}
	ws, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		s.perIP.Release(key)
		s.m.rejected.WithLabelValues("upgrade").Inc()
		return
	}
	c := newWSConn(s, ws, ip, key)
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		c.closeWith(websocket.CloseGoingAway, "server shutting down")
		return
	}
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	s.m.connections.Inc()
	s.log.Debug("client connected", "conn", c.id, "ip", ip)
	go c.writeLoop()
	go c.readLoop()
}

// disconnected forgets a connection once both its loops stopped.
func (s *Websocket) disconnected(c *wsConn) {
	s.hub.forget(c)
	s.perIP.Release(c.ipKey)
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.m.connections.Dec()
	s.log.Debug("client disconnected", "conn", c.id, "ip", c.ip, "reason", c.reason())
}

// Shutdown refuses new connections, closes the open ones and waits for
// their requests to finish, so that the index is not closed under them.
func (s *Websocket) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	conns := make([]*wsConn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.closeWith(websocket.CloseGoingAway, "server shutting down")
	}
	done := make(chan struct{})
	go func() {
		s.requests.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		<-done // requests end soon after their contexts are cancelled
		return ctx.Err()
	}
}

// Connections returns the number of open connections.
func (s *Websocket) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}
