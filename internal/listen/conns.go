package listen

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// MaxRefusing bounds the refusals written at once: a refusal is written
// off the Accept loop (a peer that does not read must not stall it), and
// past this many in progress an excess connection is closed without one,
// so that a flood of connections is not a flood of goroutines.
const MaxRefusing = 64

// refuseTimeout bounds the time one refusal may take to be written.
const refuseTimeout = 5 * time.Second

// Caps bound a listener's open connections: in total and from one client
// (the TCP peer; IPv6 per /64). 0 is unlimited. At the TCP level only the
// peer is known, so connections through a proxy count against the proxy;
// the per-client cost budget (Limiter) then names the client behind it.
type Caps struct {
	MaxConns          int
	MaxConnsPerClient int
	// Refuse, when set, writes a refusal in the protocol's words on an
	// excess connection before it is closed (HTTP: a 503 line).
	Refuse func(c net.Conn, perClient bool)
	// Refused, when set, counts the refusals (for metrics).
	Refused func(perClient bool)
	// LimitLocal counts loopback and private peers per client too
	// (ClientIPConfig.LimitLocal).
	LimitLocal bool
}

// CappedListener enforces Caps on Accept: an excess connection is answered
// (Refuse) and closed at once, never queued.
type CappedListener struct {
	net.Listener
	caps     Caps
	open     atomic.Int64
	perIP    *IPLimiter
	refusing chan struct{} // a place per refusal being written
}

// Cap wraps ln with the caps.
func Cap(ln net.Listener, caps Caps) *CappedListener {
	return &CappedListener{Listener: ln, caps: caps, perIP: NewIPLimiter(caps.MaxConnsPerClient), refusing: make(chan struct{}, MaxRefusing)}
}

// Open is the number of connections open now.
func (l *CappedListener) Open() int { return int(l.open.Load()) }

// Accept returns the next connection within the caps.
func (l *CappedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		// Loopback and private peers are proxies (or the operator's own
		// tools), exempt as everywhere: "" is never counted per client.
		key := ""
		if a, ok := parseHost(c.RemoteAddr().String()); ok && (l.caps.LimitLocal || !a.IsLoopback() && !a.IsPrivate()) {
			key = IPKey(a.String())
		}
		if l.caps.MaxConns > 0 && l.open.Load() >= int64(l.caps.MaxConns) {
			l.refuse(c, false)
			continue
		}
		if !l.perIP.Acquire(key) {
			l.refuse(c, true)
			continue
		}
		l.open.Add(1)
		return &cappedConn{Conn: c, release: func() { l.open.Add(-1); l.perIP.Release(key) }}, nil
	}
}

func (l *CappedListener) refuse(c net.Conn, perClient bool) {
	if l.caps.Refused != nil {
		l.caps.Refused(perClient)
	}
	if l.caps.Refuse == nil {
		_ = c.Close()
		return
	}
	select {
	case l.refusing <- struct{}{}:
	default:
		_ = c.Close() // MaxRefusing already in progress
		return
	}
	// The refusal must not hold Accept: a client that does not read
	// would stall every other one. The deadline bounds its goroutine
	// (Refuse may set a shorter one).
	_ = c.SetWriteDeadline(time.Now().Add(refuseTimeout))
	go func() {
		defer func() { <-l.refusing }()
		l.caps.Refuse(c, perClient)
		_ = c.Close()
	}()
}

// cappedConn gives its place back once, when closed.
type cappedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *cappedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// NetConn is the connection under a TLS one: crypto/tls needs it for
// handshake deadlines only through the net.Conn interface, so nothing is
// lost by wrapping.
func (c *cappedConn) NetConn() net.Conn { return c.Conn }
