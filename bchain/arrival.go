package bchain

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ArrivalConns dials connections and tells how long the peer has owed an
// answer to what this process sent since a given time. The liveness probe
// dials through it: when its time runs out before this process wrote its
// request, or with the node's answer waiting unread in the kernel, this
// process was too starved to do its part, which is not the node's fault.
type ArrivalConns struct {
	dialer net.Dialer
	used   atomic.Bool // a dial was made: the caller's connections come from here
	mu     sync.Mutex
	conns  map[*arrivalConn]struct{}
	dials  map[*time.Time]struct{} // the start of each dial in progress
}

// NewArrivalConns returns a dialer that tracks its open connections.
func NewArrivalConns() *ArrivalConns {
	return &ArrivalConns{conns: map[*arrivalConn]struct{}{}, dials: map[*time.Time]struct{}{}}
}

// DialContext dials as net.Dialer does and tracks the connection until it
// is closed; it fits http.Transport.DialContext.
func (a *ArrivalConns) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	a.used.Store(true)
	start := time.Now()
	a.mu.Lock()
	a.dials[&start] = struct{}{}
	a.mu.Unlock()
	c, err := a.dialer.DialContext(ctx, network, addr)
	a.mu.Lock()
	delete(a.dials, &start)
	a.mu.Unlock()
	if err != nil {
		return nil, err
	}
	ac := &arrivalConn{Conn: c, owner: a}
	a.mu.Lock()
	a.conns[ac] = struct{}{}
	a.mu.Unlock()
	return ac, nil
}

// Owed is how long the peer has owed an answer at now, for what was sent
// since since: the time since the last write after since, or since the
// start of a dial still in progress; zero when this process wrote nothing
// since then (its own delay) or when bytes from the peer wait unread (the
// answer came). Reads do not end the debt: a TLS ticket or an HTTP/2
// window update is not the answer, and a call that got its answer is not
// waiting. ok is false until a dial went through here (the caller's
// connections come from elsewhere, e.g. IPC).
func (a *ArrivalConns) Owed(since, now time.Time) (owed time.Duration, ok bool) {
	if !a.used.Load() {
		return 0, false
	}
	a.mu.Lock()
	conns := make([]*arrivalConn, 0, len(a.conns))
	for c := range a.conns {
		conns = append(conns, c)
	}
	for start := range a.dials {
		owed = max(owed, now.Sub(*start))
	}
	a.mu.Unlock()
	var last int64
	for _, c := range conns {
		if c.unread() > 0 {
			return 0, true
		}
		last = max(last, c.wrote.Load())
	}
	if last >= since.UnixNano() {
		owed = max(owed, now.Sub(time.Unix(0, last)))
	}
	return owed, true
}

type arrivalConn struct {
	net.Conn
	owner *ArrivalConns
	once  sync.Once
	wrote atomic.Int64 // unix nanoseconds of the last write
}

func (c *arrivalConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if n > 0 {
		c.wrote.Store(time.Now().UnixNano())
	}
	return n, err
}

// unread is the bytes waiting in the kernel (0 when it cannot be known).
func (c *arrivalConn) unread() int {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return 0
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0
	}
	return unreadBytes(raw)
}

func (c *arrivalConn) Close() error {
	c.once.Do(func() {
		c.owner.mu.Lock()
		delete(c.owner.conns, c)
		c.owner.mu.Unlock()
	})
	return c.Conn.Close()
}
