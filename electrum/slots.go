package electrum

import (
	"context"
	"net/netip"
	"sync"
)

// clientSlots bounds the calls one client address has in progress over
// all its connections (MaxCallsPerIP). A call past it waits for a place,
// until its deadline (then "server busy"): a client's many connections
// cannot take the server's work from the others, and a wallet, whose
// connection runs one call at a time, never notices.
//
// Each address has a channel of MaxCallsPerIP places: a call takes one by
// sending and gives it back by receiving, so a place given back wakes one
// waiter, not every waiter of that address (a client with 1,000 waiting
// connections must not turn each finished call into 1,000 wakeups).
type clientSlots struct {
	limit int
	mu    sync.Mutex
	by    map[string]*slotEntry
}

type slotEntry struct {
	places chan struct{}
	users  int // calls holding or waiting for a place
	// gather is held by the one call of several places gathering them:
	// two such calls each holding part of what they need would wait on
	// each other until their deadlines.
	gather chan struct{}
}

func newClientSlots(limit int) *clientSlots {
	return &clientSlots{limit: limit, by: map[string]*slotEntry{}}
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

// acquire takes n places for ip ("": an exempt client), waiting until
// ctx ends; release gives them back. n is a call's weight known before it
// runs, such as 2016 headers: at least 1, at most the limit, so that it
// can run alone.
func (s *clientSlots) acquire(ctx context.Context, ip string, n int) (release func(), ok bool) {
	if ip == "" {
		return func() {}, true
	}
	n = min(max(n, 1), s.limit)
	s.mu.Lock()
	e := s.by[ip]
	if e == nil {
		e = &slotEntry{places: make(chan struct{}, s.limit), gather: make(chan struct{}, 1)}
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
	if n > 1 {
		return e.gatherN(ctx, n, leave)
	}
	release = func() { <-e.places; leave() }
	select {
	case e.places <- struct{}{}:
		return release, true
	default:
	}
	select {
	case e.places <- struct{}{}:
		return release, true
	case <-ctx.Done():
		leave()
		return nil, false
	}
}

// gatherN takes n places for one call, one gatherer at a time.
func (e *slotEntry) gatherN(ctx context.Context, n int, leave func()) (release func(), ok bool) {
	giveBack := func(got int) {
		for range got {
			<-e.places
		}
	}
	select {
	case e.gather <- struct{}{}:
	case <-ctx.Done():
		leave()
		return nil, false
	}
	defer func() { <-e.gather }()
	for got := 0; got < n; got++ {
		select {
		case e.places <- struct{}{}:
		case <-ctx.Done():
			giveBack(got)
			leave()
			return nil, false
		}
	}
	return func() { giveBack(n); leave() }, true
}

// waiting is how many calls of ip hold or wait for a place (tests).
func (s *clientSlots) waiting(ip string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.by[ip]; e != nil {
		return e.users
	}
	return 0
}
