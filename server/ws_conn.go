package server

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// wsConn is one client connection. Its writes happen on writeLoop only;
// everyone else queues messages with send, which never blocks: a client
// that does not read fills its queue and is dropped. The queue is a slice
// rather than a buffered channel so that an idle connection costs no
// memory for it (the benchmark holds 15,000 of them).
type wsConn struct {
	s         *Websocket
	id        uint64
	ws        *websocket.Conn
	ip, ipKey string
	ctx       context.Context
	cancel    context.CancelFunc
	pending   chan struct{} // request slots of this connection
	writing   chan struct{} // closed when writeLoop returns

	mu     sync.Mutex
	queue  [][]byte      // messages waiting for writeLoop
	wake   chan struct{} // signals writeLoop (capacity 1)
	closed bool
	why    string

	rate        msgRate             // readLoop only
	descriptors map[string]struct{} // getAccountInfo descriptors, guarded by mu

	// Subscription state, guarded by hub.mu.
	addrs []string // subscribed descriptors (as map keys)
}

func newWSConn(s *Websocket, ws *websocket.Conn, ip, key string) *wsConn {
	ctx, cancel := context.WithCancel(context.Background())
	return &wsConn{
		s: s, id: s.nextID.Add(1), ws: ws, ip: ip, ipKey: key, ctx: ctx, cancel: cancel,
		pending: make(chan struct{}, s.cfg.MaxPendingRequests), writing: make(chan struct{}),
		wake: make(chan struct{}, 1),
	}
}

// send queues a message; false when the connection is closed or was just
// closed because its queue overflowed.
func (c *wsConn) send(msg []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	if len(c.queue) >= c.s.cfg.SendQueue {
		c.s.m.dropped.Inc()
		c.failLocked(websocket.ClosePolicyViolation, "send queue overflow: the client does not read fast enough")
		return false
	}
	c.queue = append(c.queue, msg)
	c.signal()
	return true
}

func (c *wsConn) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// closeWith closes the connection with a close frame stating the reason.
func (c *wsConn) closeWith(code int, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failLocked(code, reason)
}

// failLocked marks the connection closed and tears it down in the
// background, so that a caller broadcasting to many clients never waits
// for one of them.
func (c *wsConn) failLocked(code int, reason string) {
	if c.closed {
		return
	}
	c.closed, c.why = true, reason
	c.signal()
	c.cancel()
	go func() {
		msg := websocket.FormatCloseMessage(code, reason)
		_ = c.ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
		_ = c.ws.Close()
	}()
}

func (c *wsConn) reason() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.why
}

// readLoop reads requests until the connection fails, then cleans up.
func (c *wsConn) readLoop() {
	defer func() {
		c.closeWith(websocket.CloseNormalClosure, "")
		<-c.writing
		c.s.disconnected(c)
	}()
	idle := 2 * c.s.cfg.PingInterval
	_ = c.ws.SetReadDeadline(time.Now().Add(idle))
	c.ws.SetPongHandler(func(string) error { return c.ws.SetReadDeadline(time.Now().Add(idle)) })
	limit := c.s.cfg.MaxMessageBytes
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
			c.s.m.rejected.WithLabelValues("message_too_big").Inc()
			c.closeWith(websocket.CloseMessageTooBig, fmt.Sprintf("message larger than %d bytes", limit))
			return
		}
		_ = c.ws.SetReadDeadline(time.Now().Add(idle))
		if c.overMessageRate() {
			c.send(errorResponse(requestID(data), fmt.Sprintf("Too many messages on this connection (limit %d per %s)", c.s.cfg.MessageRate, c.s.cfg.MessageWindow)))
			continue
		}
		if kind != websocket.TextMessage {
			c.send(errorResponse("", "Binary messages are not supported, send requests as JSON text"))
			continue
		}
		c.s.dispatch(c, data)
	}
}

// compressAbove is the size from which messages are compressed (when the
// client negotiated permessage-deflate).
const compressAbove = 512

// writeLoop writes queued messages and pings until the connection closes.
func (c *wsConn) writeLoop() {
	defer close(c.writing)
	ping := time.NewTicker(c.s.cfg.PingInterval)
	defer ping.Stop()
	for {
		select {
		case <-c.wake:
			c.mu.Lock()
			batch, closed := c.queue, c.closed
			c.queue = nil
			c.mu.Unlock()
			for _, msg := range batch {
				// Compressing a small message costs more than it saves.
				c.ws.EnableWriteCompression(len(msg) > compressAbove)
				_ = c.ws.SetWriteDeadline(time.Now().Add(c.s.cfg.RequestTimeout))
				if err := c.ws.WriteMessage(websocket.TextMessage, msg); err != nil {
					c.closeWith(websocket.CloseGoingAway, "write failed")
					return
				}
			}
			if closed {
				return
			}
		case <-ping.C:
			if err := c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(10*time.Second)); err != nil {
				c.closeWith(websocket.CloseGoingAway, "ping failed")
				return
			}
		}
	}
}
