package electrum

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/gorilla/websocket"

	"github.com/openexplorer/blockbook/internal/listen"
)

// frameConn is a connection that carries one JSON-RPC message per frame:
// a line over TCP and TLS, a message over a websocket.
type frameConn interface {
	ReadFrame() ([]byte, error)
	WriteFrame([]byte) error
	SetReadDeadline(time.Time) error
	SetWriteDeadline(time.Time) error
	Close() error
}

// errFrameTooLarge: a message over MaxRequestBytes.
var errFrameTooLarge = errors.New("message too large")

// lineConn frames messages by newlines.
type lineConn struct {
	net.Conn
	r   *bufio.Reader
	max int
	buf []byte
}

func newLineConn(c net.Conn, maxBytes int) *lineConn {
	return &lineConn{Conn: c, r: bufio.NewReaderSize(c, 16<<10), max: maxBytes}
}

// ReadFrame returns the next non-empty line without its terminator. A
// line longer than the limit is an error (the rest is not read).
func (c *lineConn) ReadFrame() ([]byte, error) {
	for {
		c.buf = c.buf[:0]
		for {
			chunk, err := c.r.ReadSlice('\n')
			c.buf = append(c.buf, chunk...)
			if len(c.buf) > c.max+2 { // +2: the "\r\n" of a full-size line
				return nil, fmt.Errorf("%w: over %d bytes", errFrameTooLarge, c.max)
			}
			if err == nil {
				break
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				return nil, err
			}
		}
		line := bytes.TrimSpace(c.buf)
		if len(line) > 0 {
			return line, nil
		}
	}
}

// WriteFrame writes one message and its newline.
func (c *lineConn) WriteFrame(b []byte) error {
	buf := make([]byte, 0, len(b)+1)
	buf = append(append(buf, b...), '\n')
	_, err := c.Write(buf)
	return err
}

// wsConn frames messages as websocket text messages.
type wsConn struct {
	*websocket.Conn
}

func (c wsConn) ReadFrame() ([]byte, error) {
	for {
		kind, b, err := c.ReadMessage()
		if err != nil {
			if errors.Is(err, websocket.ErrReadLimit) {
				return nil, fmt.Errorf("%w: %v", errFrameTooLarge, err)
			}
			return nil, err
		}
		if kind != websocket.TextMessage && kind != websocket.BinaryMessage {
			continue
		}
		if b = bytes.TrimSpace(b); len(b) > 0 {
			return b, nil
		}
	}
}

func (c wsConn) WriteFrame(b []byte) error { return c.WriteMessage(websocket.TextMessage, b) }

// WebsocketHandler serves Electrum over websockets at any path: each
// message is one JSON-RPC message (or batch), without a newline. Origins
// are not checked: the protocol carries no credentials.
func (s *Server) WebsocketHandler() http.Handler {
	up := websocket.Upgrader{
		ReadBufferSize: 16 << 10, WriteBufferSize: 16 << 10,
		CheckOrigin:  func(*http.Request) bool { return true },
		Subprotocols: nil,
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ip := listen.IPKey(remoteIPString(r.RemoteAddr))
		if s.cfg.WSClient != nil {
			name, exempt := s.cfg.WSClient(r)
			ip = listen.IPKey(name)
			if exempt {
				ip = ""
			}
		}
		key := s.countedKey(ip)
		if e := s.admit(key); e != nil {
			http.Error(w, e.Message, http.StatusServiceUnavailable)
			return
		}
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			s.release(key) // Upgrade has answered the client
			return
		}
		c.SetReadLimit(int64(s.cfg.MaxRequestBytes))
		s.runAdmitted(wsConn{c}, ip, key)
	})
}

func remoteIPString(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return host
}
