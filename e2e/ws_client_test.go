package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// wsClient is a minimal websocket API client for the tests: it matches
// answers to requests by id and keeps everything else (notifications) in
// per-id queues.
type wsClient struct {
	t    testing.TB
	conn *websocket.Conn

	mu       sync.Mutex
	next     int
	waiters  map[string]chan json.RawMessage
	notes    map[string][]json.RawMessage
	noteCh   chan struct{}
	closed   chan struct{}
	closeErr error
}

// trezorOrigin is what @trezor/blockchain-link sends.
const trezorOrigin = "https://node.trezor.io"

func dialWS(t testing.TB, base string, hdr http.Header) (*wsClient, *http.Response, error) {
	t.Helper()
	if hdr == nil {
		hdr = http.Header{"Origin": {trezorOrigin}}
	}
	url := "ws" + strings.TrimPrefix(base, "http") + "/websocket"
	conn, resp, err := websocket.DefaultDialer.Dial(url, hdr)
	if err != nil {
		return nil, resp, err
	}
	c := &wsClient{t: t, conn: conn, waiters: map[string]chan json.RawMessage{}, notes: map[string][]json.RawMessage{},
		noteCh: make(chan struct{}, 1), closed: make(chan struct{})}
	go c.readLoop()
	t.Cleanup(func() { conn.Close() })
	return c, resp, nil
}

func newWS(t testing.TB, base string) *wsClient {
	t.Helper()
	c, _, err := dialWS(t, base, nil)
	if err != nil {
		t.Fatalf("websocket dial: %v", err)
	}
	return c
}

func (c *wsClient) readLoop() {
	defer close(c.closed)
	for {
		_, data, err := c.conn.ReadMessage()
		if err != nil {
			c.mu.Lock()
			c.closeErr = err
			c.mu.Unlock()
			return
		}
		var msg struct {
			ID   string          `json:"id"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(data, &msg); err != nil {
			c.t.Errorf("server sent non-JSON: %s", data)
			continue
		}
		c.mu.Lock()
		if w, ok := c.waiters[msg.ID]; ok {
			delete(c.waiters, msg.ID)
			w <- msg.Data
		} else {
			c.notes[msg.ID] = append(c.notes[msg.ID], msg.Data)
			select {
			case c.noteCh <- struct{}{}:
			default:
			}
		}
		c.mu.Unlock()
	}
}

// sendRaw sends a frame and waits for the answer with id.
func (c *wsClient) sendRaw(id string, frame []byte) json.RawMessage {
	c.t.Helper()
	ch := make(chan json.RawMessage, 1)
	c.mu.Lock()
	c.waiters[id] = ch
	c.mu.Unlock()
	if err := c.conn.WriteMessage(websocket.TextMessage, frame); err != nil {
		c.t.Fatalf("write: %v", err)
	}
	select {
	case data := <-ch:
		return data
	case <-c.closed:
		c.t.Fatalf("connection closed waiting for %s: %v", id, c.closeErr)
	case <-time.After(waitFor):
		c.t.Fatalf("no answer to request %s", id)
	}
	return nil
}

// call sends a request and returns its data (an error answer included).
func (c *wsClient) call(method string, params any) (id string, data json.RawMessage) {
	c.t.Helper()
	c.mu.Lock()
	c.next++
	id = strconv.Itoa(c.next)
	c.mu.Unlock()
	req := map[string]any{"id": id, "method": method}
	if params != nil {
		req["params"] = params
	}
	frame, err := json.Marshal(req)
	if err != nil {
		c.t.Fatal(err)
	}
	return id, c.sendRaw(id, frame)
}

// ok calls and requires a non-error answer, decoded into out.
func (c *wsClient) ok(method string, params, out any) string {
	c.t.Helper()
	id, data := c.call(method, params)
	if msg := wsErrorOf(data); msg != "" {
		c.t.Fatalf("%s %v: error %q", method, params, msg)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			c.t.Fatalf("%s: %v: %s", method, err, data)
		}
	}
	return id
}

// fails calls and requires an error answer containing want.
func (c *wsClient) fails(method string, params any, want string) {
	c.t.Helper()
	_, data := c.call(method, params)
	if msg := wsErrorOf(data); !strings.Contains(msg, want) || msg == "" {
		c.t.Errorf("%s %v: answer %s, want an error containing %q", method, params, truncateBytes(data, 300), want)
	}
}

func wsErrorOf(data json.RawMessage) string {
	var e struct {
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &e) == nil && e.Error != nil {
		return e.Error.Message
	}
	return ""
}

// notification waits for the next notification with id (a failure guard,
// not a speed assertion) and decodes it into out.
func (c *wsClient) notification(id string, out any) {
	c.t.Helper()
	deadline := time.After(waitFor)
	for {
		c.mu.Lock()
		if q := c.notes[id]; len(q) > 0 {
			c.notes[id] = q[1:]
			c.mu.Unlock()
			if err := json.Unmarshal(q[0], out); err != nil {
				c.t.Fatalf("notification %s: %v: %s", id, err, q[0])
			}
			return
		}
		c.mu.Unlock()
		select {
		case <-c.noteCh:
		case <-c.closed:
			c.t.Fatalf("connection closed waiting for notification %s: %v", id, c.closeErr)
		case <-deadline:
			c.t.Fatalf("no notification for subscription %s", id)
		}
	}
}

// pending returns the notifications received for id so far.
func (c *wsClient) pending(id string) []json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]json.RawMessage(nil), c.notes[id]...)
}

func (c *wsClient) String() string { return fmt.Sprintf("wsClient(%s)", c.conn.RemoteAddr()) }
