package server

import (
	"context"
	"fmt"
	"sync"

	"github.com/gorilla/websocket"

	"github.com/openexplorer/blockbook/internal/wsconn"
)

// wsConn is one client connection: the kit's connection (internal/wsconn:
// a send queue that never blocks, so a client that does not read fills it
// and is dropped; one writer; bounded frames) with the websocket API's
// per-connection state.
type wsConn struct {
	*wsconn.Conn
	s         *Websocket
	id        uint64
	ip, ipKey string
	ctx       context.Context
	cancel    context.CancelFunc
	pending   chan struct{} // request slots of this connection

	mu          sync.Mutex
	rate        msgRate             // readLoop only
	descriptors map[string]struct{} // getAccountInfo descriptors, guarded by mu

	// Subscription state, guarded by hub.mu.
	addrs []string // subscribed descriptors (as map keys)
}

func newWSConn(s *Websocket, ws *websocket.Conn, ip, key string) *wsConn {
	ctx, cancel := context.WithCancel(context.Background())
	c := &wsConn{
		s: s, id: s.nextID.Add(1), ip: ip, ipKey: key, ctx: ctx, cancel: cancel,
		pending: make(chan struct{}, s.cfg.MaxPendingRequests),
	}
	c.Conn = wsconn.New(ws, wsconn.Config{
		MaxQueue: s.cfg.SendQueue, MaxQueueBytes: s.cfg.SendQueueBytes, Budget: s.queued, MaxMessageBytes: s.cfg.MaxMessageBytes, PingInterval: s.cfg.PingInterval,
		WriteTimeout: s.cfg.RequestTimeout,
		OnOverflow:   s.m.dropped.Inc,
		OnTooBig:     func() { s.m.rejected.WithLabelValues("message_too_big").Inc() },
		OnClose:      cancel,
	})
	return c
}

func (c *wsConn) send(msg []byte) bool              { return c.Send(msg) }
func (c *wsConn) closeWith(code int, reason string) { c.CloseWith(code, reason) }
func (c *wsConn) reason() string                    { return c.Reason() }

func (c *wsConn) writeLoop() { c.WriteLoop() }

// readLoop reads requests until the connection fails, then cleans up.
func (c *wsConn) readLoop() {
	c.ReadLoop(func(kind int, data []byte) {
		if c.overMessageRate() {
			c.send(errorResponse(requestID(data), fmt.Sprintf("Too many messages on this connection (limit %d per %s)", c.s.cfg.MessageRate, c.s.cfg.MessageWindow)))
			return
		}
		if kind != websocket.TextMessage {
			c.send(errorResponse("", "Binary messages are not supported, send requests as JSON text"))
			return
		}
		c.s.dispatch(c, data)
	})
	c.s.disconnected(c)
}
