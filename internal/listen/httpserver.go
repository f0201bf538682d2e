package listen

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Timeouts of an HTTP listener. ReadHeader bounds a request's headers,
// Read its whole body (slow bodies), Write its answer (clients that do not
// read), Idle a keep-alive connection between requests. Websocket
// connections are hijacked, which clears the deadlines: they keep their
// own.
type Timeouts struct {
	ReadHeader, Read, Write, Idle time.Duration
}

// DefaultTimeouts are the public port's: a request may work for
// requestTimeout and then has 30 s to be read.
func DefaultTimeouts(requestTimeout time.Duration) Timeouts {
	return Timeouts{ReadHeader: 10 * time.Second, Read: 30 * time.Second, Write: requestTimeout + 30*time.Second, Idle: 120 * time.Second}
}

// DefaultMaxHeaderBytes bounds a request's line and headers (Go's default,
// 1 MB: the public port takes a raw tx in the path of sendtx).
const DefaultMaxHeaderBytes = http.DefaultMaxHeaderBytes

// FrontMaxHeaderBytes bounds them on the fronts that take nothing large in
// a URL (Esplora, Electrum's websocket): Go parses the whole request line
// before any handler runs, and under the abuse campaign the unescaping of
// 900 KB paths was a third of the server's CPU. Esplora's longest request
// line (txs/outspends with a list of txids) and a browser's cookies fit
// many times over; past it the client gets 431.
const FrontMaxHeaderBytes = 64 << 10

// HTTP is one HTTP listener's configuration: every front serving HTTP is
// built from it, so none lacks a timeout or a cap.
type HTTP struct {
	Timeouts
	Caps
	MaxHeaderBytes int
	Log            *slog.Logger
}

// Server builds the http.Server for h with the timeouts and header cap.
func (c HTTP) Server(h http.Handler) *http.Server {
	if c.MaxHeaderBytes <= 0 {
		c.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	srv := &http.Server{
		Handler: h, ReadHeaderTimeout: c.ReadHeader, ReadTimeout: c.Read, WriteTimeout: c.Write, IdleTimeout: c.Idle,
		MaxHeaderBytes: c.MaxHeaderBytes,
	}
	if c.Log != nil {
		srv.ErrorLog = slog.NewLogLogger(c.Log.Handler(), slog.LevelDebug)
	}
	return srv
}

// Listener caps ln's connections; an excess one gets an HTTP 503 with a
// JSON body (best effort, 5 s) and is closed.
func (c HTTP) Listener(ln net.Listener) *CappedListener {
	caps := c.Caps
	if caps.Refuse == nil {
		caps.Refuse = refuseHTTP(c.MaxConns, c.MaxConnsPerClient)
	}
	return Cap(ln, caps)
}

func refuseHTTP(total, perClient int) func(net.Conn, bool) {
	return func(conn net.Conn, per bool) {
		msg := fmt.Sprintf("Too many connections (limit %d)", total)
		if per {
			msg = fmt.Sprintf("Too many connections from this client (limit %d)", perClient)
		}
		body := fmt.Sprintf("{\"error\":%q}\n", msg)
		_ = conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
		_, _ = fmt.Fprintf(conn, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\n"+
			"X-Content-Type-Options: nosniff\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	}
}
