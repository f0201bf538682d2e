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
	// Late, when set, says the process is late (LateAfter): a client
	// then gets no more than its share, the sustained Rate, and is
	// refused past it even with tokens left in its burst (the burst is
	// credit the process gives while it has time to spare).
	Late func() bool
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
	// recent is the cost it was admitted, decayed with shareTau: its
	// rate per second is recent/shareTau.
	recent   float64
	recentAt time.Time
}

// shareTau is the time constant of a client's recent rate: long enough
// that a victim's few requests a second do not look like a burst.
const shareTau = 5 * time.Second

// recentRate is c's admitted cost per second, decayed to now.
func (c *restClient) recentRate(now time.Time) float64 {
	if dt := now.Sub(c.recentAt); dt > 0 {
		c.recent *= math.Exp(-dt.Seconds() / shareTau.Seconds())
		c.recentAt = now
	}
	return c.recent / shareTau.Seconds()
}

// Refusal is why a request was refused: Msg ("" when admitted), the
// seconds to wait; Share when the client was past its share while the
// process was late, and Hold when the process was late (any refusal):
// the refusal is then held (HTTP) or the client's session paused
// (Electrum), so that a client looping on refusals costs no CPU.
type Refusal struct {
	Msg         string
	Retry       int
	Share, Hold bool
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
			Name: "blockbook_" + cfg.Name + "_limit_rejections_total", Help: "requests of the " + cfg.Name + " listener refused by its per-client limits (HTTP 429, Electrum -101 or -102), by the limit they hit",
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
		if ref := l.acquire(ip, cost); ref.Msg != "" {
			if ref.Hold {
				holdRefusal(r)
			}
			w.Header().Set("Retry-After", strconv.Itoa(ref.Retry))
			WriteJSONError(w, http.StatusTooManyRequests, ref.Msg)
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

// LateHold is how long a refusal waits before it is written while the
// process is late: the client's connection cannot carry its next request
// meanwhile, so a greedy client's loop of cheap refusals runs at most
// once a second per connection (the wait costs a parked goroutine, no
// CPU).
const LateHold = time.Second

func holdRefusal(r *http.Request) {
	t := time.NewTimer(LateHold)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
	}
}

// concCost is a request's share of the concurrency limit; capped, so that
// even the heaviest request can run alone.
func (l *Limiter) concCost(cost int) int { return min(cost, max(l.cfg.MaxConcurrent, 1)) }

// acquire takes cost tokens and concurrency units for ip (a request costs
// its weight in both, capped by the burst and the concurrency limit); a
// non-empty message says which limit refused and the seconds to wait.
func (l *Limiter) acquire(ip string, cost int) Refusal {
	ref := l.admit(ip, cost)
	if ref.Msg != "" && l.cfg.Late != nil {
		ref.Hold = ref.Share || l.cfg.Late()
	}
	return ref
}

// admit is acquire's decision.
func (l *Limiter) admit(ip string, cost int) Refusal {
	rateCost, conc := float64(min(cost, l.cfg.Burst)), l.concCost(cost)
	key, now := IPKey(ip), l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	c := l.client(ip, now)
	if now.Before(c.blocked) {
		if l.rejected != nil {
			l.rejected.WithLabelValues("blocked").Inc()
		}
		return Refusal{Msg: "Too many requests: this client is blocked for a while after repeated excess", Retry: int(c.blocked.Sub(now).Seconds()) + 1}
	}
	// The rate is counted per key (IPv6 per /64), the block per address.
	k := l.client(key, now)
	if l.cfg.Rate > 0 {
		perSec := l.refill(k, now)
		if k.tokens < rateCost {
			l.breached(ip, c, now, "rate")
			return Refusal{Msg: fmt.Sprintf("Too many requests: this request costs %d of the %d this client may spend per %s", int(rateCost), l.cfg.Rate, l.cfg.Window), Retry: int((rateCost-k.tokens)/perSec) + 1}
		}
		// While the process is late, a client already past its share
		// (the sustained rate) is refused even within its burst: its
		// cheap requests are what every other client waits behind.
		if l.cfg.Late != nil && k.recentRate(now) > perSec && l.cfg.Late() {
			l.breached(ip, c, now, "share")
			return Refusal{Msg: fmt.Sprintf("Server busy: this client is past its share (%d per %s) while the server is behind; retry in a second", l.cfg.Rate, l.cfg.Window), Retry: 1, Share: true}
		}
	}
	if l.cfg.MaxConcurrent > 0 && k.inFlight+conc > l.cfg.MaxConcurrent {
		l.breached(ip, c, now, "concurrency")
		return Refusal{Msg: fmt.Sprintf("Too many requests in progress: this request costs %d of the %d this client may have running", conc, l.cfg.MaxConcurrent), Retry: 1}
	}
	if l.cfg.Rate > 0 {
		k.spend(rateCost, now)
	}
	k.inFlight += conc
	return Refusal{}
}

// client is the state kept for key (an address or a /64), created with a
// full burst; it is marked seen now. Under l.mu.
func (l *Limiter) client(key string, now time.Time) *restClient {
	c := l.clients[key]
	if c == nil {
		c = &restClient{tokens: float64(l.cfg.Burst), refilled: now}
		l.clients[key] = c
	}
	c.seen = now
	return c
}

// spend takes cost tokens, counted in the recent rate (the share while
// late).
func (k *restClient) spend(cost float64, now time.Time) {
	k.tokens -= cost
	k.recentRate(now)
	k.recent += cost
}

// refill adds the tokens earned since k's last refill (up to the burst);
// it returns the rate per second.
func (l *Limiter) refill(k *restClient, now time.Time) (perSec float64) {
	perSec = float64(l.cfg.Rate) / l.cfg.Window.Seconds()
	// now was read before the lock: a request that waited for it may
	// carry an older time than the last refill, which must not take
	// tokens away (under load that emptied a large bucket at once).
	if elapsed := now.Sub(k.refilled); elapsed > 0 {
		k.tokens = math.Min(float64(l.cfg.Burst), k.tokens+elapsed.Seconds()*perSec)
		k.refilled = now
	}
	return perSec
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
	// A share refusal is the server's lateness, not the client's excess:
	// it never counts towards a block (a client within its budget must
	// not be blocked for minutes by a flood it is not part of).
	if which == "share" || l.cfg.BlockDuration <= 0 || now.Sub(c.breach) < breachGap {
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
