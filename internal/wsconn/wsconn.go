// Package wsconn is the connection side of our websocket servers (the
// Blockbook websocket in server, mempool.space's in esplora): a send queue
// bounded in messages and bytes that never blocks the sender, one writer
// goroutine with pings, and a reader that bounds every frame and closes
// the connection with a frame saying why.
package wsconn

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Config bounds one connection.
type Config struct {
	// MaxQueue messages and MaxQueueBytes bytes may wait for the writer
	// or be in its hands; one more drops the client (0: no such cap).
	MaxQueue, MaxQueueBytes int
	// Budget, when set, is shared by many connections and counts the same
	// bytes as MaxQueueBytes: once it is spent, a connection that still
	// holds bytes is dropped at its next message (one that holds none may
	// always take one message, so a reading client is never starved).
	Budget Budget
	// MaxMessageBytes bounds a frame from the client: a larger one closes
	// the connection (1009).
	MaxMessageBytes int64
	// PingInterval: the writer pings this often; a client silent for two
	// intervals is dropped.
	PingInterval time.Duration
	// WriteTimeout bounds one write.
	WriteTimeout time.Duration
	// OnOverflow and OnTooBig hear of those two ends (metrics); OnClose
	// runs once when the connection is marked closed, under its lock.
	OnOverflow, OnTooBig, OnClose func()
}

// Budget is a byte budget shared by connections (internal/bytebudget's).
type Budget interface {
	TryTake(n int64, alone bool) bool
	Give(n int64)
}

// Conn is one client connection. Its writes happen on WriteLoop only;
// everyone else queues with Send. The queue is a slice rather than a
// buffered channel so that an idle connection costs no memory for it.
type Conn struct {
	ws      *websocket.Conn
	cfg     Config
	writing chan struct{} // closed when WriteLoop returns

	mu     sync.Mutex
	queue  []queued
	queued int           // bytes in queue and in the writer's hands
	wake   chan struct{} // signals WriteLoop (capacity 1)
	closed bool
	why    string
}

// New wraps an upgraded connection; start WriteLoop and ReadLoop.
func New(ws *websocket.Conn, cfg Config) *Conn {
	return &Conn{ws: ws, cfg: cfg, writing: make(chan struct{}), wake: make(chan struct{}, 1)}
}

// queued is one message and the bytes it took from the shared budget.
type queued struct {
	msg     []byte
	parts   [][]byte // a message of several buffers (SendParts); msg is nil then
	size    int
	charged int
}

// Send queues msg; false when the connection is closed or was just closed
// for overflowing its queue.
func (c *Conn) Send(msg []byte) bool { return c.send(msg, false) }

// SendShared queues msg, one buffer sent to many connections: it counts
// against this connection's queue but not the shared budget, which holds
// the bytes each connection alone keeps alive (a shared buffer is one copy
// however many clients hold it).
func (c *Conn) SendShared(msg []byte) bool { return c.send(msg, true) }

// SendParts queues one message made of parts, written one after another:
// buffers shared with other connections and this connection's own, whose
// bytes (own) alone count against the shared budget. A message of shared
// parts (a mempool delta, a projected block) and a client's own parts so
// costs the client only its own.
func (c *Conn) SendParts(parts [][]byte, own int) bool {
	size := 0
	for _, p := range parts {
		size += len(p)
	}
	return c.enqueue(queued{parts: parts, size: size}, own)
}

func (c *Conn) send(msg []byte, shared bool) bool {
	charge := len(msg)
	if shared {
		charge = 0
	}
	return c.enqueue(queued{msg: msg, size: len(msg)}, charge)
}

// enqueue queues q, charging charge bytes to the shared budget.
func (c *Conn) enqueue(q queued, charge int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	over := c.cfg.MaxQueue > 0 && len(c.queue) >= c.cfg.MaxQueue ||
		c.cfg.MaxQueueBytes > 0 && c.queued > 0 && c.queued+q.size > c.cfg.MaxQueueBytes
	why := "send queue overflow: the client does not read fast enough"
	if !over && charge > 0 && c.cfg.Budget != nil {
		if !c.cfg.Budget.TryTake(int64(charge), c.queued == 0) {
			over, why = true, "server send budget spent: the client does not read fast enough"
		}
		q.charged = charge
	}
	if over {
		if c.cfg.OnOverflow != nil {
			c.cfg.OnOverflow()
		}
		c.failLocked(websocket.ClosePolicyViolation, why)
		return false
	}
	c.queue = append(c.queue, q)
	c.queued += q.size
	c.signal()
	return true
}

func (c *Conn) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// CloseWith closes the connection with a close frame stating the reason.
func (c *Conn) CloseWith(code int, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failLocked(code, reason)
}

// failLocked marks the connection closed and tears it down in the
// background, so that a caller broadcasting to many clients never waits
// for one of them.
func (c *Conn) failLocked(code int, reason string) {
	if c.closed {
		return
	}
	c.closed, c.why = true, reason
	c.signal()
	if c.cfg.OnClose != nil {
		c.cfg.OnClose()
	}
	go func() {
		msg := websocket.FormatCloseMessage(code, reason)
		_ = c.ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
		_ = c.ws.Close()
	}()
}

// Reason is why the connection was closed ("" for a normal end).
func (c *Conn) Reason() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.why
}

// ReadLoop reads frames until the connection fails and hands each to
// handle; a frame past MaxMessageBytes closes the connection. It returns
// once the connection is closed and WriteLoop stopped.
func (c *Conn) ReadLoop(handle func(kind int, data []byte)) {
	defer func() {
		c.CloseWith(websocket.CloseNormalClosure, "")
		<-c.writing
	}()
	idle := 2 * c.cfg.PingInterval
	_ = c.ws.SetReadDeadline(time.Now().Add(idle))
	c.ws.SetPongHandler(func(string) error { return c.ws.SetReadDeadline(time.Now().Add(idle)) })
	limit := c.cfg.MaxMessageBytes
	for {
		kind, r, err := c.ws.NextReader()
		if err != nil {
			return
		}
		// The read limit is ours rather than the library's so that the
		// close frame can say why.
		data, err := io.ReadAll(io.LimitReader(r, limit+1))
		if err != nil {
			return
		}
		if int64(len(data)) > limit {
			if c.cfg.OnTooBig != nil {
				c.cfg.OnTooBig()
			}
			// Reading the rest of a frame a little too large (briefly,
			// boundedly) lets the close frame arrive: a socket closed with
			// unread data resets the connection, and the client may lose it.
			_ = c.ws.SetReadDeadline(time.Now().Add(time.Second))
			_, _ = io.Copy(io.Discard, io.LimitReader(r, drainBytes))
			c.CloseWith(websocket.CloseMessageTooBig, fmt.Sprintf("message larger than %d bytes", limit))
			return
		}
		_ = c.ws.SetReadDeadline(time.Now().Add(idle))
		handle(kind, data)
	}
}

// drainBytes bounds what is read of a frame past the limit.
const drainBytes = 1 << 20

// compressAbove is the size from which messages are compressed (when the
// client negotiated permessage-deflate).
const compressAbove = 512

// write writes one message; false when it failed.
func (c *Conn) write(m queued) bool {
	// Compressing a small message costs more than it saves.
	c.ws.EnableWriteCompression(m.size > compressAbove)
	_ = c.ws.SetWriteDeadline(time.Now().Add(c.cfg.WriteTimeout))
	if m.parts == nil {
		return c.ws.WriteMessage(websocket.TextMessage, m.msg) == nil
	}
	w, err := c.ws.NextWriter(websocket.TextMessage)
	if err != nil {
		return false
	}
	for _, p := range m.parts {
		if _, err := w.Write(p); err != nil {
			_ = w.Close()
			return false
		}
	}
	return w.Close() == nil
}

// giveLocked uncounts msgs (written or dropped); c.mu is held.
func (c *Conn) giveLocked(msgs []queued) {
	n, charged := 0, 0
	for _, m := range msgs {
		n += m.size
		charged += m.charged
	}
	c.queued -= n
	if c.cfg.Budget != nil && charged > 0 {
		c.cfg.Budget.Give(int64(charged))
	}
}

// Held is the bytes queued to this connection or in its writer's hands.
func (c *Conn) Held() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.queued
}

// WriteLoop writes queued messages and pings until the connection closes.
func (c *Conn) WriteLoop() {
	defer close(c.writing)
	defer func() { // the connection is closed: nothing more is queued
		c.mu.Lock()
		c.giveLocked(c.queue)
		c.queue = nil
		c.mu.Unlock()
	}()
	ping := time.NewTicker(c.cfg.PingInterval)
	defer ping.Stop()
	for {
		select {
		case <-c.wake:
			c.mu.Lock()
			batch, closed := c.queue, c.closed
			c.queue = nil
			c.mu.Unlock()
			// The batch's bytes stay counted until each message is written:
			// a client that does not read holds its queue and the batch.
			for i, m := range batch {
				if !c.write(m) {
					c.mu.Lock()
					c.giveLocked(batch[i:])
					c.failLocked(websocket.CloseGoingAway, "write failed")
					c.mu.Unlock()
					return
				}
				c.mu.Lock()
				c.giveLocked(batch[i : i+1])
				c.mu.Unlock()
			}
			if closed {
				return
			}
		case <-ping.C:
			if err := c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(10*time.Second)); err != nil {
				c.CloseWith(websocket.CloseGoingAway, "ping failed")
				return
			}
		}
	}
}
