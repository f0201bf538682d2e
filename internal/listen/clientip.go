package listen

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
)

// ClientIPConfig is how the client of a request is told from the proxies
// in front of the server, as Blockbook does it (its <NET>_TRUSTED_PROXIES,
// <NET>_CLOUDFLARE_IPS and <NET>_CLOUDFLARE_PSEUDO_IPV4 variables). The
// zero value believes X-Real-Ip and CF-Connecting-IP from loopback and
// private peers only.
type ClientIPConfig struct {
	// RealIPProxies are peers, besides loopback and private ones, whose
	// X-Real-Ip names the client. Setting any switches the Cloudflare
	// headers off: the proxies are then the only source.
	RealIPProxies []netip.Prefix
	// Cloudflare are the peers (besides loopback and private ones) whose
	// CF-Connecting-IP is believed; CloudflareAnyPeer believes it from
	// anyone (verification off).
	Cloudflare        []netip.Prefix
	CloudflareAnyPeer bool
	// PseudoIPv4 prefers CF-Connecting-IPv6, which Cloudflare only sets
	// itself in its "Pseudo IPv4: Overwrite Headers" mode.
	PseudoIPv4 bool
	// LimitLocal (-listenlimitlocal) makes loopback and private peers
	// clients like any other: each address is limited on its own rather
	// than exempt. For a host whose local peers are not proxies, and for
	// load tests run on one machine, whose attackers are local.
	LimitLocal bool
}

// ClientIP is the address a connection is attributed to. A peer in
// forwardedFor (-wstrustedproxies) is a proxy whose X-Forwarded-For is
// followed: the nearest untrusted address, walking from the right (the
// entries proxies appended). Any other peer is attributed by cfg (see
// realClientIP). Headers from other peers are ignored, so clients cannot
// forge them.
func ClientIP(r *http.Request, forwardedFor []netip.Prefix, cfg ClientIPConfig) string {
	peer, ok := parseHost(r.RemoteAddr)
	if !ok {
		return r.RemoteAddr
	}
	if !isTrusted(peer, forwardedFor) {
		return realClientIP(r, peer, cfg)
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break // a garbled entry: trust nothing further left
		}
		a = a.Unmap().WithZone("")
		if !isTrusted(a, forwardedFor) {
			return a.String()
		}
		peer = a
	}
	return peer.String()
}

// realClientIP attributes a request as Blockbook does: with no X-Real-Ip
// proxies configured, CF-Connecting-IP (or, in pseudo-IPv4 mode,
// CF-Connecting-IPv6) from a Cloudflare, loopback or private peer; then
// X-Real-Ip from a loopback, private (unless LimitLocal) or configured
// proxy peer; else the peer itself. Link-local peers are not trusted
// implicitly: anyone on the link can use such an address.
func realClientIP(r *http.Request, peer netip.Addr, cfg ClientIPConfig) string {
	// With LimitLocal, local peers are clients, not proxies: the header
	// they send would give them a fresh budget per request.
	local := (peer.IsLoopback() || peer.IsPrivate()) && !cfg.LimitLocal
	if len(cfg.RealIPProxies) == 0 && (cfg.CloudflareAnyPeer || local || isTrusted(peer, cfg.Cloudflare)) {
		if cfg.PseudoIPv4 {
			if a, ok := headerAddr(r, "CF-Connecting-IPv6"); ok {
				return a.String()
			}
		}
		if a, ok := headerAddr(r, "CF-Connecting-IP"); ok {
			return a.String()
		}
	}
	if local || isTrusted(peer, cfg.RealIPProxies) {
		if a, ok := headerAddr(r, "X-Real-Ip"); ok {
			return a.String()
		}
	}
	return peer.String()
}

// headerAddr parses an address header; a missing or garbled one is absent.
func headerAddr(r *http.Request, name string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(strings.TrimSpace(r.Header.Get(name)))
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap().WithZone(""), true
}

func parseHost(hostport string) (netip.Addr, bool) {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap().WithZone(""), true
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// IPKey groups addresses for the per-IP limit: IPv6 clients usually hold
// a whole /64, so they are counted per /64.
func IPKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	if a.Is6() {
		if p, err := a.Prefix(64); err == nil {
			return p.String()
		}
	}
	return a.String()
}

// ParseTrustedProxies parses a comma-separated list of CIDRs or addresses.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !strings.Contains(f, "/") {
			a, err := netip.ParseAddr(f)
			if err != nil {
				return nil, err
			}
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// IPLimiter counts open connections per key; max 0 disables it.
type IPLimiter struct {
	max int
	mu  sync.Mutex
	n   map[string]int
}

// NewIPLimiter allows limit open connections per key.
func NewIPLimiter(limit int) *IPLimiter { return &IPLimiter{max: limit, n: map[string]int{}} }

// Acquire takes a place for key; false when it has none left.
func (l *IPLimiter) Acquire(key string) bool {
	if l.max <= 0 || key == "" { // "" is an exempt client
		return true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n[key] >= l.max {
		return false
	}
	l.n[key]++
	return true
}

// Release gives back a place of key.
func (l *IPLimiter) Release(key string) {
	if l.max <= 0 || key == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n[key]--; l.n[key] <= 0 {
		delete(l.n, key)
	}
}
