package server

import (
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/openexplorer/blockbook/internal/listen"
)

// The per-client limits and the client identity rule live in the listener
// kit (internal/listen), shared by every front; these names keep the
// public server's API.
type (
	// RESTLimitConfig limits what one client may ask of the public HTTP
	// server (REST API and explorer pages).
	RESTLimitConfig = listen.LimitConfig
	// RESTLimiter enforces RESTLimitConfig.
	RESTLimiter = listen.Limiter
	// ClientIPConfig is how the client of a request is told from proxies.
	ClientIPConfig = listen.ClientIPConfig
	// OverLimits lists the clients over a limit, for /admin.
	OverLimits = listen.OverLimits
	// OverLimit is one client over a limit.
	OverLimit = listen.OverLimit
)

// NewRESTLimiter builds the public server's limiter: its cost and its
// exempt routes are the public server's unless cfg names others.
func NewRESTLimiter(cfg RESTLimitConfig, over *OverLimits) *RESTLimiter {
	if cfg.Cost == nil {
		cfg.Cost = requestCost
	}
	if cfg.Exempt == nil {
		cfg.Exempt = exemptPath
	}
	return listen.NewLimiter(cfg, over)
}

// NewOverLimits keeps each client for ttl after its last excess.
func NewOverLimits(ttl time.Duration) *OverLimits { return listen.NewOverLimits(ttl) }

// ParseTrustedProxies parses a comma-separated list of CIDRs or addresses.
func ParseTrustedProxies(s string) ([]netip.Prefix, error) { return listen.ParseTrustedProxies(s) }

// CloudflareRanges returns Cloudflare's published edge ranges.
func CloudflareRanges() []netip.Prefix { return listen.CloudflareRanges() }

// exemptPath are the routes no limit applies to: static files, the API
// docs and the websocket (which has its own limits).
func exemptPath(p string) bool {
	switch p {
	case "/favicon.ico", "/test-websocket.html", "/api-docs", "/openapi.yaml", "/websocket":
		return true
	}
	return strings.HasPrefix(p, "/static/")
}

// requestCost weighs a request by the work it may cause: pages of full
// transactions and xpubs with a large gap hold the server longer than a
// status call. Malformed numbers cost as the default; the handler refuses
// them.
func requestCost(r *http.Request) int {
	q := r.URL.Query()
	cost := 1
	if d := q.Get("details"); d == "txs" || d == "txslight" || strings.Contains(r.URL.Path, "/xpub/") {
		page := 25
		if n, err := strconv.Atoi(q.Get("pageSize")); err == nil && n > 0 {
			page = n
		}
		if d == "txs" || d == "txslight" {
			cost += page / 100 // 1000 txs: 11
		}
	}
	if strings.Contains(r.URL.Path, "/xpub/") {
		cost++
		if g, err := strconv.Atoi(q.Get("gap")); err == nil && g > 20 {
			cost += min(g/500, 20) // gap 10000: +20
		}
	}
	if strings.Contains(r.URL.Path, "/balancehistory/") || strings.Contains(r.URL.Path, "/utxo/") {
		cost++
	}
	// The explorer's address page draws the balance chart and lists the
	// UTXOs besides its page of txs.
	if strings.HasPrefix(r.URL.Path, "/address/") {
		cost++
	}
	// The NFT page reads the token's metadata from its host.
	if strings.HasPrefix(r.URL.Path, "/nft/") {
		cost++
	}
	if strings.Contains(r.URL.Path, "/sp-tweaks/") {
		cost += 2 // a row per eligible tx of the block: thousands on mainnet
	}
	return cost
}
