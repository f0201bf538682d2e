package electrum

import (
	"context"
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
