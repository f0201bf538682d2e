package listen

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Past its places the gate refuses an expensive request after its short
// wait (503, Retry-After, a JSON error), while cheap requests pass at
// once however many expensive ones hold the places; a place given back
// admits the next one.
func TestGateShedsExpensiveOnly(t *testing.T) {
	g := NewGate(2, 50*time.Millisecond, prometheus.NewRegistry())
	hold, entered := make(chan struct{}), make(chan struct{}, 2)
	h := g.Wrap("test", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/heavy" {
			entered <- struct{}{}
			<-hold
		}
		w.WriteHeader(http.StatusOK)
	}), func(r *http.Request) bool { return r.URL.Path == "/heavy" })
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); serve(h, httptest.NewRequest("GET", "/heavy", nil)) }()
	}
	<-entered
	<-entered
	start := time.Now()
	w := serve(h, httptest.NewRequest("GET", "/heavy", nil))
	if took := time.Since(start); w.Code != http.StatusServiceUnavailable || took > 2*time.Second {
		t.Fatalf("third expensive request: %d after %v, want 503 after about 50 ms", w.Code, took)
	}
	var body struct{ Error string }
	if w.Header().Get("Retry-After") != "1" || json.Unmarshal(w.Body.Bytes(), &body) != nil || body.Error == "" ||
		w.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("refusal: headers %v body %q", w.Header(), w.Body.String())
	}
	if c := serve(h, httptest.NewRequest("GET", "/cheap", nil)).Code; c != 200 {
		t.Fatalf("a cheap request with the gate full: %d", c)
	}
	if g.InProgress() != 2 {
		t.Fatalf("in progress %d, want 2", g.InProgress())
	}
	close(hold)
	wg.Wait()
	hold = make(chan struct{})
	close(hold)
	if c := serve(h, httptest.NewRequest("GET", "/heavy", nil)).Code; c != 200 {
		t.Fatalf("an expensive request once places are free: %d", c)
	}
	if c := serve(NewGate(-1, 0, nil).Wrap("off", h, func(*http.Request) bool { return true }), httptest.NewRequest("GET", "/heavy", nil)).Code; c != 200 {
		t.Fatalf("a gate turned off must still serve: %d", c)
	}
}

// A waiter gets the place given back within its wait.
func TestGateWaitAdmits(t *testing.T) {
	g := NewGate(1, 5*time.Second, nil)
	leave, ok := g.Enter(t.Context(), "t")
	if !ok {
		t.Fatal("first Enter refused")
	}
	time.AfterFunc(20*time.Millisecond, leave)
	if _, ok := g.Enter(t.Context(), "t"); !ok {
		t.Fatal("a waiter was refused although a place freed within its wait")
	}
	if d := DefaultGateSlots(); d < 32 {
		t.Fatalf("default slots %d", d)
	}
}

// With LimitLocal a loopback peer naming no client is limited as itself,
// and each loopback address is a client of its own (the abuse campaign's
// attackers); without it, it is exempt.
func TestLimitLocal(t *testing.T) {
	for _, limitLocal := range []bool{false, true} {
		l := NewLimiter(LimitConfig{Rate: 60, Window: time.Minute, Burst: 2, ClientIP: ClientIPConfig{LimitLocal: limitLocal}}, nil)
		h := l.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
		from := func(peer string) int {
			r := httptest.NewRequest("GET", "/api", nil)
			r.RemoteAddr = peer + ":5000"
			return serve(h, r).Code
		}
		refused := 0
		for range 5 {
			if from("127.1.1.1") == http.StatusTooManyRequests {
				refused++
			}
		}
		if want := map[bool]int{false: 0, true: 3}[limitLocal]; refused != want {
			t.Fatalf("LimitLocal %v: %d of 5 refused, want %d", limitLocal, refused, want)
		}
		if c := from("127.1.1.2"); c != 200 {
			t.Fatalf("LimitLocal %v: another loopback address refused (%d)", limitLocal, c)
		}
	}
}

// With Caps.LimitLocal each loopback address is counted per client at
// accept, as a remote one is.
func TestCapLimitLocal(t *testing.T) {
	fl := &fakeListener{}
	for _, p := range []string{"127.1.1.1:1", "127.1.1.1:2", "127.1.1.2:1"} {
		fl.q = append(fl.q, &fakeConn{peer: peer(p)})
	}
	all := append([]*fakeConn(nil), fl.q...)
	l := Cap(fl, Caps{MaxConnsPerClient: 1, LimitLocal: true})
	n := 0
	for {
		if _, err := l.Accept(); err != nil {
			break
		}
		n++
	}
	if n != 2 || !all[1].closed.Load() {
		t.Fatalf("accepted %d of 3 (the second from 127.1.1.1 closed: %v), want 2", n, all[1].closed.Load())
	}
}

// A place is given back when the answer starts: a client that reads its
// answer slowly (or never) holds no place the other fronts share.
func TestGateReleasedWhenAnswerStarts(t *testing.T) {
	g := NewGate(1, 10*time.Millisecond, nil)
	written, hold := make(chan struct{}), make(chan struct{})
	h := g.Wrap("test", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("the first part")) // now the write to the client blocks
		close(written)
		<-hold
	}), func(*http.Request) bool { return true })
	done := make(chan struct{})
	go func() { defer close(done); serve(h, httptest.NewRequest("GET", "/heavy", nil)) }()
	<-written
	if n := g.InProgress(); n != 0 {
		t.Fatalf("%d places held while the answer is written, want 0", n)
	}
	if c := serve(g.Wrap("test", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) }),
		func(*http.Request) bool { return true }), httptest.NewRequest("GET", "/heavy", nil)).Code; c != 200 {
		t.Fatalf("an expensive request while another's answer is written: %d", c)
	}
	close(hold)
	<-done
	if n := g.InProgress(); n != 0 {
		t.Fatalf("%d places held after the answer, want 0", n)
	}
}
