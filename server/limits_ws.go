package server

import (
	"github.com/openexplorer/blockbook/internal/listen"

	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// admit decides whether ip (its limiter key, "" when exempt) may open one
// more connection: not while blocked, nor past the per-client cap.
func (s *Websocket) admit(w http.ResponseWriter, ip, key string) bool {
	if key != "" {
		if until, ok := s.blocked.until(ip, time.Now()); ok {
			s.m.rejected.WithLabelValues("blocked").Inc()
			w.Header().Set("Retry-After", fmt.Sprint(int(time.Until(until).Seconds())+1))
			http.Error(w, "Too many websocket messages from this address; blocked for a while", http.StatusTooManyRequests)
			return false
		}
	}
	if !s.perIP.Acquire(key) {
		s.m.rejected.WithLabelValues("per_ip_limit").Inc()
		s.cfg.Over.AddWS(ip, "connections")
		http.Error(w, fmt.Sprintf("Too many websocket connections from this address (limit %d)", s.cfg.MaxConnsPerIP), http.StatusTooManyRequests)
		return false
	}
	return true
}

// msgRate approximates a sliding window with two fixed ones: the previous
// window's count weighs by how much of it still overlaps. Two counters per
// connection, where a list of times would cost kilobytes.
type msgRate struct {
	start      time.Time
	prev, curr int
}

// allow counts a message and reports whether it is within limit per window.
func (m *msgRate) allow(now time.Time, limit int, window time.Duration) bool {
	if m.start.IsZero() {
		m.start = now
	}
	if el := now.Sub(m.start); el >= window {
		if el >= 2*window {
			m.prev = 0
		} else {
			m.prev = m.curr
		}
		m.curr, m.start = 0, m.start.Add(el-el%window) // whole windows
	}
	overlap := 1 - float64(now.Sub(m.start))/float64(window)
	if float64(m.prev)*overlap+float64(m.curr) >= float64(limit) {
		return false
	}
	m.curr++
	return true
}

// overMessageRate counts a message of c; past the rate it records the
// client and, once per connection, blocks its address for new ones.
func (c *wsConn) overMessageRate() bool {
	cfg := &c.s.cfg
	if cfg.MessageRate <= 0 || c.ipKey == "" {
		return false
	}
	if c.rate.allow(time.Now(), cfg.MessageRate, cfg.MessageWindow) {
		return false
	}
	c.s.m.rejected.WithLabelValues("message_rate").Inc()
	cfg.Over.AddWS(c.ip, "messages")
	if cfg.IPBlockDuration > 0 && listen.Blockable(c.ip) {
		c.s.blocked.block(c.ip, time.Now().Add(cfg.IPBlockDuration))
	}
	return true
}

// accountInfoLimited answers whether a getAccountInfo request of c asks for
// one descriptor more than the connection may (Blockbook counts distinct
// descriptors per connection).
func (c *wsConn) accountInfoLimited(req *wsRequest) bool {
	limit := c.s.cfg.GetAccountInfoLimit
	if limit <= 0 || req.Method != "getAccountInfo" || c.ipKey == "" {
		return false
	}
	var p struct {
		Descriptor string `json:"descriptor"`
	}
	if json.Unmarshal(req.Params, &p) != nil {
		return false // the handler reports the bad params
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.descriptors[p.Descriptor]; ok {
		return false
	}
	if len(c.descriptors) >= limit {
		c.s.cfg.Over.AddWS(c.ip, "getAccountInfo")
		return true
	}
	if c.descriptors == nil {
		c.descriptors = map[string]struct{}{}
	}
	c.descriptors[p.Descriptor] = struct{}{}
	return false
}

// blocklist holds addresses barred from new connections until a time.
type blocklist struct {
	mu sync.Mutex
	m  map[string]time.Time
}

func newBlocklist() *blocklist { return &blocklist{m: map[string]time.Time{}} }

func (b *blocklist) block(ip string, until time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.m) >= listen.MaxOverListed {
		now := time.Now()
		for k, t := range b.m {
			if now.After(t) {
				delete(b.m, k)
			}
		}
		if len(b.m) >= listen.MaxOverListed {
			return
		}
	}
	b.m[ip] = until
}

func (b *blocklist) until(ip string, now time.Time) (time.Time, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, ok := b.m[ip]
	if ok && now.After(t) {
		delete(b.m, ip)
		return t, false
	}
	return t, ok
}

// Blocked lists the addresses blocked from new connections and until when.
func (s *Websocket) Blocked() map[string]time.Time {
	s.blocked.mu.Lock()
	defer s.blocked.mu.Unlock()
	out := make(map[string]time.Time, len(s.blocked.m))
	now := time.Now()
	for k, t := range s.blocked.m {
		if now.Before(t) {
			out[k] = t
		}
	}
	return out
}

// requestID is the id of a request refused before it is dispatched, so
// the client can match the error to its request.
func requestID(data []byte) string {
	req, _ := parseRequest(data)
	return req.ID
}

// wsCost weighs a request against the connection's pending slots as REST
// requests are weighed (see requestCost): an account page of 1000 full
// txs or a gap of 10,000 holds the server far longer than a ping. Capped
// at the slots, so that each request can run alone.
func wsCost(req *wsRequest, slots int) int {
	if req.Method != "getAccountInfo" && req.Method != "getAccountUtxo" && req.Method != "getBalanceHistory" {
		return 1
	}
	var p struct {
		Details  string          `json:"details"`
		PageSize json.RawMessage `json:"pageSize"`
		Gap      json.RawMessage `json:"gap"`
	}
	_ = json.Unmarshal(req.Params, &p) // bad params are the handler's to report
	num := func(raw json.RawMessage) int {
		var n int
		if json.Unmarshal(raw, &n) != nil {
			var s string
			if json.Unmarshal(raw, &s) == nil {
				n, _ = strconv.Atoi(s)
			}
		}
		return n
	}
	cost := 1
	if p.Details == "txs" || p.Details == "txslight" {
		page := num(p.PageSize)
		if page <= 0 {
			page = 25
		}
		cost += page / 100
	}
	if g := num(p.Gap); g > 20 {
		cost += min(g/500, 20)
	}
	return max(1, min(cost, slots))
}

// takePending takes the request's cost in pending slots; 0 when they are
// not free. Only readLoop takes slots, so a partial take never competes
// with another.
func (c *wsConn) takePending(req *wsRequest) int {
	cost := wsCost(req, cap(c.pending))
	for i := 0; i < cost; i++ {
		select {
		case c.pending <- struct{}{}:
		default:
			c.releasePending(i)
			return 0
		}
	}
	return cost
}

func (c *wsConn) releasePending(n int) {
	for i := 0; i < n; i++ {
		<-c.pending
	}
}

// pendingLimitMessage says why a request found no pending slots.
func pendingLimitMessage(req *wsRequest, slots int) string {
	msg := fmt.Sprintf("Too many requests in progress on this connection (limit %d)", slots)
	if n := wsCost(req, slots); n > 1 {
		msg += fmt.Sprintf("; this request counts as %d", n)
	}
	return msg
}
