package fiat

import (
	"context"
	"sync"
	"time"
)

// throttleGate is the rate provider's throttle window, shared by every
// request as Blockbook shares it: a 429 on one request holds all of them
// until the window passes, instead of each firing into a certain 429 and
// being refused on its own. While the window is open, the current rates
// (and the fine series) go first: a history request waits while one of
// them is in flight.
type throttleGate struct {
	mu    sync.Mutex
	until time.Time // the window's end; zero or past: open
	high  int       // requests of the current rates in flight
}

// lowPriorityPoll is how often a history request looks again while the
// window is open and current-rate requests wait for it (Blockbook's 1 s).
const lowPriorityPoll = time.Second

type lowPriorityKey struct{}

// lowPriority marks ctx's requests as the history's.
func lowPriority(ctx context.Context) context.Context {
	return context.WithValue(ctx, lowPriorityKey{}, true)
}

func isLowPriority(ctx context.Context) bool {
	low, _ := ctx.Value(lowPriorityKey{}).(bool)
	return low
}

// enter counts a high-priority request in flight; the returned func ends it.
func (g *throttleGate) enter() func() {
	g.mu.Lock()
	g.high++
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		g.high--
		g.mu.Unlock()
	}
}

// extend opens the window until t, or keeps a later end; it returns the
// window's end.
func (g *throttleGate) extend(t time.Time) time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t.After(g.until) {
		g.until = t
	}
	return g.until
}

// end is the window's end (zero: never opened).
func (g *throttleGate) end() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.until
}

func (g *throttleGate) state() (until time.Time, highWaiting bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.until, g.high > 0
}

// wait holds a request while the window is open. waited is the end the
// caller has already slept to (zero: none), so a window is never waited
// twice; it is waited again only if another 429 extended it meanwhile.
// It returns the window's end it saw passed (or already waited), which
// the caller passes as waited next time: reading the gate again after the
// check could see a later end from another request's 429 and so skip
// that window on the retry.
func (c *client) wait(ctx context.Context, waited time.Time) (time.Time, error) {
	low := isLowPriority(ctx)
	for {
		until, highWaiting := c.gate.state()
		now := c.now()
		if !until.After(waited) || !until.After(now) {
			return until, ctx.Err()
		}
		if low && highWaiting {
			if err := c.sleep(ctx, lowPriorityPoll); err != nil {
				return waited, err
			}
			continue
		}
		if err := c.sleep(ctx, until.Sub(now)); err != nil {
			return waited, err
		}
		waited = until
	}
}
