// Package rpcfault is an HTTP proxy in front of a node's JSON-RPC server
// that injects faults on command: garbage bodies, truncated answers, HTTP
// errors, stalls and lag. The node-fault torture campaign (e2e) points
// blockbook's rpc_url at it. Websocket upgrades (btcd's /ws notifications)
// pass through untouched, so only the request/answer path is faulted.
package rpcfault

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Kind is one way the proxy misbehaves.
type Kind int

// The faults. Each applies to every JSON-RPC request while it is set.
const (
	None          Kind = iota // forward as is
	NotJSON                   // 200 with a plain-text body
	HTMLError                 // 502 with an HTML error page, as a front proxy sends
	WrongShape                // 200 with JSON that is not a JSON-RPC response
	WrongType                 // the node's answer with its result replaced by a value of another type
	Truncated                 // the node's answer cut in half (a complete HTTP message, broken JSON)
	CutConnection             // the node's answer announced in full, half sent, then the connection closed
	HTTP500                   // 500 with a plain-text body
	HTTP503                   // 503 with Retry-After and a plain-text body
	Stall                     // no answer until the client gives up or the fault is cleared
	Lag                       // the node's answer, after Fault.Delay
	numKinds
)

var kindNames = [...]string{"none", "not-json", "html-error", "wrong-shape", "wrong-type", "truncated",
	"cut-connection", "http-500", "http-503", "stall", "lag"}

func (k Kind) String() string {
	if k < 0 || k >= numKinds {
		return fmt.Sprintf("kind(%d)", int(k))
	}
	return kindNames[k]
}

// Kinds lists every fault (without None).
func Kinds() []Kind {
	out := make([]Kind, 0, numKinds-1)
	for k := None + 1; k < numKinds; k++ {
		out = append(out, k)
	}
	return out
}

// Fault is what the proxy does to the requests it gets.
type Fault struct {
	Kind  Kind
	Delay time.Duration // Lag: added before every answer
}

// maxBody bounds what the proxy buffers of a request or an answer; a raw
// regtest block is far smaller.
const maxBody = 64 << 20

// Proxy forwards JSON-RPC requests to a node, applying the current fault.
type Proxy struct {
	// URL is where clients reach the proxy (http://127.0.0.1:port).
	URL string

	target *url.URL
	client *http.Client
	ws     *httputil.ReverseProxy
	srv    *http.Server
	ln     net.Listener

	mu      sync.Mutex
	fault   Fault
	changed chan struct{} // closed on every Set: wakes stalled requests
	counts  [numKinds]int
	closed  chan struct{}
}

// Start listens on a free loopback port and proxies to target, the node's
// RPC URL (http://host:port).
func Start(target string) (*Proxy, error) {
	u, err := url.Parse(target)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("rpcfault: target %q is not an http URL (%v)", target, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("rpcfault: listen: %w", err)
	}
	p := &Proxy{
		URL: "http://" + ln.Addr().String(), target: u, ln: ln,
		client:  &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}},
		ws:      httputil.NewSingleHostReverseProxy(u),
		changed: make(chan struct{}), closed: make(chan struct{}),
	}
	// Errors of half-closed and aborted connections are the point here.
	quiet := log.New(io.Discard, "", 0)
	p.ws.ErrorLog = quiet
	p.srv = &http.Server{Handler: p, ErrorLog: quiet, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }() // returns ErrServerClosed after Close
	return p, nil
}

// Set makes every following request (and the stalled ones) meet f.
func (p *Proxy) Set(f Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.fault = f
	close(p.changed)
	p.changed = make(chan struct{})
}

// Clear ends the fault: requests are forwarded as they are again.
func (p *Proxy) Clear() { p.Set(Fault{}) }

// Current returns the fault in force.
func (p *Proxy) Current() Fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fault
}

// Count returns how many requests met fault kind k (None: forwarded as is).
func (p *Proxy) Count(k Kind) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if k < 0 || k >= numKinds {
		return 0
	}
	return p.counts[k]
}

// Close stops the proxy and releases stalled requests.
func (p *Proxy) Close() error {
	select {
	case <-p.closed:
		return nil
	default:
	}
	close(p.closed)
	p.client.CloseIdleConnections()
	return p.srv.Close()
}

func (p *Proxy) current() (Fault, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fault, p.changed
}

func (p *Proxy) count(k Kind) {
	p.mu.Lock()
	p.counts[k]++
	p.mu.Unlock()
}

// ServeHTTP applies the current fault to one request.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		p.ws.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		http.Error(w, "rpcfault: reading request: "+err.Error(), http.StatusBadRequest)
		return
	}
	f, changed := p.current()
	p.count(f.Kind)
	switch f.Kind {
	case NotJSON:
		writeText(w, http.StatusOK, "text/plain", "node says: everything is fine\n")
	case HTMLError:
		writeText(w, http.StatusBadGateway, "text/html",
			"<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>\n")
	case WrongShape:
		writeText(w, http.StatusOK, "application/json", `{"status":"ok","data":{"items":[1,2,3]}}`)
	case HTTP500:
		writeText(w, http.StatusInternalServerError, "text/plain", "500 Internal Server Error\n")
	case HTTP503:
		w.Header().Set("Retry-After", "1")
		writeText(w, http.StatusServiceUnavailable, "text/plain", "503 Service Unavailable: warming up\n")
	case Stall:
		select {
		case <-r.Context().Done(): // the client gave up: it never gets an answer
			return
		case <-p.closed:
			return
		case <-changed: // the node "thaws": answer late, as a frozen node does
		}
		p.forward(w, r, body, None)
	case Lag:
		select {
		case <-r.Context().Done():
			return
		case <-p.closed:
			return
		case <-time.After(f.Delay):
		}
		p.forward(w, r, body, None)
	default:
		p.forward(w, r, body, f.Kind)
	}
}

func writeText(w http.ResponseWriter, code int, contentType, body string) {
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(code)
	_, _ = io.WriteString(w, body) // the client may be gone
}

// forward sends the request to the node and returns its answer, damaged as
// kind says (WrongType, Truncated, CutConnection; anything else: intact).
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, body []byte, kind Kind) {
	status, header, answer, err := p.roundTrip(r.Context(), r, body)
	if err != nil {
		// The node is down: as close as a proxy gets to a refused connection.
		panic(http.ErrAbortHandler)
	}
	for _, h := range []string{"Content-Type", "Www-Authenticate"} {
		if v := header.Get(h); v != "" {
			w.Header().Set(h, v)
		}
	}
	switch kind {
	case WrongType:
		answer = wrongType(answer)
	case Truncated:
		answer = answer[:len(answer)/2]
	case CutConnection:
		w.Header().Set("Content-Length", fmt.Sprint(len(answer)))
		w.WriteHeader(status)
		_, _ = w.Write(answer[:len(answer)/2])
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
		panic(http.ErrAbortHandler) // closes the connection mid-body
	}
	w.Header().Set("Content-Length", fmt.Sprint(len(answer)))
	w.WriteHeader(status)
	_, _ = w.Write(answer)
}

func (p *Proxy) roundTrip(ctx context.Context, r *http.Request, body []byte) (int, http.Header, []byte, error) {
	u := *p.target
	u.Path, u.RawQuery = r.URL.Path, r.URL.RawQuery
	req, err := http.NewRequestWithContext(ctx, r.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, fmt.Errorf("rpcfault: %w", err)
	}
	for _, h := range []string{"Authorization", "Content-Type"} {
		if v := r.Header.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("rpcfault: forward: %w", err)
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return 0, nil, nil, fmt.Errorf("rpcfault: read answer: %w", err)
	}
	return resp.StatusCode, resp.Header, answer, nil
}

// wrongType replaces a JSON-RPC answer's result by a value of another JSON
// type (a string becomes a number, anything else a string), keeping the rest
// of the envelope well-formed. An answer that is not a JSON-RPC object, or
// carries an error, is returned as it is.
func wrongType(answer []byte) []byte {
	var env map[string]json.RawMessage
	if err := json.Unmarshal(answer, &env); err != nil {
		return answer
	}
	res, ok := env["result"]
	if !ok {
		return answer
	}
	if e, ok := env["error"]; ok && string(e) != "null" {
		return answer
	}
	if len(res) > 0 && res[0] == '"' {
		env["result"] = json.RawMessage("12345")
	} else {
		env["result"] = json.RawMessage(`"not what you asked for"`)
	}
	out, err := json.Marshal(env)
	if err != nil {
		return answer
	}
	return out
}
