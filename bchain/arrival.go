package bchain

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// ArrivalConns dials connections and can tell how long the peer has owed
// an answer: since a request reached the kernel, with no answer read and
// none waiting unread. The liveness probe dials through it: when its time
// runs out with the request not yet sent, or the node's answer already
// waiting, this process was too starved to do its part, which is not the
// node's fault.
type ArrivalConns struct {
	dialer net.Dialer
	mu     sync.Mutex
	conns  map[*arrivalConn]struct{}
}

// NewArrivalConns returns a dialer that tracks its open connections.
func NewArrivalConns() *ArrivalConns {
	return &ArrivalConns{conns: map[*arrivalConn]struct{}{}}
}

// DialContext dials as net.Dialer does and tracks the connection until it
// is closed; it fits http.Transport.DialContext.
func (a *ArrivalConns) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := a.dialer.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	ac := &arrivalConn{Conn: c, owner: a}
	a.mu.Lock()
	a.conns[ac] = struct{}{}
	a.mu.Unlock()
	return ac, nil
}

// Owed is how long the peer has owed an answer: the longest time since a
// request was handed to the kernel with nothing read back since and no
// bytes waiting unread. Zero when no request is out (one not yet written
// is this process's delay) or an answer has arrived. Where the kernel
// cannot tell unread bytes (non-Linux), an unread answer counts as owed.
func (a *ArrivalConns) Owed(now time.Time) time.Duration {
	a.mu.Lock()
	conns := make([]*arrivalConn, 0, len(a.conns))
	for c := range a.conns {
		conns = append(conns, c)
	}
	a.mu.Unlock()
	var owed time.Duration
	for _, c := range conns {
		w, r := c.wrote.Load(), c.read.Load()
		if w == 0 || r >= w || c.unread() > 0 {
			continue
		}
		owed = max(owed, now.Sub(time.Unix(0, w)))
	}
	return owed
}

// Waiting reports whether any open connection has unread bytes from the
// peer. False where the kernel cannot say (non-Linux, non-socket conns).
func (a *ArrivalConns) Waiting() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for c := range a.conns {
		if c.unread() > 0 {
			return true
		}
	}
	return false
}

type arrivalConn struct {
	net.Conn
	owner       *ArrivalConns
	once        sync.Once
	wrote, read atomic.Int64 // unix nanoseconds of the last write and of the last read that got bytes
}

func (c *arrivalConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if n > 0 {
		c.wrote.Store(time.Now().UnixNano())
	}
	return n, err
}

func (c *arrivalConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.read.Store(time.Now().UnixNano())
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
