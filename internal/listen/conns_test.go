package listen

import (
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeConn is a connection from a given peer.
type fakeConn struct {
	net.Conn
	peer   net.Addr
	closed atomic.Bool
}

func (c *fakeConn) RemoteAddr() net.Addr             { return c.peer }
func (c *fakeConn) Close() error                     { c.closed.Store(true); return nil }
func (c *fakeConn) SetWriteDeadline(time.Time) error { return nil }

// fakeListener hands out queued connections.
type fakeListener struct {
	net.Listener
	q []*fakeConn
}

func (l *fakeListener) Accept() (net.Conn, error) {
	if len(l.q) == 0 {
		return nil, net.ErrClosed
	}
	c := l.q[0]
	l.q = l.q[1:]
	return c, nil
}

func peer(s string) net.Addr { a, _ := net.ResolveTCPAddr("tcp", s); return a }

func TestCapPerClientAndTotal(t *testing.T) {
	var refused []bool
	fl := &fakeListener{}
	for _, p := range []string{"203.0.113.1:1", "203.0.113.1:2", "203.0.113.1:3", "[2001:db8::1]:1", "[2001:db8::2]:1", "127.0.0.1:1", "127.0.0.1:2", "198.51.100.1:1"} {
		fl.q = append(fl.q, &fakeConn{peer: peer(p)})
	}
	all := append([]*fakeConn(nil), fl.q...)
	l := Cap(fl, Caps{MaxConns: 5, MaxConnsPerClient: 2, Refused: func(per bool) { refused = append(refused, per) }})
	var got []net.Conn
	for {
		c, err := l.Accept()
		if err != nil {
			break
		}
		got = append(got, c)
	}
	// 203.0.113.1 gets 2 (the third refused per client), the IPv6 /64 2
	// (one client), loopback is exempt per client, then the total of 5
	// refuses the last two.
	if len(got) != 5 || l.Open() != 5 {
		t.Fatalf("accepted %d (open %d), want 5", len(got), l.Open())
	}
	if want := []bool{true, false, false}; len(refused) != 3 || refused[0] != want[0] || refused[1] || refused[2] {
		t.Fatalf("refusals (per client?) %v, want %v", refused, want)
	}
	if !all[2].closed.Load() || !all[7].closed.Load() {
		t.Fatal("a refused connection was not closed")
	}
	_ = got[0].Close()
	_ = got[0].Close() // twice gives back one place
	if l.Open() != 4 {
		t.Fatalf("open after a close: %d", l.Open())
	}
}

func TestBound(t *testing.T) {
	if got := Bound(strings.Repeat("é", 100), 11); got != strings.Repeat("é", 5)+"…" {
		t.Fatalf("Bound cut a rune: %q", got)
	}
	if Bound("short", 10) != "short" {
		t.Fatal("a short text was changed")
	}
}

// A flood of excess connections to peers that do not read holds at most
// MaxRefusing refusals (goroutines) at once; the rest are closed at
// Accept without one, and Accept is never held (it started a goroutine
// per refused connection).
func TestRefusalsBounded(t *testing.T) {
	const excess = 5 * MaxRefusing
	fl := &fakeListener{}
	for range excess + 1 {
		fl.q = append(fl.q, &fakeConn{peer: peer("203.0.113.9:1")})
	}
	all := append([]*fakeConn(nil), fl.q...)
	var inProgress, most, calls atomic.Int64
	unblock := make(chan struct{})
	l := Cap(fl, Caps{MaxConns: 1, Refuse: func(net.Conn, bool) {
		calls.Add(1)
		n := inProgress.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		<-unblock // a peer that never reads
		inProgress.Add(-1)
	}})
	if _, err := l.Accept(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Accept(); err == nil { // refuses every excess one, then the queue is empty
		t.Fatal("an excess connection was accepted")
	}
	closedAtOnce := 0
	for _, c := range all[1:] {
		if c.closed.Load() {
			closedAtOnce++
		}
	}
	if closedAtOnce != excess-MaxRefusing {
		t.Errorf("%d of %d excess connections closed at Accept, want %d", closedAtOnce, excess, excess-MaxRefusing)
	}
	close(unblock)
	deadline := time.Now().Add(10 * time.Second)
	for inProgress.Load() != 0 || calls.Load() != MaxRefusing {
		if time.Now().After(deadline) {
			t.Fatalf("refusals: %d in progress, %d written, want 0 and %d", inProgress.Load(), calls.Load(), MaxRefusing)
		}
		time.Sleep(time.Millisecond)
	}
	if most.Load() > MaxRefusing {
		t.Errorf("%d refusals at once, want at most %d", most.Load(), MaxRefusing)
	}
	for i, c := range all[1:] {
		for !c.closed.Load() && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if !c.closed.Load() {
			t.Fatalf("excess connection %d never closed", i)
		}
	}
}
