// Package fiattest is a local stand-in for CoinGecko's API v3 for tests: it
// answers simple/supported_vs_currencies, simple/price and
// coins/{id}/market_chart with the JSON shapes CoinGecko sends (including
// its rate-limit and history-range errors), from data the test sets.
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
}

// New starts a server for coin ("bitcoin") whose clock reads now.
func New(coin string, now time.Time) *Server {
	s := &Server{coin: coin, current: map[string]float64{}, history: map[string]map[int64]float64{}, now: now.UTC(),
		malformed: map[string]string{}}
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
	if s.throttle > 0 {
		s.throttle--
		if s.retryAfter != "" {
			w.Header().Set("Retry-After", s.retryAfter)
		}
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"status":{"error_code":429,"error_message":"You've exceeded the Rate Limit. Please visit https://www.coingecko.com/en/api/pricing to subscribe to our API plans for higher rate limits."}}`)
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/api/v3")
	var endpoint string
	switch {
	case path == "/simple/supported_vs_currencies":
		endpoint = "supported_vs_currencies"
	case path == "/simple/price":
		endpoint = "simple/price"
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
		if id != s.coin {
			continue
		}
		rates := map[string]float64{}
		for _, v := range vs {
			if rate, ok := s.current[v]; ok {
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
	if coin != s.coin {
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
	var ts []int64
	for t := range s.history[vs] {
		if t >= from && t <= s.now.Unix() {
			ts = append(ts, t)
		}
	}
	slices.Sort(ts)
	for _, t := range ts {
		prices = append(prices, point{float64(t * 1000), s.history[vs][t]})
	}
	if rate, ok := s.current[vs]; ok {
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
