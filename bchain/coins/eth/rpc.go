package eth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/rpc"
	"github.com/gorilla/websocket"

	"github.com/openexplorer/blockbook/bchain"
)

// rpcClient wraps go-ethereum's JSON-RPC client: every call gets the
// configured timeout, and errors are sorted into the bchain sentinels so the
// indexer can tell a node that is down (retry) from a node that said no.
type rpcClient struct {
	url     string
	timeout time.Duration
	log     *slog.Logger
	own     bool // its own HTTP transport, whatever the host (the probe's)
	// arrivals dials the probe's connections (own only), for AnswerOwed.
	arrivals *bchain.ArrivalConns

	mu     sync.Mutex
	client *rpc.Client
}

func newRPCClient(url string, timeout time.Duration, log *slog.Logger) *rpcClient {
	return &rpcClient{url: url, timeout: timeout, log: log}
}

// conn dials lazily: for HTTP this does no I/O, for a websocket rpc_url it
// connects on first use and again after the connection is lost.
func (c *rpcClient) conn(ctx context.Context) (*rpc.Client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.client != nil {
		return c.client, nil
	}
	opts := dialOptions(c.url)
	if c.own && strings.HasPrefix(c.url, "http") {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.DisableCompression = opts != nil // as dialOptions sets it for a local node
		tr.DialContext = c.arrivals.DialContext
		opts = []rpc.ClientOption{rpc.WithHTTPClient(&http.Client{Transport: tr})}
	} else if c.own {
		// go-ethereum's own dialer's settings, with the probe's dials.
		opts = append(opts, rpc.WithWebsocketDialer(websocket.Dialer{NetDialContext: c.arrivals.DialContext, Proxy: http.ProxyFromEnvironment,
			ReadBufferSize: 1024, WriteBufferSize: 1024}))
	}
	cl, err := rpc.DialOptions(ctx, c.url, opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: dial %s: %v", bchain.ErrNodeUnavailable, c.url, err)
	}
	c.client = cl
	return cl, nil
}

// probeClient is a client of the same node for the liveness probe: its
// own connections (its own HTTP transport, or its own websocket), so that
// a probe never queues behind user traffic: go-ethereum's default HTTP
// client shares http.DefaultTransport, and a websocket carries its calls
// one after another.
func (c *rpcClient) probeClient() *rpcClient {
	return &rpcClient{url: c.url, timeout: c.timeout, log: c.log, own: true, arrivals: bchain.NewArrivalConns()}
}

// dialOptions turns off HTTP compression for a node on this host: there
// the answers (blocks, receipts, traces) cost the node and the indexer
// more CPU to gzip and gunzip than they save in transfer.
func dialOptions(rawURL string) []rpc.ClientOption {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return nil
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableCompression = true
	return []rpc.ClientOption{rpc.WithHTTPClient(&http.Client{Transport: tr})}
}

// reset drops a websocket connection that failed so the next call redials.
func (c *rpcClient) reset(cl *rpc.Client) {
	if strings.HasPrefix(c.url, "http") {
		return // HTTP clients have no connection state to lose
	}
	c.mu.Lock()
	if c.client == cl {
		c.client = nil
		cl.Close()
	}
	c.mu.Unlock()
}

func (c *rpcClient) close() {
	c.mu.Lock()
	if c.client != nil {
		c.client.Close()
		c.client = nil
	}
	c.mu.Unlock()
}

// call performs one request; result must be a pointer (json.RawMessage to
// decode later). A JSON null result leaves result untouched.
func (c *rpcClient) call(ctx context.Context, result any, method string, args ...any) error {
	cl, err := c.conn(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	err = cl.CallContext(ctx, result, method, args...)
	if err != nil {
		err = classify(method, err)
		if errors.Is(err, bchain.ErrNodeUnavailable) {
			c.reset(cl)
		}
	}
	return err
}

// batch sends several requests at once; per-element errors stay in the
// elements (already classified), a transport error is returned.
func (c *rpcClient) batch(ctx context.Context, elems []rpc.BatchElem) error {
	if len(elems) == 0 {
		return nil
	}
	cl, err := c.conn(ctx)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	if err := cl.BatchCallContext(ctx, elems); err != nil {
		err = classify(elems[0].Method+" (batch)", err)
		if errors.Is(err, bchain.ErrNodeUnavailable) {
			c.reset(cl)
		}
		return err
	}
	for i := range elems {
		if elems[i].Error != nil {
			elems[i].Error = classify(elems[i].Method, elems[i].Error)
		}
	}
	return nil
}

// classify turns a go-ethereum rpc error into a bchain one: an error object
// from the node becomes *bchain.RPCError; everything else (refused
// connection, HTTP error page, undecodable answer, timeout) means the node
// is not usable right now and wraps bchain.ErrNodeUnavailable.
func classify(method string, err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	var re rpc.Error
	if errors.As(err, &re) {
		var he rpc.HTTPError
		if !errors.As(err, &he) {
			if isUnfinalized(re.Error()) {
				return fmt.Errorf("%w: %s: the node has not accepted that block yet: %v", bchain.ErrNodeUnavailable, method, err)
			}
			return fmt.Errorf("%s: %w", method, &bchain.RPCError{Code: re.ErrorCode(), Message: re.Error()})
		}
	}
	return fmt.Errorf("%w: %s: %v", bchain.ErrNodeUnavailable, method, err)
}

// isUnfinalized reports Avalanche's answer for a block above the last one
// it accepted (a block it has but may still drop): not an error of the
// request, the block is to be asked for again later (Blockbook retries it
// too). Classed as the node not being ready, never as "no such block",
// which would read as a shorter chain and undo indexed blocks.
func isUnfinalized(msg string) bool {
	return strings.Contains(msg, "cannot query unfinalized data")
}

// isMethodNotFound reports whether the node does not implement the method
// (JSON-RPC -32601, or geth/erigon's wording behind other codes).
func isMethodNotFound(err error) bool {
	var re *bchain.RPCError
	if !errors.As(err, &re) {
		return false
	}
	if re.Code == -32601 {
		return true
	}
	m := strings.ToLower(re.Message)
	return strings.Contains(m, "not found") && strings.Contains(m, "method") ||
		strings.Contains(m, "does not exist") || strings.Contains(m, "not supported") ||
		strings.Contains(m, "unsupported method")
}

// isNull reports whether a raw JSON result is absent or null.
func isNull(r json.RawMessage) bool {
	s := strings.TrimSpace(string(r))
	return s == "" || s == "null"
}

// garbage reports an answer that does not decode as the method promises.
func garbage(method string, err error) error {
	return fmt.Errorf("%w: %s: unexpected answer: %v", bchain.ErrNodeUnavailable, method, err)
}
