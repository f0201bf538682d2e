// Package fiattest is a local stand-in for CoinGecko's API v3 for tests: it
// answers simple/supported_vs_currencies, simple/price, coins/list and
// coins/{id}/market_chart with the JSON shapes CoinGecko sends (including
// its rate-limit and history-range errors), from data the test sets: one
// coin, with daily closes and (SetIntraday) CoinGecko's automatic
// granularity of 5-minute and hourly points, and tokens with a contract on
// a platform.
package fiattest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

const day = 24 * time.Hour

// Server serves one coin. Change its fields under Lock/Unlock (or with the
// setters) while it runs.
type Server struct {
	srv *httptest.Server

	mu        sync.Mutex
	coin      string
	supported []string
	current   map[string]float64
	// history holds daily closes per vs-currency, keyed by the day's
	// 00:00 UTC unix time.
	history map[string]map[int64]float64
	now     time.Time
	// rangeLimitDays, when > 0, refuses longer history requests with
	// error 10012, as the public API does beyond 365 days.
	rangeLimitDays int
	throttle       int    // answer this many next requests with 429
	retryAfter     string // Retry-After of those answers ("" omits it)
	malformed      map[string]string
	requests       []string
	apiKeys        []string
	tokens         map[string]*token
	// throttlePaths answers requests whose URI contains the key with 429,
	// as many times as the value.
	throttlePaths map[string]int
	// failPaths answers requests whose URI contains the key with 500, the
	// next value times.
	failPaths map[string]int
	// banPaths answers requests whose URI contains the key with
	// Cloudflare's rate-limit ban page, the next value times.
	banPaths map[string]int
	// intraday gives the coin's rate in a vs-currency at any time, for
	// market charts without interval=daily (5-minute and hourly points).
	intraday map[string]func(time.Time) float64
}

// token is a coin of CoinGecko's with a contract on a platform.
type token struct {
	platform, contract string
	current            map[string]float64
	history            map[string]map[int64]float64
}

// New starts a server for coin ("bitcoin") whose clock reads now.
func New(coin string, now time.Time) *Server {
	s := &Server{coin: coin, current: map[string]float64{}, history: map[string]map[int64]float64{}, now: now.UTC(),
		malformed: map[string]string{}, tokens: map[string]*token{}, throttlePaths: map[string]int{}, failPaths: map[string]int{}, banPaths: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the API base, as fiat_rates_params' url takes it.
func (s *Server) URL() string { return s.srv.URL + "/api/v3" }

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// SetSupported sets simple/supported_vs_currencies.
func (s *Server) SetSupported(vs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.supported = slices.Clone(vs)
}

// SetCurrent sets the coin's current rates (simple/price).
func (s *Server) SetCurrent(rates map[string]float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.current = maps(rates)
}

// SetNow sets the server's clock (the last point of a market chart).
func (s *Server) SetNow(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now.UTC()
}

// AddDay sets the daily close of vs on the day starting at dayStart
// (00:00 UTC).
func (s *Server) AddDay(vs string, dayStart time.Time, rate float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.history[vs] == nil {
		s.history[vs] = map[int64]float64{}
	}
	s.history[vs][dayStart.UTC().Truncate(day).Unix()] = rate
}

// SetRangeLimit makes history requests longer than days (or "max") fail
// with CoinGecko's error 10012; 0 lifts the limit.
func (s *Server) SetRangeLimit(days int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rangeLimitDays = days
}

// Throttle answers the next n requests with 429 and the given Retry-After.
func (s *Server) Throttle(n int, retryAfter string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.throttle, s.retryAfter = n, retryAfter
}

// AddToken lists coin id as a token with contract on platform
// (coins/list?include_platform=true), without rates until set.
func (s *Server) AddToken(id, platform, contract string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[id] = &token{platform: platform, contract: contract, current: map[string]float64{}, history: map[string]map[int64]float64{}}
}

// SetTokenCurrent sets the current rate of token id in vs (simple/price).
func (s *Server) SetTokenCurrent(id, vs string, rate float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[id].current[vs] = rate
}

// AddTokenDay sets the daily close of token id in vs on the day starting
// at dayStart.
func (s *Server) AddTokenDay(id, vs string, dayStart time.Time, rate float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tk := s.tokens[id]
	if tk.history[vs] == nil {
		tk.history[vs] = map[int64]float64{}
	}
	tk.history[vs][dayStart.UTC().Truncate(day).Unix()] = rate
}

// SetIntraday makes market charts of the coin in vs without interval=daily
// answer CoinGecko's automatic granularity, with rates fn(point time):
// 5-minute points for days=1, hourly points for days=2..90 (beyond, and
// without fn, the daily closes).
func (s *Server) SetIntraday(vs string, fn func(time.Time) float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.intraday == nil {
		s.intraday = map[string]func(time.Time) float64{}
	}
	s.intraday[vs] = fn
}

// IntradayOffset is how far after the grid (5 minutes or an hour) the
// intraday points lie: CoinGecko's points are not on round times.
const IntradayOffset = 61500 * time.Millisecond

// ThrottlePath answers the next n requests whose URI (path and query)
// contains substr with 429, without Retry-After.
func (s *Server) ThrottlePath(substr string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.throttlePaths[substr] = n
}

// FailPath answers the next n requests whose URI (path and query)
// contains substr with 500, as a failing server does.
func (s *Server) FailPath(substr string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failPaths[substr] = n
}

// BanPath answers the next n requests whose URI (path and query) contains
// substr ("" matches every one) as Cloudflare does while it bans an IP for
// exceeding the rate limit: HTTP 429 with its "error code: 1015" page.
func (s *Server) BanPath(substr string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.banPaths[substr] = n
}

// Malform answers requests of endpoint ("simple/price", "market_chart",
// "supported_vs_currencies") with body and status 200; "" restores them.
func (s *Server) Malform(endpoint, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if body == "" {
		delete(s.malformed, endpoint)
	} else {
		s.malformed[endpoint] = body
	}
}

// Requests returns the request URIs served so far (path and query).
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// APIKeys returns the API key headers seen, as "header: value".
func (s *Server) APIKeys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.apiKeys)
}

func maps(m map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r.URL.RequestURI())
	for _, h := range []string{"x-cg-demo-api-key", "x-cg-pro-api-key"} {
		if v := r.Header.Get(h); v != "" {
			s.apiKeys = append(s.apiKeys, h+": "+v)
		}
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if countDown(s.banPaths, r.URL.RequestURI()) {
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, "<!DOCTYPE html><html><head><title>Access denied | rate limited</title></head><body><h1>Error 1015</h1><p>You are being rate limited.</p><p>error code: 1015</p></body></html>")
		return
	}
	if countDown(s.throttlePaths, r.URL.RequestURI()) || s.throttle > 0 {
		if s.throttle > 0 {
			s.throttle--
		}
		if s.retryAfter != "" {
			w.Header().Set("Retry-After", s.retryAfter)
		}
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"status":{"error_code":429,"error_message":"You've exceeded the Rate Limit. Please visit https://www.coingecko.com/en/api/pricing to subscribe to our API plans for higher rate limits."}}`)
		return
	}
	if countDown(s.failPaths, r.URL.RequestURI()) {
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, `{"error":"internal server error"}`)
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/api/v3")
	var endpoint string
	switch {
	case path == "/simple/supported_vs_currencies":
		endpoint = "supported_vs_currencies"
	case path == "/simple/price":
		endpoint = "simple/price"
	case path == "/coins/list":
		endpoint = "coins/list"
	case strings.HasPrefix(path, "/coins/") && strings.HasSuffix(path, "/market_chart"):
		endpoint = "market_chart"
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"error":"Not Found"}`)
		return
	}
	if body, ok := s.malformed[endpoint]; ok {
		fmt.Fprint(w, body)
		return
	}
	var out any
	switch endpoint {
	case "supported_vs_currencies":
		out = s.supported
	case "simple/price":
		out = s.simplePrice(r)
	case "coins/list":
		out = s.coinsList(r)
	case "market_chart":
		var status int
		out, status = s.marketChart(r, strings.TrimSuffix(strings.TrimPrefix(path, "/coins/"), "/market_chart"))
		if status != http.StatusOK {
			w.WriteHeader(status)
		}
	}
	_ = json.NewEncoder(w).Encode(out)
}

// simplePrice answers {"<coin>": {"<vs>": rate, ...}} for the requested
// ids and vs_currencies it knows, {} for unknown coins.
func (s *Server) simplePrice(r *http.Request) any {
	out := map[string]map[string]float64{}
	vs := strings.Split(r.URL.Query().Get("vs_currencies"), ",")
	for _, id := range strings.Split(r.URL.Query().Get("ids"), ",") {
		current := s.current
		if tk := s.tokens[id]; tk != nil {
			current = tk.current
		} else if id != s.coin {
			continue
		}
		rates := map[string]float64{}
		for _, v := range vs {
			if rate, ok := current[v]; ok {
				rates[v] = rate
			}
		}
		out[id] = rates
	}
	return out
}

// marketChart answers {prices, market_caps, total_volumes} with one point
// per stored day in the range and a last point at "now" (the current rate),
// as CoinGecko's interval=daily does.
func (s *Server) marketChart(r *http.Request, coin string) (any, int) {
	q := r.URL.Query()
	history, current := s.history, s.current
	if tk := s.tokens[coin]; tk != nil {
		history, current = tk.history, tk.current
	} else if coin != s.coin {
		return map[string]string{"error": "coin not found"}, http.StatusNotFound
	}
	vs, days := q.Get("vs_currency"), q.Get("days")
	var from int64
	switch n, err := strconv.Atoi(days); {
	case days == "max":
		if s.rangeLimitDays > 0 {
			return rangeError(s.rangeLimitDays), http.StatusUnauthorized
		}
	case err != nil || n < 1:
		return map[string]string{"error": "invalid days"}, http.StatusBadRequest
	default:
		if s.rangeLimitDays > 0 && n > s.rangeLimitDays {
			return rangeError(s.rangeLimitDays), http.StatusUnauthorized
		}
		from = s.now.Add(-time.Duration(n) * day).Unix()
	}
	type point [2]float64
	var prices []point
	if fn := s.intraday[vs]; fn != nil && q.Get("interval") != "daily" && days != "max" && coin == s.coin {
		if n, _ := strconv.Atoi(days); n <= 90 {
			step := time.Hour
			if n == 1 {
				step = 5 * time.Minute
			}
			for t := s.now.Add(-time.Duration(n) * day).Truncate(step).Add(step + IntradayOffset); t.Before(s.now); t = t.Add(step) {
				prices = append(prices, point{float64(t.UnixMilli()), fn(t)})
			}
			history = nil // the points above instead of the days
		}
	}
	var ts []int64
	for t := range history[vs] {
		if t >= from && t <= s.now.Unix() {
			ts = append(ts, t)
		}
	}
	slices.Sort(ts)
	for _, t := range ts {
		prices = append(prices, point{float64(t * 1000), history[vs][t]})
	}
	if rate, ok := current[vs]; ok {
		prices = append(prices, point{float64(s.now.UnixMilli()), rate})
	}
	if prices == nil {
		prices = []point{}
	}
	caps := make([]point, len(prices))
	vols := make([]point, len(prices))
	for i, p := range prices {
		caps[i] = point{p[0], p[1] * 19_000_000}
		vols[i] = point{p[0], p[1] * 400_000}
	}
	return map[string][]point{"prices": prices, "market_caps": caps, "total_volumes": vols}, http.StatusOK
}

func rangeError(days int) any {
	return map[string]any{"error": map[string]any{"status": map[string]any{
		"timestamp": "2024-01-01T00:00:00.000+00:00", "error_code": 10012,
		"error_message": fmt.Sprintf("Your request exceeds the allowed time range. Public API users are limited to querying historical data within the past %d days. Upgrade to a paid plan to enjoy full historical data access: https://www.coingecko.com/en/api/pricing. ", days),
	}}}
}

// countDown counts down the first entry of paths whose key uri contains;
// false when none has requests left.
func countDown(paths map[string]int, uri string) bool {
	for sub, n := range paths {
		if n > 0 && strings.Contains(uri, sub) {
			paths[sub] = n - 1
			return true
		}
	}
	return false
}

// coinsList answers coins/list: the coin and the tokens, sorted by id,
// with their platforms when include_platform=true (the coin has none).
func (s *Server) coinsList(r *http.Request) any {
	type coin struct {
		ID        string             `json:"id"`
		Symbol    string             `json:"symbol"`
		Name      string             `json:"name"`
		Platforms *map[string]string `json:"platforms,omitempty"`
	}
	withPlatforms := r.URL.Query().Get("include_platform") == "true"
	ids := []string{s.coin}
	for id := range s.tokens {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := make([]coin, 0, len(ids))
	for _, id := range ids {
		c := coin{ID: id, Symbol: strings.ToLower(strings.SplitN(id, "-", 2)[0]), Name: id}
		if withPlatforms {
			p := map[string]string{}
			if tk := s.tokens[id]; tk != nil {
				p[tk.platform] = tk.contract
			}
			c.Platforms = &p
		}
		out = append(out, c)
	}
	return out
}
