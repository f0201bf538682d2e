package wsconn

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/openexplorer/blockbook/internal/bytebudget"
)

// stallConn is a server-side connection to a client that never reads:
// once stalled, every write blocks until the connection is closed or its
// write deadline passes, as on a socket whose buffers are full.
type stallConn struct {
	net.Conn
	mu       sync.Mutex
	stalled  bool
	deadline time.Time
	closed   chan struct{}
	once     sync.Once
}

func (c *stallConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	stalled, dl := c.stalled, c.deadline
	c.mu.Unlock()
	if !stalled {
		return c.Conn.Write(p)
	}
	var timeout <-chan time.Time
	if !dl.IsZero() {
		timeout = time.After(time.Until(dl))
	}
	select {
	case <-c.closed:
		return 0, net.ErrClosed
	case <-timeout:
		return 0, errTimeout{}
	}
}

type errTimeout struct{}

func (errTimeout) Error() string   { return "write timeout" }
func (errTimeout) Timeout() bool   { return true }
func (errTimeout) Temporary() bool { return true }

func (c *stallConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	c.deadline = t
	c.mu.Unlock()
	return c.Conn.SetWriteDeadline(t)
}

func (c *stallConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

type stallListener struct{ net.Listener }

func (l stallListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &stallConn{Conn: c, closed: make(chan struct{})}, nil
}

// stalledServer serves websocket clients whose connections stall right
// after the handshake; conns receives each one.
func stalledServer(t *testing.T, cfg Config) (url string, conns chan *Conn) {
	t.Helper()
	conns = make(chan *Conn, 64)
	up := websocket.Upgrader{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		sc := ws.NetConn().(*stallConn)
		sc.mu.Lock()
		sc.stalled = true
		sc.mu.Unlock()
		c := New(ws, cfg)
		go c.WriteLoop()
		conns <- c
		c.ReadLoop(func(int, []byte) {})
	}))
	srv.Listener = stallListener{srv.Listener}
	srv.Start()
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http"), conns
}

func dial(t *testing.T, url string) {
	t.Helper()
	ws, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.Close() })
}

// waitWriting waits until the writer holds a message it cannot write.
func waitWriting(t *testing.T, c *Conn) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c.mu.Lock()
		taken := len(c.queue) == 0
		c.mu.Unlock()
		if taken {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the writer never took the queue")
		}
		time.Sleep(time.Millisecond)
	}
}

// A client that does not read holds at most MaxQueueBytes, the message
// being written included: the writer's batch counts until written.
func TestQueueCountsInFlight(t *testing.T) {
	const limit, size = 100 << 10, 10 << 10
	overflows := 0
	url, conns := stalledServer(t, Config{MaxQueueBytes: limit, MaxMessageBytes: 1 << 10,
		PingInterval: time.Minute, WriteTimeout: 30 * time.Second, OnOverflow: func() { overflows++ }})
	dial(t, url)
	c := <-conns
	msg := make([]byte, size)
	if !c.Send(msg) {
		t.Fatal("the first message was refused")
	}
	waitWriting(t, c) // the writer now blocks on it
	accepted := size
	for c.Send(msg) {
		accepted += size
		if accepted > 4*limit {
			break
		}
	}
	if accepted > limit {
		t.Fatalf("a client that reads nothing was given %d bytes (MaxQueueBytes %d)", accepted, limit)
	}
	if overflows != 1 || !strings.Contains(c.Reason(), "send queue overflow") {
		t.Fatalf("%d overflows, closed for %q", overflows, c.Reason())
	}
}

// stalledClients connects n clients that read nothing to a server whose
// queues hold limit bytes each and share a budget of budget bytes.
func stalledClients(t *testing.T, n, limit int, budget int64) (*bytebudget.Budget, []*Conn) {
	t.Helper()
	b := bytebudget.New(budget)
	url, conns := stalledServer(t, Config{MaxQueueBytes: limit, Budget: b, MaxMessageBytes: 1 << 10,
		PingInterval: time.Minute, WriteTimeout: 30 * time.Second})
	cs := make([]*Conn, 0, n)
	for range n {
		dial(t, url)
		cs = append(cs, <-conns)
	}
	return b, cs
}

// Clients that do not read share one budget: past it, each is dropped at
// its next message, and every byte is given back once they are gone.
func TestSharedBudget(t *testing.T) {
	const clients, limit, budget, size = 8, 100 << 10, 200 << 10, 10 << 10
	b, cs := stalledClients(t, clients, limit, budget)
	msg := make([]byte, size)
	accepted := 0
	for round := 0; round < limit/size+1; round++ {
		for _, c := range cs {
			if c.Send(msg) {
				accepted += size
			}
		}
	}
	// Each client may take one message while it holds none.
	if accepted > budget+clients*size {
		t.Fatalf("%d clients that read nothing were given %d bytes (budget %d)", clients, accepted, budget)
	}
	if b.Used() > budget+clients*size {
		t.Fatalf("budget used %d", b.Used())
	}
	for _, c := range cs {
		if !strings.Contains(c.Reason(), "budget spent") && !strings.Contains(c.Reason(), "overflow") {
			t.Fatalf("a client still open (or closed for %q)", c.Reason())
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for b.Used() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes still counted after every client was dropped", b.Used())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// One buffer sent to many clients is one copy: it counts in each client's
// queue but not in the shared budget, so a push to more clients than the
// budget holds copies of drops none of them.
func TestSharedBufferNotChargedPerClient(t *testing.T) {
	const clients, limit, budget, size = 8, 100 << 10, 40 << 10, 10 << 10
	b, cs := stalledClients(t, clients, limit, budget)
	shared := make([]byte, size)
	for round := range 3 { // clients*3*size = 240 KB against a 40 KB budget
		for i, c := range cs {
			if !c.SendShared(shared) {
				t.Fatalf("round %d: client %d dropped for %q", round, i, c.Reason())
			}
		}
	}
	if b.Used() != 0 {
		t.Fatalf("shared buffers took %d bytes of the budget", b.Used())
	}
	// A client's own messages still count: the budget still bounds them.
	own := 0
	for _, c := range cs {
		if c.Send(make([]byte, size)) {
			own += size
		}
	}
	if b.Used() != int64(own) || own == 0 {
		t.Fatalf("budget used %d after %d bytes of own messages", b.Used(), own)
	}
	// Each client's queue still bounds the shared bytes it holds.
	c := cs[0]
	for c.SendShared(shared) {
		if c.Held() > 2*limit {
			t.Fatalf("a client holds %d bytes (MaxQueueBytes %d)", c.Held(), limit)
		}
	}
	if !strings.Contains(c.Reason(), "send queue overflow") {
		t.Fatalf("closed for %q, want the queue overflow", c.Reason())
	}
}
