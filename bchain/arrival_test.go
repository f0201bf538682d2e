package bchain

import (
	"context"
	"io"
	"log/slog"
	"net"
	"runtime"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// nodeDouble accepts connections and, unless frozen, answers each 4-byte
// request with 4 bytes.
func nodeDouble(t *testing.T, frozen bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4)
				for {
					if _, err := io.ReadFull(c, buf); err != nil {
						return
					}
					if !frozen {
						_, _ = c.Write([]byte("pong"))
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func TestArrivalConnsWaiting(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("unread bytes are known on Linux only")
	}
	a := NewArrivalConns()
	c, err := a.DialContext(context.Background(), "tcp", nodeDouble(t, false))
	if err != nil {
		t.Fatal(err)
	}
	if a.Waiting() {
		t.Fatal("waiting before anything was asked")
	}
	_, _ = c.Write([]byte("ping"))
	deadline := time.Now().Add(5 * time.Second)
	for !a.Waiting() {
		if time.Now().After(deadline) {
			t.Fatal("the answer never showed as waiting")
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := io.ReadFull(c, make([]byte, 4)); err != nil {
		t.Fatal(err)
	}
	if a.Waiting() {
		t.Fatal("still waiting after the answer was read")
	}
	_, _ = c.Write([]byte("ping"))
	time.Sleep(50 * time.Millisecond)
	c.Close()
	if a.Waiting() || len(a.conns) != 0 {
		t.Fatalf("a closed connection is still tracked (%d)", len(a.conns))
	}
}

// unreadChain sends the probe's request and never reads the answer, as a
// process too starved to schedule the reading goroutine.
type unreadChain struct {
	BlockChain
	arrivals *ArrivalConns
	addr     string
}

func (c *unreadChain) BestBlock(ctx context.Context) (uint32, Hash, error) {
	conn, err := c.arrivals.DialContext(ctx, "tcp", c.addr)
	if err != nil {
		return 0, Hash{}, err
	}
	defer conn.Close()
	_, _ = conn.Write([]byte("ping"))
	<-ctx.Done()
	return 0, Hash{}, ctx.Err()
}

func (c *unreadChain) AnswerOwed(since, now time.Time) (time.Duration, bool) {
	return c.arrivals.Owed(since, now)
}

// A probe whose answer arrived but was not read is no verdict, so a node
// that answers is never marked down for this process's starvation; a node
// that sends nothing is, as before.
func TestLivenessAnswerWaitingIsNoVerdict(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("unread bytes are known on Linux only")
	}
	for _, frozen := range []bool{false, true} {
		chain := &unreadChain{arrivals: NewArrivalConns(), addr: nodeDouble(t, frozen)}
		l := NewLiveness(chain, LivenessConfig{Interval: time.Millisecond, Timeout: 40 * time.Millisecond, MaxWait: 100 * time.Millisecond, Failures: 2}, slog.New(slog.DiscardHandler))
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		l.Run(ctx)
		cancel()
		down := !l.State().Responding
		if down != frozen {
			t.Fatalf("frozen node %v: marked down %v (%+v)", frozen, down, l.State())
		}
		var m dto.Metric
		_ = l.inconclusive.Write(&m)
		// A frozen node may still get a probe whose request was written
		// late (the race detector's pace): only the answering one must.
		if n := m.GetCounter().GetValue(); !frozen && n == 0 {
			t.Fatalf("an answering node: no inconclusive probe")
		}
	}
}

// A dial still in progress is owed from its start; a read after the
// request (a TLS ticket, an HTTP/2 window update) does not end the debt;
// bytes waiting unread do; nothing written since the probe began is no
// debt; and a dialer never used cannot tell.
func TestArrivalOwedRules(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("unread bytes are known on Linux only")
	}
	a := NewArrivalConns()
	if _, ok := a.Owed(time.Now(), time.Now()); ok {
		t.Fatal("an unused dialer claims to know")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	served := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			served <- c
		}
	}()
	since := time.Now()
	c, err := a.DialContext(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	srv := <-served
	defer srv.Close()
	if owed, ok := a.Owed(since, time.Now()); !ok || owed != 0 {
		t.Fatalf("nothing written yet: owed %v %v", owed, ok)
	}
	_, _ = c.Write([]byte("ping"))
	_, _ = srv.Write([]byte("tick")) // not the answer
	if _, err := io.ReadFull(c, make([]byte, 4)); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(3 * time.Second)
	if owed, _ := a.Owed(since, later); owed < 2*time.Second {
		t.Fatalf("a read after the request ended the debt: owed %v", owed)
	}
	if owed, _ := a.Owed(later.Add(-time.Second), later); owed != 0 {
		t.Fatalf("a write before since counts: owed %v", owed)
	}
	_, _ = srv.Write([]byte("pong"))
	deadline := time.Now().Add(5 * time.Second)
	for !a.Waiting() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if owed, _ := a.Owed(since, later); owed != 0 {
		t.Fatalf("an answer waits unread, yet owed %v", owed)
	}
	if _, err := io.ReadFull(c, make([]byte, 4)); err != nil {
		t.Fatal(err)
	}
	dialing := time.Now().Add(-5 * time.Second)
	a.mu.Lock()
	a.dials[&dialing] = struct{}{}
	a.mu.Unlock()
	if owed, _ := a.Owed(since, time.Now()); owed < 5*time.Second {
		t.Fatalf("a dial in progress for 5 s: owed %v", owed)
	}
}

// Waiting (tests only) reports whether any open connection has unread bytes from the
// peer. False where the kernel cannot say (non-Linux, non-socket conns).
func (a *ArrivalConns) Waiting() bool {
	a.mu.Lock()
	conns := make([]*arrivalConn, 0, len(a.conns))
	for c := range a.conns {
		conns = append(conns, c)
	}
	a.mu.Unlock()
	for _, c := range conns {
		if c.unread() > 0 {
			return true
		}
	}
	return false
}
