package electrum

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/internal/bytebudget"
	"github.com/openexplorer/blockbook/internal/listen"
)

// Protocol versions this server speaks.
const (
	protocolMin = "1.4"
	protocolMax = "1.6"
)

// Defaults of Config's limits.
const (
	DefaultMaxConns      = 10_000
	DefaultMaxConnsPerIP = 1_000
	// Subscriptions cost at most SubscriptionBytes each, plus a script
	// hash's script (TestSubscriptionMemory checks): a connection may
	// hold a large wallet's, an address 2.5 times that, the server about
	// 500 MB of them; the byte caps hold should the scripts be long.
	DefaultMaxSubs           = 40_000
	DefaultMaxSubsPerIP      = 100_000
	DefaultMaxSubsTotal      = 1_000_000
	DefaultMaxSubsBytesPerIP = 64 << 20
	DefaultMaxSubsBytes      = 512 << 20
	SubscriptionBytes        = 512
	// DefaultMaxCallsPerIP is the public port's in-progress budget (24).
	DefaultMaxCallsPerIP   = 24
	DefaultMaxRequestBytes = 1_000_000
	// DefaultCallsPerMinute and DefaultCallBurst let a wallet with 10,000
	// addresses subscribe to all of them at connect, then 50 calls a
	// second (a wallet at rest makes a few a minute).
	DefaultCallsPerMinute = 3000
	DefaultCallBurst      = 10_000
	// DefaultMaxHistory serves an address with 100,000 txs (the Electrum
	// wallet asks for whole histories).
	DefaultMaxHistory  = 100_000
	DefaultIdleTimeout = 10 * time.Minute
	// maxHeaders is the most headers one blockchain.block.headers answers
	// (one retarget period).
	maxHeaders = 2016
	// DefaultRelayFee is the minimum relay fee, in satoshis per 1000
	// vbytes, reported when the service cannot ask the node (the default
	// of Bitcoin Core before 30.0 and of btcd).
	DefaultRelayFee = 1000
)

// Config configures the server; zero fields take the defaults.
type Config struct {
	// MaxConns caps the open connections, MaxConnsPerIP those of one
	// client address.
	MaxConns, MaxConnsPerIP int
	// MaxSubs caps the script hashes and outpoints one connection
	// subscribes to,
	// MaxSubsPerIP those of one client address, MaxSubsTotal all.
	MaxSubs, MaxSubsPerIP, MaxSubsTotal int
	// MaxSubsBytesPerIP and MaxSubsBytes cap the same in estimated bytes
	// (SubscriptionBytes each, plus a script hash's script).
	MaxSubsBytesPerIP, MaxSubsBytes int
	// MaxCallsPerIP caps the calls of one client address in progress
	// over all its connections; more wait (slots.go).
	MaxCallsPerIP int
	// CallsPerMinute is the cost units one client may spend a minute (a
	// call costs 1, more by its work: cost.go; each call of a batch
	// counts), with CallBurst at once; past it a call answers
	// -101 with the seconds to wait. The client is named as for
	// MaxCallsPerIP (loopback and private peers are exempt). Negative
	// turns the rate limit off.
	CallsPerMinute, CallBurst int
	// Late, when set, says the process is behind (listen.LateAfter):
	// a client past its share (CallsPerMinute, sustained) is then
	// refused with -102 even within its burst, and its session reads
	// nothing for a second after a refused call.
	Late func() bool
	// Metrics, when set, gets blockbook_electrum_limit_rejections_total
	// (calls refused by the rate limit or for the share).
	Metrics prometheus.Registerer
	// MaxRequestBytes caps one message (a line, a websocket message).
	MaxRequestBytes int
	// MaxBatch caps the calls of one batch; MaxAnswerBytes what one call
	// or batch may produce; MaxQueueBytes the bytes queued to one
	// connection, MaxQueuedBytes to all (budget.go).
	MaxBatch, MaxAnswerBytes, MaxQueueBytes, MaxQueuedBytes int
	// MaxHistory caps the txs of a script hash that history, status and
	// subscription answers read; more answer "history too large".
	MaxHistory int
	// IdleTimeout closes connections that send nothing for that long;
	// WriteTimeout those that take longer to read one answer.
	IdleTimeout, WriteTimeout time.Duration
	// RelayFee and IncrementalRelayFee (satoshis per 1000 vbytes) answer
	// blockchain.relayfee and mempool.get_info when the service cannot
	// ask the node (RelayFeeQueries).
	RelayFee, IncrementalRelayFee int64
	// ServerVersion names the software in server.version and
	// server.features.
	ServerVersion string
	// Banner and DonationAddress answer server.banner and
	// server.donation_address.
	Banner, DonationAddress string
	// WSClient names the client of a websocket connection by the listener
	// kit's rule (X-Real-Ip from trusted proxies; exempt: a local peer
	// naming no client). Nil: the TCP peer.
	WSClient func(*http.Request) (ip string, exempt bool)
	// SPMaxSubs caps the Silent Payments addresses one connection has the
	// server scan for, SPMaxSubsTotal all of them; SPMaxLabels the labels
	// of one; SPWorkers the blocks scanned at once (spscan.go).
	SPMaxSubs, SPMaxSubsTotal, SPMaxLabels, SPWorkers int
	// SPMaxSubsPerIP caps them per client address (local peers exempt,
	// as the other per-address caps), so that one client cannot hold
	// every server-wide slot.
	SPMaxSubsPerIP int
	// LimitLocal limits loopback and private peers per address like any
	// client (-listenlimitlocal) instead of exempting them.
	LimitLocal bool
	// Gate, when set, is the process-wide bound on expensive work shared
	// with the other fronts: a call that reads the index or the node takes
	// a place, and answers -102 "server busy" when none frees in time.
	Gate *listen.Gate
	// Hosts are server.features' hosts: host name to its ports.
	Hosts map[string]HostPorts
	Log   *slog.Logger
}

// HostPorts are the ports a host serves Electrum on (nil: none).
type HostPorts struct {
	TCPPort *int `json:"tcp_port"`
	SSLPort *int `json:"ssl_port"`
}

func (c *Config) defaults() {
	setDefault := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	setDefault(&c.MaxConns, DefaultMaxConns)
	setDefault(&c.MaxConnsPerIP, DefaultMaxConnsPerIP)
	setDefault(&c.MaxSubs, DefaultMaxSubs)
	setDefault(&c.MaxSubsPerIP, DefaultMaxSubsPerIP)
	setDefault(&c.MaxSubsTotal, DefaultMaxSubsTotal)
	setDefault(&c.MaxSubsBytesPerIP, DefaultMaxSubsBytesPerIP)
	setDefault(&c.MaxSubsBytes, DefaultMaxSubsBytes)
	setDefault(&c.MaxCallsPerIP, DefaultMaxCallsPerIP)
	if c.CallsPerMinute == 0 {
		c.CallsPerMinute = DefaultCallsPerMinute
	}
	setDefault(&c.CallBurst, max(DefaultCallBurst, c.CallsPerMinute))
	setDefault(&c.MaxRequestBytes, DefaultMaxRequestBytes)
	setDefault(&c.MaxHistory, DefaultMaxHistory)
	setDefault(&c.MaxBatch, DefaultMaxBatch)
	setDefault(&c.MaxAnswerBytes, DefaultMaxAnswerBytes)
	setDefault(&c.MaxQueueBytes, DefaultMaxQueueBytes)
	setDefault(&c.MaxQueuedBytes, DefaultMaxQueuedBytes)
	setDefault(&c.SPMaxSubs, DefaultSPMaxSubs)
	setDefault(&c.SPMaxSubsTotal, DefaultSPMaxSubsTotal)
	setDefault(&c.SPMaxSubsPerIP, DefaultSPMaxSubsPerIP)
	setDefault(&c.SPMaxLabels, DefaultSPMaxLabels)
	setDefault(&c.SPWorkers, DefaultSPWorkers())
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = defaultWriteTimeout
	}
	if c.RelayFee <= 0 {
		c.RelayFee = DefaultRelayFee
	}
	if c.IncrementalRelayFee <= 0 {
		c.IncrementalRelayFee = DefaultRelayFee
	}
	if c.ServerVersion == "" {
		c.ServerVersion = "blockbook-go"
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
}

// RelayFeeQueries is what a service offers when it can ask the node for
// its relay fees (satoshis per 1000 vbytes).
type RelayFeeQueries interface {
	RelayFees(ctx context.Context) (minRelay, mempoolMin, incremental int64, err error)
}

// PackageBroadcaster is what a service offers when its node relays
// packages of txs (Bitcoin Core's submitpackage). The result is the
// node's answer; accepted reports the package's success, and rejected
// lists the txids refused with the node's reasons.
type PackageBroadcaster interface {
	BroadcastPackage(ctx context.Context, rawTxs []string) (verbose any, rejected []PackageReject, err error)
}

// PackageReject is one tx of a package the node refused.
type PackageReject struct {
	Txid  string `json:"txid"`
	Error string `json:"error"`
}

// Server is the Electrum server: its listeners share the sessions, the
// subscriptions and the limits.
type Server struct {
	svc     api.Service
	scripts api.ScriptQueries
	cfg     Config
	log     *slog.Logger

	mu        sync.Mutex
	listeners []net.Listener
	sessions  map[*session]struct{}
	perIP     map[string]int
	closed    bool
	wg        sync.WaitGroup

	queued       *bytebudget.Budget // bytes queued to every connection
	calls        *clientSlots       // calls in progress per client address
	rate         *listen.Limiter    // calls per minute per client (nil: off)
	callCost     prometheus.Counter // units calls weighed (nil: no metrics)
	hub          *hub
	sp           *spHub
	fees         histogramCache
	headerHashes headerHashCache
	ctx          context.Context
	stop         context.CancelFunc
	hooks        testHooks
}

// testHooks let tests observe internals without timing.
type testHooks struct {
	afterRecheck func()
	limitLocal   atomic.Bool // the per-address limits apply to local peers too (Config.LimitLocal)
}

// New builds the server over a Bitcoin-type service and its script
// queries. It serves nothing until Serve or ServeWebsocket.
func New(svc api.Service, scripts api.ScriptQueries, cfg Config) (*Server, error) {
	if svc == nil || scripts == nil {
		return nil, errors.New("electrum: the service and its script queries are required")
	}
	cfg.defaults()
	ctx, stop := context.WithCancel(context.Background())
	s := &Server{svc: svc, scripts: scripts, cfg: cfg, log: cfg.Log, sessions: map[*session]struct{}{},
		perIP: map[string]int{}, ctx: ctx, stop: stop, queued: bytebudget.New(int64(cfg.MaxQueuedBytes)),
		calls: newClientSlots(cfg.MaxCallsPerIP), callCost: newCallCost(cfg.Metrics)}
	if cfg.CallsPerMinute > 0 {
		s.rate = listen.NewLimiter(listen.LimitConfig{Rate: cfg.CallsPerMinute, Window: time.Minute, Burst: cfg.CallBurst, Name: "electrum", Late: cfg.Late, Metrics: cfg.Metrics}, nil)
	}
	s.hooks.limitLocal.Store(cfg.LimitLocal)
	s.hub = newHub(s)
	s.sp = newSPHub(s)
	return s, nil
}

// Serve accepts newline-delimited JSON-RPC connections on ln (plain TCP,
// or TLS when ln is a TLS listener) until Close. It returns nil after
// Close.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ln.Close()
	}
	s.listeners = append(s.listeners, ln)
	s.mu.Unlock()
	var delay time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if s.isClosed() {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				// Out of file descriptors and the like: back off and retry.
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				time.Sleep(delay)
				continue
			}
			return fmt.Errorf("electrum: accept: %w", err)
		}
		delay = 0
		s.startSession(newLineConn(c, s.cfg.MaxRequestBytes), listen.IPKey(remoteIP(c.RemoteAddr())))
	}
}

// Refuse tells an excess connection why it is closed, in the protocol's
// words (the listener kit's Caps.Refuse for a plain TCP listener).
func (s *Server) Refuse(c net.Conn, perClient bool) {
	e := newErr(codeExcessive, "too many connections (limit %d)", s.cfg.MaxConns)
	if perClient {
		e = newErr(codeExcessive, "too many connections from your address (limit %d)", s.cfg.MaxConnsPerIP)
	}
	_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, _ = c.Write(append(errorFrame(nil, e), '\n'))
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// remoteIP is the client address a connection counts against.
func remoteIP(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// admit counts a new connection from ip (a countedKey) against the limits.
func (s *Server) admit(ip string) *rpcError {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed:
		return newErr(codeExcessive, "server is shutting down")
	case len(s.sessions) >= s.cfg.MaxConns:
		return newErr(codeExcessive, "too many connections (limit %d)", s.cfg.MaxConns)
	case ip != "" && s.perIP[ip] >= s.cfg.MaxConnsPerIP:
		return newErr(codeExcessive, "too many connections from your address (limit %d)", s.cfg.MaxConnsPerIP)
	}
	if ip != "" { // "": an exempt client (a local proxy naming no one)
		s.perIP[ip]++
	}
	return nil
}

// startSession runs a session on a new connection in its own goroutine,
// or refuses it with the limit's error.
func (s *Server) startSession(c frameConn, ip string) {
	key := s.countedKey(ip)
	if e := s.admit(key); e != nil {
		_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		_ = c.WriteFrame(errorFrame(nil, e)) // a refusal: best effort
		_ = c.Close()
		return
	}
	go s.runAdmitted(c, ip, key)
}

// countedKey is the client key ip counts against in the per-address caps
// and budgets: "" for a loopback or private peer (a local proxy, such as a
// TLS terminator, or the operator's own tools), exempt as on every
// listener, since behind a local proxy every wallet would share one count.
func (s *Server) countedKey(ip string) string {
	if localKey(ip) && !s.hooks.limitLocal.Load() {
		return ""
	}
	return ip
}

// release gives back an admitted connection's place.
func (s *Server) release(ip string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ip == "" {
		return
	}
	if s.perIP[ip]--; s.perIP[ip] <= 0 {
		delete(s.perIP, ip)
	}
}

// runAdmitted runs the session of an admitted connection until it ends;
// key is what admit counted.
func (s *Server) runAdmitted(c frameConn, ip, key string) {
	ss := newSession(s, c, ip)
	ss.key = key
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = c.Close()
		s.release(key)
		return
	}
	s.sessions[ss] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	ss.run()
	s.hub.dropSession(ss)
	s.sp.drop(ss)
	s.mu.Lock()
	delete(s.sessions, ss)
	s.mu.Unlock()
	s.release(key)
}

// QueuedBytes is the bytes of answers and notifications queued to all
// connections and not yet written.
func (s *Server) QueuedBytes() int64 { return s.queued.Used() }

// Sessions is the number of open connections.
func (s *Server) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// Close stops the listeners and every session, and waits for them until
// ctx ends.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	lns := s.listeners
	sessions := make([]*session, 0, len(s.sessions))
	for ss := range s.sessions {
		sessions = append(sessions, ss)
	}
	s.mu.Unlock()
	s.stop()
	for _, ln := range lns {
		_ = ln.Close() // already closed is fine
	}
	for _, ss := range sessions {
		ss.close()
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("electrum: sessions still open at shutdown: %w", ctx.Err())
	}
}
