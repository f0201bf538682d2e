package listen

import (
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// LimitConfig limits what one client may ask of an HTTP listener (the
// public REST API and explorer pages, Esplora), as Blockbook's
// <NET>_REST_UI_* variables do. A zero field disables its limit.
type LimitConfig struct {
	// Rate requests may start per Window, with Burst at once (a token
	// bucket per client key).
	Rate   int
	Window time.Duration
	Burst  int
	// MaxConcurrent is the cost units one client may have in flight; a
	// plain request costs 1, a heavy one more (see Cost).
	MaxConcurrent int
	// Cost weighs a request by the work it may cause (nil: 1 each);
	// Exempt names the paths no limit applies to (nil: none). Each front
	// knows its own heavy and free routes.
	Cost   func(*http.Request) int
	Exempt func(path string) bool
	// BlockDuration blocks a client that breached the limits in separate
	// episodes (at least breachGap apart) blockAfter times.
	BlockDuration time.Duration
	// StateTTL is how long an idle client's state is kept.
	StateTTL time.Duration
	// TrustedProxies and ClientIP attribute requests (as for the websocket).
	TrustedProxies []netip.Prefix
	ClientIP       ClientIPConfig
	// Metrics, when set, gets blockbook_<Name>_limit_rejections_total
	// (Name defaults to "rest").
	Metrics prometheus.Registerer
	Name    string
}

const (
	breachGap  = 10 * time.Second // a burst of 429s is one episode
	blockAfter = 3                // episodes before a temporary block
)

// Limiter enforces LimitConfig; it also lists the clients that went over
// the limits for /admin.
type Limiter struct {
	cfg LimitConfig
	now func() time.Time

	mu      sync.Mutex
	clients map[string]*restClient
	over    *overList
	swept   time.Time

	rejected *prometheus.CounterVec // by limit; nil without Metrics
}

type restClient struct {
	tokens   float64
	refilled time.Time
	inFlight int
	seen     time.Time
	episodes int
	breach   time.Time
	blocked  time.Time // blocked until
}

// NewLimiter builds a limiter; over (shared with the websocket, may be
// nil) records the clients over the limits.
func NewLimiter(cfg LimitConfig, over *OverLimits) *Limiter {
	if cfg.Window <= 0 {
		cfg.Window = time.Minute
	}
	if cfg.Burst <= 0 {
		cfg.Burst = max(cfg.Rate, 1)
	}
	if cfg.StateTTL <= 0 {
		cfg.StateTTL = 10 * time.Minute
	}
	if cfg.Cost == nil {
		cfg.Cost = func(*http.Request) int { return 1 }
	}
	if cfg.Exempt == nil {
		cfg.Exempt = func(string) bool { return false }
	}
	if cfg.Name == "" {
		cfg.Name = "rest"
	}
	l := &Limiter{cfg: cfg, now: time.Now, clients: map[string]*restClient{}}
	if over != nil {
		l.over = over.rest
	}
	if cfg.Metrics != nil {
		l.rejected = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blockbook_" + cfg.Name + "_limit_rejections_total", Help: "HTTP requests of the " + cfg.Name + " listener answered 429, by the limit they hit",
		}, []string{"limit"})
		cfg.Metrics.MustRegister(l.rejected)
	}
	return l
}

// Wrap applies the limits to h. A CORS preflight never counts.
func (l *Limiter) Wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions || l.cfg.Exempt(r.URL.Path) {
			h.ServeHTTP(w, r)
			return
		}
		ip, exempt := Attribute(r, l.cfg.TrustedProxies, l.cfg.ClientIP)
		if exempt {
			h.ServeHTTP(w, r)
			return
		}
		cost := max(l.cfg.Cost(r), 1)
		if msg, retry := l.acquire(ip, cost); msg != "" {
			w.Header().Set("Retry-After", strconv.Itoa(retry))
			WriteJSONError(w, http.StatusTooManyRequests, msg)
			return
		}
		defer l.release(ip, l.concCost(cost))
		h.ServeHTTP(w, r)
	})
}

// Attribute names the client of a request; exempt is a loopback, private
// or trusted-proxy peer that names no client (the operator's own tools, or
// a proxy that forwards no address: limiting it would limit everyone).
// With cfg.LimitLocal only a configured proxy is exempt.
func Attribute(r *http.Request, forwardedFor []netip.Prefix, cfg ClientIPConfig) (ip string, exempt bool) {
	ip = ClientIP(r, forwardedFor, cfg)
	peer, ok := parseHost(r.RemoteAddr)
	if !ok || peer.String() != ip {
		return ip, false
	}
	local := (peer.IsLoopback() || peer.IsPrivate()) && !cfg.LimitLocal
	return ip, local || isTrusted(peer, forwardedFor) || isTrusted(peer, cfg.RealIPProxies)
}

// concCost is a request's share of the concurrency limit; capped, so that
// even the heaviest request can run alone.
func (l *Limiter) concCost(cost int) int { return min(cost, max(l.cfg.MaxConcurrent, 1)) }

// acquire takes cost tokens and concurrency units for ip (a request costs
// its weight in both, capped by the burst and the concurrency limit); a
// non-empty message says which limit refused and the seconds to wait.
func (l *Limiter) acquire(ip string, cost int) (string, int) {
	rateCost, conc := float64(min(cost, l.cfg.Burst)), l.concCost(cost)
	key, now := IPKey(ip), l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	c := l.clients[ip]
	if c == nil {
		c = &restClient{tokens: float64(l.cfg.Burst), refilled: now}
		l.clients[ip] = c
	}
	c.seen = now
	if now.Before(c.blocked) {
		if l.rejected != nil {
			l.rejected.WithLabelValues("blocked").Inc()
		}
		return "Too many requests: this client is blocked for a while after repeated excess", int(c.blocked.Sub(now).Seconds()) + 1
	}
	// The rate is counted per key (IPv6 per /64), the block per address.
	k := l.clients[key]
	if k == nil {
		k = &restClient{tokens: float64(l.cfg.Burst), refilled: now}
		l.clients[key] = k
	}
	k.seen = now
	if l.cfg.Rate > 0 {
		perSec := float64(l.cfg.Rate) / l.cfg.Window.Seconds()
		// now was read before the lock: a request that waited for it may
		// carry an older time than the last refill, which must not take
		// tokens away (under load that emptied a large bucket at once).
		if elapsed := now.Sub(k.refilled); elapsed > 0 {
			k.tokens = math.Min(float64(l.cfg.Burst), k.tokens+elapsed.Seconds()*perSec)
			k.refilled = now
		}
		if k.tokens < rateCost {
			l.breached(ip, c, now, "rate")
			return fmt.Sprintf("Too many requests: this request costs %d of the %d this client may spend per %s", int(rateCost), l.cfg.Rate, l.cfg.Window), int((rateCost-k.tokens)/perSec) + 1
		}
	}
	if l.cfg.MaxConcurrent > 0 && k.inFlight+conc > l.cfg.MaxConcurrent {
		l.breached(ip, c, now, "concurrency")
		return fmt.Sprintf("Too many requests in progress: this request costs %d of the %d this client may have running", conc, l.cfg.MaxConcurrent), 1
	}
	if l.cfg.Rate > 0 {
		k.tokens -= rateCost
	}
	k.inFlight += conc
	return "", 0
}

// Spend takes one request of ip's rate, for a front whose calls are not
// HTTP requests (Electrum's); a non-empty message says why not, with the
// seconds to wait. The concurrency limit is not held past the call here:
// such a front bounds its calls in progress itself.
func (l *Limiter) Spend(ip string) (string, int) {
	msg, retry := l.acquire(ip, 1)
	if msg == "" {
		l.release(ip, l.concCost(1))
	}
	return msg, retry
}

func (l *Limiter) release(ip string, cost int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if k := l.clients[IPKey(ip)]; k != nil {
		k.inFlight -= cost
	}
}

// breached records an excess; separate episodes may lead to a block.
func (l *Limiter) breached(ip string, c *restClient, now time.Time, which string) {
	l.over.add(ip, which, now)
	if l.rejected != nil {
		l.rejected.WithLabelValues(which).Inc()
	}
	if l.cfg.BlockDuration <= 0 || now.Sub(c.breach) < breachGap {
		return
	}
	c.breach = now
	if c.episodes++; c.episodes >= blockAfter && Blockable(ip) {
		c.blocked, c.episodes = now.Add(l.cfg.BlockDuration), 0
		l.over.add(ip, "blocked", now)
	}
}

// Blockable: local addresses are never blocked (they may stand for many
// clients behind a misconfigured proxy).
func Blockable(ip string) bool {
	a, err := netip.ParseAddr(ip)
	return err == nil && !a.IsLoopback() && !a.IsPrivate() && !a.IsLinkLocalUnicast()
}

// sweep forgets idle clients, at most once a minute.
func (l *Limiter) sweep(now time.Time) {
	if now.Sub(l.swept) < time.Minute {
		return
	}
	l.swept = now
	for k, c := range l.clients {
		if c.inFlight <= 0 && now.Sub(c.seen) > l.cfg.StateTTL && !now.Before(c.blocked) {
			delete(l.clients, k)
		}
	}
}

// OverLimits lists the clients that went over a limit recently, per
// surface, for /admin.
type OverLimits struct {
	rest, ws *overList
}

// NewOverLimits keeps each client for ttl after its last excess.
func NewOverLimits(ttl time.Duration) *OverLimits {
	return &OverLimits{rest: newOverList(ttl), ws: newOverList(ttl)}
}

// OverLimit is one client over a limit.
type OverLimit struct {
	IP    string    `json:"ip"`
	Limit string    `json:"limit"` // which limit it hit last
	Count int       `json:"count"`
	Last  time.Time `json:"last"`
}

// AddWS records a websocket client over a limit.
func (o *OverLimits) AddWS(ip, limit string) {
	if o != nil {
		o.ws.add(ip, limit, time.Now())
	}
}

// List returns the HTTP (REST, Esplora) and websocket clients, most
// recent first.
func (o *OverLimits) List() (rest, ws []OverLimit) { return o.rest.list(), o.ws.list() }

type overList struct {
	ttl time.Duration
	now func() time.Time
	mu  sync.Mutex
	m   map[string]*OverLimit
}

func newOverList(ttl time.Duration) *overList {
	return &overList{ttl: ttl, now: time.Now, m: map[string]*OverLimit{}}
}

// MaxOverListed bounds the list's memory under a flood of addresses.
const MaxOverListed = 10000

func (o *overList) add(ip, limit string, now time.Time) {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	e := o.m[ip]
	if e == nil {
		if len(o.m) >= MaxOverListed {
			o.expire(now)
			if len(o.m) >= MaxOverListed {
				return
			}
		}
		e = &OverLimit{IP: ip}
		o.m[ip] = e
	}
	e.Limit, e.Last = limit, now
	e.Count++
}

func (o *overList) expire(now time.Time) {
	for k, e := range o.m {
		if now.Sub(e.Last) > o.ttl {
			delete(o.m, k)
		}
	}
}

func (o *overList) list() []OverLimit {
	if o == nil {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.expire(o.now())
	out := make([]OverLimit, 0, len(o.m))
	for _, e := range o.m {
		out = append(out, *e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Last.After(out[j].Last) })
	return out
}
