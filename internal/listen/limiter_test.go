package listen

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// limitedReq is a request from a public client behind a local proxy.
func limitedReq(method, target, client string) *http.Request {
	r := httptest.NewRequest(method, target, nil)
	r.RemoteAddr = "127.0.0.1:5000"
	if client != "" {
		r.Header.Set("X-Real-Ip", client)
	}
	return r
}

// staticExempt and xpubCost stand for a front's free and heavy routes.
func staticExempt(p string) bool { return strings.HasPrefix(p, "/static/") }

func xpubCost(r *http.Request) int {
	if strings.Contains(r.URL.Path, "/xpub/") {
		return 22
	}
	if r.URL.Query().Get("details") == "txs" {
		return 11
	}
	return 1
}

func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestRESTLimiterRate(t *testing.T) {
	now := time.Unix(1000, 0)
	l := NewLimiter(LimitConfig{Rate: 60, Window: time.Minute, Burst: 3, Metrics: prometheus.NewRegistry(), Exempt: staticExempt, Cost: xpubCost}, NewOverLimits(time.Hour))
	l.now = func() time.Time { return now }
	l.over.now = l.now
	h := l.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	for i := 0; i < 3; i++ {
		if c := serve(h, limitedReq("GET", "/api/v2/", "203.0.113.9")).Code; c != 200 {
			t.Fatalf("request %d within the burst: %d", i, c)
		}
	}
	w := serve(h, limitedReq("GET", "/api/v2/", "203.0.113.9"))
	var body struct{ Error string }
	if w.Code != http.StatusTooManyRequests || json.Unmarshal(w.Body.Bytes(), &body) != nil || !strings.Contains(body.Error, "Too many requests") || w.Header().Get("Retry-After") == "" {
		t.Fatalf("past the burst: %d %q", w.Code, w.Body.String())
	}
	// Another client, the operator's own tools, preflights and static
	// files are not limited.
	for _, r := range []*http.Request{
		limitedReq("GET", "/api/v2/", "203.0.113.10"), limitedReq("GET", "/api/v2/", ""),
		limitedReq("OPTIONS", "/api/v2/", "203.0.113.9"), limitedReq("GET", "/static/css/main.css", "203.0.113.9"),
	} {
		if c := serve(h, r).Code; c != 200 {
			t.Errorf("%s %s from %q: %d", r.Method, r.URL, r.Header.Get("X-Real-Ip"), c)
		}
	}
	// A public peer names itself; its own X-Real-Ip is not believed.
	r := limitedReq("GET", "/api/v2/", "203.0.113.11")
	r.RemoteAddr = "203.0.113.9:4000"
	if c := serve(h, r).Code; c != http.StatusTooManyRequests {
		t.Errorf("forged X-Real-Ip escaped the limit: %d", c)
	}
	now = now.Add(time.Second) // one token back
	if c := serve(h, limitedReq("GET", "/api/v2/", "203.0.113.9")).Code; c != 200 {
		t.Fatalf("after refill: %d", c)
	}
	// A heavy request costs more than one token.
	now = now.Add(2 * time.Second)
	if c := serve(h, limitedReq("GET", "/api/v2/address/x?details=txs&pageSize=1000", "203.0.113.9")).Code; c != http.StatusTooManyRequests {
		t.Fatalf("heavy request with 2 tokens: %d", c)
	}
	if c := serve(h, limitedReq("GET", "/api/v2/", "203.0.113.9")).Code; c != 200 {
		t.Fatalf("light request with 2 tokens: %d", c)
	}
	var m dto.Metric
	_ = l.rejected.WithLabelValues("rate").Write(&m)
	if n := m.GetCounter().GetValue(); n != 3 {
		t.Errorf("rate rejections counted: %v, want 3", n)
	}
	rest := l.over.list()
	if len(rest) != 1 || rest[0].IP != "203.0.113.9" {
		t.Fatalf("over-limit list: %+v", rest)
	}
}

func TestRESTLimiterConcurrency(t *testing.T) {
	l := NewLimiter(LimitConfig{MaxConcurrent: 4, Cost: xpubCost}, nil)
	started, release := make(chan struct{}), make(chan struct{})
	h := l.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		started <- struct{}{}
		<-release
	}))
	var wg sync.WaitGroup
	// Two xpub requests with a large gap cost 4 together... one alone is
	// capped at the limit so it can run at all.
	wg.Add(1)
	go func() {
		defer wg.Done()
		serve(h, limitedReq("GET", "/api/v2/xpub/x?gap=10000", "198.51.100.7"))
	}()
	<-started
	if c := serve(h, limitedReq("GET", "/api/v2/", "198.51.100.7")).Code; c != http.StatusTooManyRequests {
		t.Fatalf("beside a request holding every unit: %d", c)
	}
	close(release)
	wg.Wait()
	go func() { <-started }()
	if c := serve(h, limitedReq("GET", "/api/v2/", "198.51.100.7")).Code; c != 200 {
		t.Fatalf("after release: %d", c)
	}
}

func TestRESTLimiterBlock(t *testing.T) {
	now := time.Unix(1000, 0)
	l := NewLimiter(LimitConfig{Rate: 1, Window: time.Hour, Burst: 1, BlockDuration: time.Minute}, nil)
	l.now = func() time.Time { return now }
	h := l.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	serve(h, limitedReq("GET", "/api/v2/", "203.0.113.5"))
	for i := 0; i < blockAfter; i++ {
		serve(h, limitedReq("GET", "/api/v2/", "203.0.113.5"))
		now = now.Add(breachGap)
	}
	if w := serve(h, limitedReq("GET", "/api/v2/", "203.0.113.5")); w.Code != 429 || !strings.Contains(w.Body.String(), "blocked") {
		t.Fatalf("after %d episodes: %d %s", blockAfter, w.Code, w.Body.String())
	}
}

// A request that read the clock before waiting for the limiter's lock
// carries an older time than the last refill; it must not take tokens
// away (the soak's 10,000,000-per-minute client got 429s from it).
func TestRESTLimiterStaleClock(t *testing.T) {
	now := time.Unix(1000, 0)
	l := NewLimiter(LimitConfig{Rate: 600, Window: time.Minute, Burst: 5}, nil)
	l.now = func() time.Time { return now }
	h := l.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	if c := serve(h, limitedReq("GET", "/api/v2/", "203.0.113.9")).Code; c != 200 {
		t.Fatalf("first request: %d", c)
	}
	now = now.Add(-2 * time.Second) // 20 tokens' worth in the past
	for i := 0; i < 4; i++ {
		if c := serve(h, limitedReq("GET", "/api/v2/", "203.0.113.9")).Code; c != 200 {
			t.Fatalf("request %d with a stale clock and %d tokens left: %d", i+2, 4-i, c)
		}
	}
	if c := serve(h, limitedReq("GET", "/api/v2/", "203.0.113.9")).Code; c != http.StatusTooManyRequests {
		t.Fatalf("past the burst: %d", c)
	}
	now = now.Add(2*time.Second + 100*time.Millisecond) // back to the refill time, then one token
	if c := serve(h, limitedReq("GET", "/api/v2/", "203.0.113.9")).Code; c != 200 {
		t.Fatalf("after refill: %d", c)
	}
}
