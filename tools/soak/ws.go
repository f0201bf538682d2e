package soak

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// WS is one websocket API connection: requests are matched to answers by
// id; every other message is a notification, handed to OnNote.
type WS struct {
	conn   *websocket.Conn
	onNote func(id string, data json.RawMessage)

	writeMu sync.Mutex
	mu      sync.Mutex
	next    int
	waiters map[string]chan json.RawMessage
	closed  chan struct{}
	err     error // why the connection ended
}

// Dial connects to base's /websocket (base is http://host:port) with the
// given headers; onNote (may be nil) receives notifications on the read
// goroutine.
func Dial(ctx context.Context, base string, hdr http.Header, onNote func(id string, data json.RawMessage)) (*WS, *http.Response, error) {
	url := "ws" + strings.TrimPrefix(base, "http") + "/websocket"
	d := &websocket.Dialer{HandshakeTimeout: 60 * time.Second, ReadBufferSize: 4096, WriteBufferSize: 4096}
	conn, resp, err := d.DialContext(ctx, url, hdr)
	if err != nil {
		return nil, resp, fmt.Errorf("dial %s: %w", url, err)
	}
	c := &WS{conn: conn, onNote: onNote, waiters: map[string]chan json.RawMessage{}, closed: make(chan struct{})}
	// The library's own pong must be written within a second, which a
	// load generator starved of CPU misses, ending the connection on the
	// client's side; the server waits two ping intervals for it.
	conn.SetPingHandler(func(msg string) error {
		err := conn.WriteControl(websocket.PongMessage, []byte(msg), time.Now().Add(pongWait))
		if errors.Is(err, websocket.ErrCloseSent) {
			return nil
		}
		return err
	})
	go c.readLoop()
	return c, resp, nil
}

func (c *WS) readLoop() {
	defer close(c.closed)
	for {
		_, data, err := c.conn.ReadMessage()
		if err != nil {
			c.mu.Lock()
			c.err = err
			c.mu.Unlock()
			return
		}
		var msg struct {
			ID   string          `json:"id"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(data, &msg); err != nil {
			c.mu.Lock()
			c.err = fmt.Errorf("server sent non-JSON %.100q: %w", data, err)
			c.mu.Unlock()
			return
		}
		c.mu.Lock()
		w, ok := c.waiters[msg.ID]
		delete(c.waiters, msg.ID)
		c.mu.Unlock()
		if ok {
			w <- msg.Data
		} else if c.onNote != nil {
			c.onNote(msg.ID, msg.Data)
		}
	}
}

// pongWait bounds the write of a pong.
const pongWait = 30 * time.Second

// ErrAnswer is an error answer of the API (data.error.message).
var ErrAnswer = errors.New("error answer")

// Call sends a request and waits for its answer; an error answer is
// returned as an error wrapping ErrAnswer. The id is returned too, for
// subscriptions (their notifications reuse it).
func (c *WS) Call(ctx context.Context, method string, params any) (string, json.RawMessage, error) {
	c.mu.Lock()
	c.next++
	id := strconv.Itoa(c.next)
	ch := make(chan json.RawMessage, 1)
	c.waiters[id] = ch
	c.mu.Unlock()
	req := map[string]any{"id": id, "method": method}
	if params != nil {
		req["params"] = params
	}
	c.writeMu.Lock()
	err := c.conn.WriteJSON(req)
	c.writeMu.Unlock()
	if err != nil {
		return id, nil, fmt.Errorf("%s: write: %w", method, err)
	}
	select {
	case data := <-ch:
		var e struct {
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(data, &e) == nil && e.Error != nil {
			return id, data, fmt.Errorf("%s %v: %w: %s", method, params, ErrAnswer, e.Error.Message)
		}
		return id, data, nil
	case <-c.closed:
		return id, nil, fmt.Errorf("%s: connection closed: %w", method, c.Err())
	case <-ctx.Done():
		return id, nil, fmt.Errorf("%s: no answer: %w", method, ctx.Err())
	}
}

// Err is why the connection ended (nil while it is open).
func (c *WS) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Closed is closed when the connection ends.
func (c *WS) Closed() <-chan struct{} { return c.closed }

// Close closes the connection politely.
func (c *WS) Close() {
	c.writeMu.Lock()
	_ = c.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""),
		time.Now().Add(time.Second)) // best effort: the connection is closed next anyway
	c.writeMu.Unlock()
	_ = c.conn.Close()
}
