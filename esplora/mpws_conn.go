package esplora

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/openexplorer/blockbook/bchain"
)

// wsConn is one client of the mempool.space websocket. Writes happen on
// writeLoop only; everyone else queues with send, which never blocks: a
// client whose queue exceeds MaxQueueBytes is dropped (mempool.space's
// MAX_BUFFERED_AMOUNT rule).
type wsConn struct {
	w  *mpWS
	ws *websocket.Conn
	ip string

	mu      sync.Mutex
	queue   [][]byte
	queued  int // bytes in queue
	wake    chan struct{}
	closed  bool
	why     string
	writing chan struct{} // closed when writeLoop returns

	// What the client asked for, guarded by mu (addresses also by the
	// hub's index).
	wants   map[string]bool
	trackTx *bchain.Hash
	// toldReplaced is the tracked tx whose replacement the client was told.
	toldReplaced bchain.Hash
	trackAddr    string                     // track-address ("" none)
	addrs        map[string]bchain.AddrDesc // track-addresses and track-address, by address
	multi        map[string]bool            // the addresses of track-addresses
	rbf          string                     // track-rbf: "all", "fullRbf" or ""
	rbfSum       bool                       // track-rbf-summary
	stamps       []time.Time                // readLoop only: message times in the window
}

// send queues msg; false when the connection is closed or was just closed
// for overflowing its queue.
func (c *wsConn) send(msg []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	if c.queued > 0 && c.queued+len(msg) > c.w.cfg.MaxQueueBytes {
		c.failLocked(websocket.ClosePolicyViolation, "send queue overflow: the client does not read fast enough")
		return false
	}
	c.queue = append(c.queue, msg)
	c.queued += len(msg)
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return true
}

func (c *wsConn) closeWith(code int, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failLocked(code, reason)
}

// failLocked marks the connection closed and tears it down in the
// background, so that a broadcast never waits for one client.
func (c *wsConn) failLocked(code int, reason string) {
	if c.closed {
		return
	}
	c.closed, c.why = true, reason
	select {
	case c.wake <- struct{}{}:
	default:
	}
	go func() {
		msg := websocket.FormatCloseMessage(code, reason)
		_ = c.ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
		_ = c.ws.Close()
	}()
}

// readLoop reads messages until the connection fails, then cleans up.
func (c *wsConn) readLoop() {
	defer func() {
		c.closeWith(websocket.CloseNormalClosure, "")
		<-c.writing
		c.w.disconnected(c)
	}()
	idle := 2 * c.w.cfg.PingInterval
	_ = c.ws.SetReadDeadline(time.Now().Add(idle))
	c.ws.SetPongHandler(func(string) error { return c.ws.SetReadDeadline(time.Now().Add(idle)) })
	limit := int64(c.w.cfg.MaxMessageBytes)
	for {
		kind, r, err := c.ws.NextReader()
		if err != nil {
			return
		}
		data, err := io.ReadAll(io.LimitReader(r, limit+1))
		if err != nil {
			return
		}
		if int64(len(data)) > limit {
			c.closeWith(websocket.CloseMessageTooBig, fmt.Sprintf("message larger than %d bytes", limit))
			return
		}
		_ = c.ws.SetReadDeadline(time.Now().Add(idle))
		if c.overRate() {
			c.closeWith(websocket.ClosePolicyViolation, fmt.Sprintf("more than %d messages in %s", c.w.cfg.MessageRate, c.w.cfg.MessageWindow))
			return
		}
		if kind != websocket.TextMessage {
			c.send(wsError("binary messages are not supported: send JSON text"))
			continue
		}
		c.w.handle(c, data)
	}
}

// overRate counts a message against MessageRate per MessageWindow
// (mempool.space closes a client past 100 messages in 10 s).
func (c *wsConn) overRate() bool {
	now := time.Now()
	cut := now.Add(-c.w.cfg.MessageWindow)
	i := 0
	for i < len(c.stamps) && !c.stamps[i].After(cut) {
		i++
	}
	c.stamps = append(c.stamps[i:], now)
	return len(c.stamps) > c.w.cfg.MessageRate
}

// compressAbove is the size from which messages are compressed (when the
// client negotiated permessage-deflate).
const compressAbove = 512

// writeLoop writes queued messages and pings until the connection closes.
func (c *wsConn) writeLoop() {
	defer close(c.writing)
	ping := time.NewTicker(c.w.cfg.PingInterval)
	defer ping.Stop()
	for {
		select {
		case <-c.wake:
			c.mu.Lock()
			batch, closed := c.queue, c.closed
			c.queue, c.queued = nil, 0
			c.mu.Unlock()
			if closed {
				return
			}
			for _, msg := range batch {
				c.ws.EnableWriteCompression(len(msg) > compressAbove)
				_ = c.ws.SetWriteDeadline(time.Now().Add(wsWriteTimeout))
				if err := c.ws.WriteMessage(websocket.TextMessage, msg); err != nil {
					c.closeWith(websocket.CloseGoingAway, "write failed")
					return
				}
			}
		case <-ping.C:
			if err := c.ws.WriteControl(websocket.PingMessage, nil, time.Now().Add(10*time.Second)); err != nil {
				c.closeWith(websocket.CloseGoingAway, "ping failed")
				return
			}
		}
	}
}
