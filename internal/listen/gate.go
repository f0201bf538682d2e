package listen

import (
	"context"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Gate is the process's admission control: it bounds the expensive work
// in progress over every front (the public port's and Esplora's heavy
// requests, Electrum's calls that read the index or the node). A request
// past the bound waits at most Wait for a place, then is refused at once
// with "server busy" and a time to retry: once the process is far behind
// it sheds work rather than queuing it, so the answers it does give stay
// fast. Cheap requests (status, tip, ping, /health) never pass the gate,
// so they are never queued behind expensive ones.
//
// The per-client limits (Limiter) come first: a client over its own
// budget is refused without taking a place. The gate is what holds when
// many clients, each within its budget, together ask more than the
// process can do.
type Gate struct {
	slots chan struct{}
	wait  time.Duration
	shed  *prometheus.CounterVec // by front; nil without a registerer
}

// DefaultGateWait is how long an expensive request may wait for a place.
const DefaultGateWait = 250 * time.Millisecond

// DefaultGateSlots is the default bound: eight expensive requests per
// core (their time is part CPU, part index and node reads), and at least
// 32, so that an operator's burst of large xpubs through a local proxy
// (30 at once in TestE2EXpubLimits) still all wait their turn in the
// derivation queue rather than being shed.
func DefaultGateSlots() int { return max(32, 8*runtime.GOMAXPROCS(0)) }

// NewGate allows slots expensive requests at once, each waiting at most
// wait for a place; slots < 0 turns the gate off (nil, which admits
// everything), 0 takes DefaultGateSlots.
func NewGate(slots int, wait time.Duration, reg prometheus.Registerer) *Gate {
	if slots < 0 {
		return nil
	}
	if slots == 0 {
		slots = DefaultGateSlots()
	}
	if wait <= 0 {
		wait = DefaultGateWait
	}
	g := &Gate{slots: make(chan struct{}, slots), wait: wait}
	if reg != nil {
		g.shed = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blockbook_gate_shed_total", Help: "expensive requests refused (server busy) because the process-wide bound on expensive work in progress was reached, by front",
		}, []string{"front"})
		reg.MustRegister(g.shed)
	}
	return g
}

// Slots is the bound (0 for a nil gate).
func (g *Gate) Slots() int {
	if g == nil {
		return 0
	}
	return cap(g.slots)
}

// InProgress is the expensive work in progress now.
func (g *Gate) InProgress() int {
	if g == nil {
		return 0
	}
	return len(g.slots)
}

// Enter takes a place for front's request, waiting at most the gate's
// wait (or until ctx ends); ok false means refused: answer "server busy".
func (g *Gate) Enter(ctx context.Context, front string) (release func(), ok bool) {
	if g == nil {
		return func() {}, true
	}
	select {
	case g.slots <- struct{}{}:
		return g.leave, true
	default:
	}
	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case g.slots <- struct{}{}:
		return g.leave, true
	case <-t.C:
	case <-ctx.Done():
	}
	if g.shed != nil {
		g.shed.WithLabelValues(front).Inc()
	}
	return nil, false
}

func (g *Gate) leave() { <-g.slots }

// GateRetryAfter is the Retry-After of a refusal, in seconds: places free
// within a request's time, so a second is enough.
const GateRetryAfter = 1

// Wrap passes front's requests that heavy names through the gate; a
// refused one gets 503 with Retry-After and a JSON error.
func (g *Gate) Wrap(front string, h http.Handler, heavy func(*http.Request) bool) http.Handler {
	if g == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions || !heavy(r) {
			h.ServeHTTP(w, r)
			return
		}
		release, ok := g.Enter(r.Context(), front)
		if !ok {
			w.Header().Set("Retry-After", strconv.Itoa(GateRetryAfter))
			WriteJSONError(w, http.StatusServiceUnavailable, "Server busy: too many expensive requests in progress, retry in a second")
			return
		}
		// The place is given back once the answer starts: writing it to a
		// client that reads slowly (or never) is not the process's work,
		// and must not hold a place every front shares.
		rw := &releasingWriter{ResponseWriter: w, release: sync.OnceFunc(release)}
		defer rw.release()
		h.ServeHTTP(rw, r)
	})
}

// releasingWriter gives the gate's place back at the answer's first
// header or byte.
type releasingWriter struct {
	http.ResponseWriter
	release func()
}

func (w *releasingWriter) WriteHeader(code int) {
	w.release()
	w.ResponseWriter.WriteHeader(code)
}

func (w *releasingWriter) Write(b []byte) (int, error) {
	w.release()
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (deadlines,
// flushes).
func (w *releasingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
