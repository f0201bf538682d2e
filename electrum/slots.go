package electrum

import (
	"context"
	"net/netip"
	"sync"

	"github.com/openexplorer/blockbook/internal/bytebudget"
)

// clientSlots bounds the calls one client address has in progress over
// all its connections (MaxCallsPerIP). A call past it waits for a place,
// until its deadline (then "server busy"): a client's many connections
// cannot take the server's work from the others, and a wallet, whose
// connection runs one call at a time, never notices.
type clientSlots struct {
	limit int64
	mu    sync.Mutex
	by    map[string]*slotEntry
}

type slotEntry struct {
	b     *bytebudget.Budget
	users int // calls holding or waiting for a place
}

func newClientSlots(limit int) *clientSlots {
	return &clientSlots{limit: int64(limit), by: map[string]*slotEntry{}}
}

// localKey reports a client key (an address, or an IPv6 /64) of a
// loopback or private peer: a local proxy or the operator's own tools,
// exempt as on every listener (behind a local TCP proxy every wallet
// would share one place count).
func localKey(key string) bool {
	if a, err := netip.ParseAddr(key); err == nil {
		return a.IsLoopback() || a.IsPrivate()
	}
	p, err := netip.ParsePrefix(key)
	return err == nil && (p.Addr().IsPrivate() || p.Addr().IsUnspecified()) // ::1's /64 is ::/64
}

// acquire takes a place for ip ("": an exempt client), waiting until ctx
// ends; release gives it back.
func (s *clientSlots) acquire(ctx context.Context, ip string) (release func(), ok bool) {
	if ip == "" {
		return func() {}, true
	}
	s.mu.Lock()
	e := s.by[ip]
	if e == nil {
		e = &slotEntry{b: bytebudget.New(s.limit)}
		s.by[ip] = e
	}
	e.users++
	s.mu.Unlock()
	leave := func() {
		s.mu.Lock()
		if e.users--; e.users == 0 {
			delete(s.by, ip)
		}
		s.mu.Unlock()
	}
	for {
		freed := e.b.Wait() // before trying: a place given back meanwhile wakes us
		if e.b.TryTake(1, false) {
			return func() { e.b.Give(1); leave() }, true
		}
		select {
		case <-freed:
		case <-ctx.Done():
			leave()
			return nil, false
		}
	}
}
