package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"
)

// eclient is a minimal Electrum protocol client: newline-delimited
// JSON-RPC 2.0 over TCP, one call at a time, notifications handed to
// onNotify with their arrival time.
type eclient struct {
	conn     net.Conn
	mu       sync.Mutex // one call at a time
	nextID   int
	replies  chan json.RawMessage
	onNotify func(method string, params json.RawMessage, at time.Time)
	readErr  chan error
}

func dial(addr string, onNotify func(string, json.RawMessage, time.Time)) (*eclient, error) {
	conn, err := net.DialTimeout("tcp", addr, 30*time.Second)
	if err != nil {
		return nil, err
	}
	c := &eclient{conn: conn, replies: make(chan json.RawMessage, 1), onNotify: onNotify, readErr: make(chan error, 1)}
	go c.read()
	return c, nil
}

// read splits the stream into messages: replies (with an id) go to the
// waiting call, notifications to onNotify.
func (c *eclient) read() {
	r := bufio.NewReaderSize(c.conn, 1<<16)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			c.readErr <- err
			close(c.replies)
			return
		}
		at := time.Now()
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			c.readErr <- fmt.Errorf("bad message %q: %w", truncate(line), err)
			close(c.replies)
			return
		}
		if m.Method != "" && len(m.ID) == 0 {
			if c.onNotify != nil {
				c.onNotify(m.Method, m.Params, at)
			}
			continue
		}
		c.replies <- line
	}
}

func truncate(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// call sends one request and decodes its result into out.
func (c *eclient) call(method string, params []any, out any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextID++
	req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": method, "params": params})
	if err != nil {
		return err
	}
	_ = c.conn.SetWriteDeadline(time.Now().Add(60 * time.Second))
	if _, err := c.conn.Write(append(req, '\n')); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	var line json.RawMessage
	select {
	case l, ok := <-c.replies:
		if !ok {
			return fmt.Errorf("%s: connection closed: %v", method, <-c.readErr)
		}
		line = l
	case <-time.After(120 * time.Second):
		return fmt.Errorf("%s: no answer in 120 s", method)
	}
	var resp struct {
		ID     int             `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(line, &resp); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if resp.ID != c.nextID {
		return fmt.Errorf("%s: answer to id %d, sent %d", method, resp.ID, c.nextID)
	}
	if resp.Error != nil {
		return fmt.Errorf("%s: %s (code %d)", method, resp.Error.Message, resp.Error.Code)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(resp.Result, out)
}

// hello negotiates the protocol, as every Electrum client does first.
func (c *eclient) hello() error {
	var v []string
	return c.call("server.version", []any{"electrumbench", []string{"1.4", "1.6"}}, &v)
}

func (c *eclient) close() { _ = c.conn.Close() }

// scriptHash is Electrum's name of an output script: its sha256, byte
// reversed, in hex.
func scriptHash(script []byte) string {
	h := sha256.Sum256(script)
	slices.Reverse(h[:])
	return hex.EncodeToString(h[:])
}
