package fiat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Errors of CoinGecko requests.
var (
	// ErrThrottled: the provider kept refusing with HTTP 429 (or its rate
	// limit message) through every allowed attempt.
	ErrThrottled = errors.New("coingecko: rate limited")
	// ErrMalformed: a 200 answer that is not the JSON the endpoint defines.
	ErrMalformed = errors.New("coingecko: malformed answer")
	// ErrBanned: the provider's CDN bans this IP for a while (Cloudflare's
	// "error code: 1015"). As Blockbook, it is not retried: every retry
	// would prolong the ban; the turn fails and the next one tries again.
	ErrBanned = errors.New("coingecko: IP banned by the provider's rate limiter (Cloudflare error 1015)")
)

// HTTPError is any other non-200 answer. Code is CoinGecko's error_code
// when the body carries one (10012: history beyond the plan's range).
type HTTPError struct {
	Status  int
	Code    int
	Message string
}

func (e *HTTPError) Error() string {
	if e.Code != 0 {
		return fmt.Sprintf("coingecko: HTTP %d, error_code %d: %s", e.Status, e.Code, e.Message)
	}
	return fmt.Sprintf("coingecko: HTTP %d: %s", e.Status, e.Message)
}

// errCodeRangeLimit is CoinGecko's error for history beyond the plan's range.
const errCodeRangeLimit = 10012

func isRangeLimit(err error) bool {
	var he *HTTPError
	return errors.As(err, &he) && he.Code == errCodeRangeLimit
}

const (
	maxBody = 32 << 20
	// throttleBackoff is the first wait after a 429 without Retry-After
	// (Blockbook waits 60 s); it doubles per attempt up to MaxBackoff.
	throttleBackoff = 60 * time.Second
)

// client makes CoinGecko API v3 requests.
type client struct {
	cfg   *Config
	m     *metrics
	sleep func(ctx context.Context, d time.Duration) error
	now   func() time.Time
	gate  throttleGate
	// bans: when each base URL last answered with a ban.
	bans sync.Map // string → time.Time
}

// bannedSince reports whether base banned a request at t or later.
func (c *client) bannedSince(base string, t time.Time) bool {
	v, ok := c.bans.Load(base)
	return ok && !v.(time.Time).Before(t)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// get requests path?q and decodes the JSON answer into out. Throttled
// requests are retried after Retry-After (or a doubling backoff), at most
// MaxAttempts times in all; the wait holds every other request too
// (throttle.go).
func (c *client) get(ctx context.Context, endpoint, path string, q url.Values, out any) error {
	return c.getAt(ctx, c.cfg.URL, endpoint, path, q, out)
}

// histURL is where the daily history and the vs-currency and coin lists
// are asked: the bootstrap URL when set (Blockbook sends every daily range
// and this metadata there, keeping the plan's rate limit for the current
// and finer rates), else the API.
func (c *client) histURL() string {
	if c.cfg.BootstrapURL != "" {
		return c.cfg.BootstrapURL
	}
	return c.cfg.URL
}

// getAt is get against base instead of the API's URL.
func (c *client) getAt(ctx context.Context, base, endpoint, path string, q url.Values, out any) error {
	u := base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	if !isLowPriority(ctx) {
		defer c.gate.enter()()
	}
	backoff := throttleBackoff
	var waited time.Time // the throttle window's end this request slept to
	for attempt := 1; ; attempt++ {
		var err error
		if waited, err = c.wait(ctx, waited); err != nil {
			return err
		}
		body, status, retryAfter, err := c.do(ctx, u)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err() // a shutdown or a budget, not the provider's failure
			}
			c.m.request(endpoint, "error")
			return fmt.Errorf("coingecko %s: %w", endpoint, err)
		}
		if status == http.StatusOK {
			if err := json.Unmarshal(body, out); err != nil {
				c.m.request(endpoint, "error")
				return fmt.Errorf("%w: %s: %v", ErrMalformed, endpoint, err)
			}
			c.m.request(endpoint, "success")
			return nil
		}
		if banned(body) {
			c.bans.Store(base, c.now())
			c.m.request(endpoint, "banned")
			return fmt.Errorf("%w: %s (HTTP %d)", ErrBanned, endpoint, status)
		}
		if !throttled(status, body) {
			c.m.request(endpoint, "error")
			return httpError(status, body)
		}
		c.m.request(endpoint, "throttled")
		if attempt >= c.cfg.MaxAttempts {
			return fmt.Errorf("%w: %s refused %d times", ErrThrottled, endpoint, attempt)
		}
		wait := backoff
		if retryAfter >= 0 {
			wait = retryAfter
		} else {
			backoff *= 2
		}
		// The window holds every request (one already longer, from
		// another request's 429, is waited out whole); the retry waits
		// for it at the loop's top, where the history's requests give way
		// to the current rates'.
		now := c.now()
		end := c.gate.extend(now.Add(min(wait, c.cfg.MaxBackoff)))
		c.cfg.Log.Warn("rate provider throttles requests, waiting", "endpoint", endpoint, "wait", end.Sub(now).String(), "attempt", attempt)
	}
}

// do makes one request; retryAfter is -1 without a usable header.
func (c *client) do(ctx context.Context, u string) (body []byte, status int, retryAfter time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, 0, -1, err
	}
	req.Header.Set("Accept", "application/json")
	if c.cfg.APIKey != "" {
		if c.cfg.Plan == PlanPro {
			req.Header.Set("x-cg-pro-api-key", c.cfg.APIKey)
		} else {
			req.Header.Set("x-cg-demo-api-key", c.cfg.APIKey)
		}
	}
	resp, err := c.cfg.Client.Do(req)
	if err != nil {
		return nil, 0, -1, err
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, 0, -1, err
	}
	if len(body) > maxBody {
		return nil, 0, -1, fmt.Errorf("answer larger than %d bytes", maxBody)
	}
	return body, resp.StatusCode, parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()), nil
}

// banned recognizes Cloudflare's rate-limit ban, an HTML page that contains
// "error code: 1015" (Blockbook matches it so, before the throttling).
func banned(body []byte) bool {
	return bytes.Contains(bytes.ToLower(body), []byte("error code: 1015"))
}

// throttled recognizes CoinGecko's rate limiting: HTTP 429, or the texts
// Blockbook looks for ("exceeded the rate limit", "throttled") with another
// status.
func throttled(status int, body []byte) bool {
	if status == http.StatusTooManyRequests {
		return true
	}
	b := bytes.ToLower(body)
	return bytes.Contains(b, []byte("exceeded the rate limit")) || bytes.Contains(b, []byte("throttled"))
}

// parseRetryAfter reads delay-seconds or an HTTP date; -1 when absent or
// unusable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return -1
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s < 0 {
			return -1
		}
		return time.Duration(min(s, int64(24*time.Hour/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return -1
}

// httpError extracts CoinGecko's error code and message from either of its
// error shapes: {"status": {...}} and {"error": {"status": {...}}}, or
// {"error": "text"}.
func httpError(status int, body []byte) error {
	type st struct {
		Code    int    `json:"error_code"`
		Message string `json:"error_message"`
	}
	var doc struct {
		Status *st             `json:"status"`
		Error  json.RawMessage `json:"error"`
	}
	he := &HTTPError{Status: status, Message: strings.TrimSpace(string(body))}
	if json.Unmarshal(body, &doc) == nil {
		var nested struct {
			Status *st `json:"status"`
		}
		var text string
		switch {
		case doc.Status != nil:
			he.Code, he.Message = doc.Status.Code, doc.Status.Message
		case json.Unmarshal(doc.Error, &nested) == nil && nested.Status != nil:
			he.Code, he.Message = nested.Status.Code, nested.Status.Message
		case json.Unmarshal(doc.Error, &text) == nil:
			he.Message = text
		}
	}
	if len(he.Message) > 300 {
		he.Message = he.Message[:300] + "…"
	}
	return he
}

// supportedVsCurrencies asks simple/supported_vs_currencies.
func (c *client) supportedVsCurrencies(ctx context.Context) ([]string, error) {
	var out []string
	err := c.getAt(ctx, c.histURL(), "supported_vs_currencies", "/simple/supported_vs_currencies", nil, &out)
	return out, err
}

// simplePrice asks simple/price for the coin's rates in vs.
func (c *client) simplePrice(ctx context.Context, vs []string) (map[string]float64, error) {
	var out map[string]map[string]*float64
	q := url.Values{"ids": {c.cfg.Coin}, "vs_currencies": {strings.Join(vs, ",")}}
	if err := c.get(ctx, "simple/price", "/simple/price", q, &out); err != nil {
		return nil, err
	}
	rates := make(map[string]float64, len(out[c.cfg.Coin]))
	for cur, r := range out[c.cfg.Coin] {
		if r != nil && validRate(*r) && validCurrency(cur) {
			rates[cur] = *r
		}
	}
	return rates, nil
}

// marketChart asks coins/{id}/market_chart for daily prices of vs over
// days ("max" or a number) at histURL; prices are [ms, rate] pairs. id is
// the coin's, or a token's CoinGecko id.
func (c *client) marketChart(ctx context.Context, id, vs, days string) ([][2]float64, error) {
	return c.chartAt(ctx, c.histURL(), id, vs, days, "daily")
}

// chart asks coins/{id}/market_chart with interval ("" leaves CoinGecko's
// automatic granularity: 5-minute points for 1 day, hourly for 2 to 90
// days, daily beyond).
func (c *client) chart(ctx context.Context, id, vs, days, interval string) ([][2]float64, error) {
	return c.chartAt(ctx, c.cfg.URL, id, vs, days, interval)
}

func (c *client) chartAt(ctx context.Context, base, id, vs, days, interval string) ([][2]float64, error) {
	var out struct {
		Prices [][2]float64 `json:"prices"`
	}
	q := url.Values{"vs_currency": {vs}, "days": {days}}
	if interval != "" {
		q.Set("interval", interval)
	}
	if err := c.getAt(ctx, base, "market_chart", "/coins/"+url.PathEscape(id)+"/market_chart", q, &out); err != nil {
		return nil, err
	}
	return out.Prices, nil
}
