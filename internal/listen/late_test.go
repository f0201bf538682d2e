package listen

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// While the process is late, a client past its share (the sustained rate)
// is refused even with its burst left, and the refusal is held; a quiet
// client is served meanwhile, the greedy one again once its recent rate
// has decayed under its share, and everyone within the burst once the
// process is on time.
func TestLimiterShareWhileLate(t *testing.T) {
	now := time.Unix(1000, 0)
	var late atomic.Bool
	l := NewLimiter(LimitConfig{Rate: 60, Window: time.Minute, Burst: 100, Late: late.Load}, NewOverLimits(time.Hour))
	l.now = func() time.Time { return now }
	l.over.now = l.now
	h := l.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	gone, cancel := context.WithCancel(context.Background())
	cancel() // the refusal's hold ends at once for these requests
	req := func(client string) *http.Request {
		return limitedReq("GET", "/api/v2/", client).WithContext(gone)
	}
	const greedy, quiet = "203.0.113.1", "203.0.113.2"
	for i := range 20 {
		if c := serve(h, req(greedy)).Code; c != 200 {
			t.Fatalf("request %d within the burst, on time: %d", i, c)
		}
	}
	late.Store(true)
	w := serve(h, req(greedy))
	var body struct{ Error string }
	if w.Code != http.StatusTooManyRequests || json.Unmarshal(w.Body.Bytes(), &body) != nil ||
		!strings.Contains(body.Error, "past its share") || w.Header().Get("Retry-After") != "1" {
		t.Fatalf("a client past its share while late: %d %q %q", w.Code, w.Header().Get("Retry-After"), w.Body.String())
	}
	if c := serve(h, req(quiet)).Code; c != 200 {
		t.Errorf("a quiet client while late: %d", c)
	}
	if over := l.over.list(); len(over) != 1 || over[0].IP != greedy || over[0].Limit != "share" {
		t.Errorf("listed over the limits: %+v", over)
	}
	now = now.Add(20 * time.Second) // 20 requests decayed by e^-4: 0.07 a second
	if c := serve(h, req(greedy)).Code; c != 200 {
		t.Errorf("the greedy client back under its share: %d", c)
	}
	for range 10 {
		serve(h, req(greedy))
	}
	late.Store(false)
	if c := serve(h, req(greedy)).Code; c != 200 {
		t.Errorf("on time again, within the burst: %d", c)
	}

	// A refusal whose client waits is held LateHold.
	late.Store(true)
	start := time.Now()
	if c := serve(h, limitedReq("GET", "/api/v2/", greedy)).Code; c != http.StatusTooManyRequests {
		t.Fatalf("held refusal: %d", c)
	}
	if took := time.Since(start); took < LateHold-50*time.Millisecond {
		t.Errorf("a refusal while late was written after %v, want it held %v", took, LateHold)
	}
}

// Spend (Electrum's calls) says a refusal for the share apart from the
// rate limit's.
func TestSpendShareWhileLate(t *testing.T) {
	late := func() bool { return true }
	l := NewLimiter(LimitConfig{Rate: 60, Window: time.Minute, Burst: 100, Late: late}, nil)
	first := l.Spend("203.0.113.3", 1)
	if first.Msg != "" {
		t.Fatalf("a first call: %+v", first)
	}
	if ref := l.Spend("203.0.113.3", 1); ref.Msg != "" { // 1 call in 5 s: 0.2 a second
		t.Fatalf("a second call: %+v", ref)
	}
	var ref Refusal
	for range 10 {
		if ref = l.Spend("203.0.113.3", 1); ref.Msg != "" {
			break
		}
	}
	if !ref.Share || !ref.Hold || ref.Retry != 1 {
		t.Errorf("past its share of 1 a second: %+v", ref)
	}
	// Out of tokens while late: the rate limit's refusal, held too.
	l = NewLimiter(LimitConfig{Rate: 60, Window: time.Minute, Burst: 2, Late: late}, nil)
	l.Spend("203.0.113.4", 1)
	l.Spend("203.0.113.4", 1)
	if ref := l.Spend("203.0.113.4", 1); ref.Share || !ref.Hold || !strings.Contains(ref.Msg, "Too many requests") {
		t.Errorf("past the burst while late: %+v", ref)
	}
	// On time (or off), a refusal is not held.
	l = NewLimiter(LimitConfig{Rate: 60, Window: time.Minute, Burst: 1, Late: func() bool { return false }}, nil)
	l.Spend("203.0.113.5", 1)
	if ref := l.Spend("203.0.113.5", 1); ref.Msg == "" || ref.Hold || ref.Share {
		t.Errorf("past the burst on time: %+v", ref)
	}
}

// The 90th percentile of what a histogram counted since a sample, at its
// bucket's lower bound.
func TestQuantileSince(t *testing.T) {
	h := &metrics.Float64Histogram{Buckets: []float64{math.Inf(-1), 0, 0.001, 0.01, 0.1, math.Inf(1)}, Counts: []uint64{0, 60, 40, 25, 5}}
	prev := []uint64{0, 10, 10, 10, 0}
	// since prev: 50, 30, 15, 5: the 90th of 100 is in [0.01, 0.1).
	if got := quantileSince(h, prev, 0.9); got != 10*time.Millisecond {
		t.Errorf("p90: %v", got)
	}
	if got := quantileSince(h, prev, 0.5); got != 0 {
		t.Errorf("p50: %v", got)
	}
	if got := quantileSince(h, nil, 0.9); got != 0 {
		t.Errorf("no earlier sample: %v", got)
	}
	if got := quantileSince(h, h.Counts, 0.9); got != 0 {
		t.Errorf("nothing since: %v", got)
	}
}

// More busy goroutines than cores make the process late; 0 is off.
func TestLateAfterSeesBusyScheduler(t *testing.T) {
	if LateAfter(0) != nil {
		t.Error("LateAfter(0) is not off")
	}
	late := LateAfter(5 * time.Millisecond)
	stop := make(chan struct{})
	for range 8 * runtime.GOMAXPROCS(0) {
		go func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				for i := 0; i < 1e5; i++ {
					_ = math.Sqrt(float64(i))
				}
			}
		}()
	}
	defer close(stop)
	deadline := time.Now().Add(5 * time.Second)
	for !late() {
		if time.Now().After(deadline) {
			t.Fatalf("with %d goroutines spinning on %d cores, never late (lag %v)", 8*runtime.GOMAXPROCS(0), runtime.GOMAXPROCS(0), SchedLag())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("late: run-queue wait %v", SchedLag())
}

// A refusal for the client's share while the process is late never
// counts towards a block: a client within its budget is not blocked for
// minutes by a flood it is not part of.
func TestShareRefusalsNeverBlock(t *testing.T) {
	now := time.Unix(1000, 0)
	var late atomic.Bool
	l := NewLimiter(LimitConfig{Rate: 60, Window: time.Minute, Burst: 100, BlockDuration: 10 * time.Minute, Late: late.Load}, NewOverLimits(time.Hour))
	l.now = func() time.Time { return now }
	l.over.now = l.now
	h := l.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	const client = "203.0.113.7"
	req := func() *http.Request { return limitedReq("GET", "/api/v2/", client).WithContext(gone) }
	for episode := range 5 {
		now = now.Add(11 * time.Second) // past the gap between episodes
		late.Store(false)
		for range 10 {
			if c := serve(h, req()).Code; c != 200 {
				t.Fatalf("episode %d: a request within the budget, on time: %d", episode, c)
			}
		}
		late.Store(true)
		if c := serve(h, req()).Code; c != http.StatusTooManyRequests {
			t.Fatalf("episode %d: past its share while late: %d", episode, c)
		}
	}
	late.Store(false)
	if c := serve(h, req()).Code; c != 200 {
		t.Errorf("after five share refusals, on time again: %d (blocked)", c)
	}
}
