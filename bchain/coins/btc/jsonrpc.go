package btc

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/bchain"
)

// maxResponseBytes caps what we read from the node: a raw 4 MB block is 8 MB
// of hex, and a large mempool listing is tens of MB.
const maxResponseBytes = 256 << 20

// JSON-RPC error codes shared by Bitcoin Core and btcd that we act on.
const (
	codeMisc         = -1  // btcd: "Block number out of range"
	codeInvalidParam = -8  // Core: "Block height out of range"
	codeNotFound     = -5  // both: unknown block or tx
	codeInWarmup     = -28 // Core: still loading
)

// rpcClient is a JSON-RPC 1.0 client over HTTP with timeouts, bounded
// retries with backoff for transport failures, and typed errors.
type rpcClient struct {
	url, user, pass string
	http            *http.Client
	timeout         time.Duration
	retries         int
	backoff         time.Duration
	log             *slog.Logger
	latency         *prometheus.HistogramVec
	errors          *prometheus.CounterVec
	id              atomic.Uint64
	arrivals        *bchain.ArrivalConns // the probe's client only: its connections, for AnswerOwed
}

type rpcRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      uint64 `json:"id"`
	Method  string `json:"method"`
	Params  []any  `json:"params"`
}

type rpcResponse struct {
	hex    []byte          // the decoded result, when the hex fast path matched
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func newRPCClient(url, user, pass string, timeout time.Duration, log *slog.Logger, reg prometheus.Registerer) *rpcClient {
	c := &rpcClient{
		url: url, user: user, pass: pass, timeout: timeout, retries: 3, backoff: 200 * time.Millisecond, log: log,
		http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32, IdleConnTimeout: 90 * time.Second}},
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "blockbook_rpc_latency_seconds", Help: "Latency of node RPC calls by method.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, []string{"method"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blockbook_rpc_errors_total", Help: "Failed node RPC calls by method and kind.",
		}, []string{"method", "kind"}),
	}
	if reg != nil {
		reg.MustRegister(c.latency, c.errors)
	}
	return c
}

// probeClient is a client of the same node for the liveness probe: its
// own connections (a probe never waits for one that user traffic holds),
// no retries (a failed probe is the verdict), no metrics of its own.
func (c *rpcClient) probeClient() *rpcClient {
	arrivals := bchain.NewArrivalConns()
	return &rpcClient{
		url: c.url, user: c.user, pass: c.pass, timeout: c.timeout, retries: 0, backoff: c.backoff, log: c.log,
		http:     &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2, IdleConnTimeout: 90 * time.Second, DialContext: arrivals.DialContext}},
		arrivals: arrivals,
		latency:  prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "blockbook_probe_rpc_latency_seconds", Help: "Latency of the liveness probe's node calls (not registered)."}, []string{"method"}),
		errors:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: "blockbook_probe_rpc_errors_total", Help: "Failed liveness probe node calls (not registered)."}, []string{"method", "kind"}),
	}
}

// call invokes method and decodes its result into out (when non-nil).
// Transport failures and garbage answers are retried a few times with
// backoff and then reported as bchain.ErrNodeUnavailable; an error object
// from the node is returned at once as *bchain.RPCError.
func (c *rpcClient) call(ctx context.Context, method string, params []any, out any) error {
	if params == nil {
		params = []any{}
	}
	body, err := json.Marshal(rpcRequest{JSONRPC: "1.0", ID: c.id.Add(1), Method: method, Params: params})
	if err != nil {
		return fmt.Errorf("rpc %s: encode request: %w", method, err)
	}
	// rpc_timeout bounds the call, retries included: a request that
	// reached a node which then froze ends at rpc_timeout, not when the
	// node thaws (each attempt had its own timeout, four in a row).
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	delay := c.backoff
	for attempt := 0; ; attempt++ {
		start := time.Now()
		_, wantHex := out.(*hexBytes)
		res, err := c.roundTrip(ctx, body, wantHex)
		if errors.Is(err, errCredentials) {
			c.errors.WithLabelValues(method, "auth").Inc()
			return fmt.Errorf("rpc %s: %w", method, err) // retrying cannot help
		}
		c.latency.WithLabelValues(method).Observe(time.Since(start).Seconds())
		if err == nil {
			if res.Error != nil {
				c.errors.WithLabelValues(method, "rpc").Inc()
				if res.Error.Code == codeInWarmup {
					err = fmt.Errorf("%w: %s", bchain.ErrNodeUnavailable, res.Error.Message)
				} else {
					return &bchain.RPCError{Code: res.Error.Code, Message: res.Error.Message}
				}
			} else {
				if out == nil {
					return nil
				}
				if hb, ok := out.(*hexBytes); ok && res.hex != nil {
					*hb = res.hex
					return nil
				}
				if err = json.Unmarshal(res.Result, out); err == nil {
					return nil
				}
				err = fmt.Errorf("%w: unexpected result: %v", bchain.ErrNodeUnavailable, err)
			}
		}
		c.errors.WithLabelValues(method, "transport").Inc()
		if ctx.Err() != nil {
			return fmt.Errorf("rpc %s: %w: %w", method, err, ctx.Err())
		}
		if attempt >= c.retries {
			return fmt.Errorf("rpc %s: %w", method, err)
		}
		c.log.Debug("rpc retry", "method", method, "attempt", attempt+1, "err", err)
		select {
		case <-ctx.Done():
			return fmt.Errorf("rpc %s: %w: %w", method, err, ctx.Err())
		case <-time.After(delay):
		}
		delay *= 2
	}
}

// roundTrip does one HTTP exchange. Its errors wrap ErrNodeUnavailable.
// With wantHex, a result that is a hex string is decoded without the generic
// JSON decoder (raw blocks are megabytes of hex).
func (c *rpcClient) roundTrip(ctx context.Context, body []byte, wantHex bool) (*rpcResponse, error) {
	data, status, err := c.post(ctx, body)
	if err != nil {
		return nil, err
	}
	if wantHex {
		if b, ok := fastHexResult(data); ok {
			return &rpcResponse{hex: b}, nil
		}
	}
	var res rpcResponse
	// Core answers RPC errors with HTTP 404/500 and a JSON body, so the
	// body decides, not the status.
	if err := json.Unmarshal(data, &res); err != nil || (res.Error == nil && res.Result == nil) {
		snippet := data
		if len(snippet) > 120 {
			snippet = snippet[:120]
		}
		return nil, fmt.Errorf("%w: HTTP %d with a body that is not a JSON-RPC response: %q", bchain.ErrNodeUnavailable, status, snippet)
	}
	return &res, nil
}

// post sends one request body and returns the response body and status.
// Its errors wrap ErrNodeUnavailable (and errCredentials when refused).
func (c *rpcClient) post(ctx context.Context, body []byte) ([]byte, int, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", bchain.ErrNodeUnavailable, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.user != "" || c.pass != "" {
		req.SetBasicAuth(c.user, c.pass)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", bchain.ErrNodeUnavailable, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, 0, fmt.Errorf("%w: reading response: %w", bchain.ErrNodeUnavailable, err)
	}
	if len(data) > maxResponseBytes {
		return nil, 0, fmt.Errorf("%w: response larger than %d bytes", bchain.ErrNodeUnavailable, maxResponseBytes)
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return nil, 0, fmt.Errorf("%w: %w (HTTP %d): check rpc_user/rpc_pass", bchain.ErrNodeUnavailable, errCredentials, resp.StatusCode)
	}
	return data, resp.StatusCode, nil
}

// hexBytes is a result that the node sends as a hex string (raw blocks and
// txs); it decodes to the bytes.
type hexBytes []byte

func (h *hexBytes) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	d, err := hex.DecodeString(s)
	if err != nil {
		return fmt.Errorf("invalid hex: %w", err)
	}
	*h = d
	return nil
}

// fastHexResult decodes a response {"result":"<hex>","error":null,...}
// without running the generic JSON decoder over the hex: it locates the
// result string, hex-decodes it, and checks that the response minus the hex
// is a well-formed JSON-RPC answer without an error. Any other shape
// reports false and is decoded the generic way.
func fastHexResult(data []byte) ([]byte, bool) {
	const key = `"result":"`
	i := bytes.Index(data, []byte(key))
	if i < 0 {
		return nil, false
	}
	start := i + len(key)
	n := bytes.IndexByte(data[start:], '"')
	if n < 0 || n%2 != 0 {
		return nil, false
	}
	out := make([]byte, n/2)
	if _, err := hex.Decode(out, data[start:start+n]); err != nil {
		return nil, false
	}
	rest := append(append(make([]byte, 0, len(data)-n), data[:start]...), data[start+n:]...)
	var r struct {
		Result *string          `json:"result"`
		Error  *json.RawMessage `json:"error"`
	}
	if json.Unmarshal(rest, &r) != nil || r.Result == nil || (r.Error != nil && string(*r.Error) != "null") {
		return nil, false
	}
	return out, true
}

// errCredentials: the node refused our user and password.
var errCredentials = errors.New("the node refused our RPC credentials")

// isRPCCode reports whether err is a node error with one of the codes.
func isRPCCode(err error, codes ...int) bool {
	var re *bchain.RPCError
	if !errors.As(err, &re) {
		return false
	}
	for _, c := range codes {
		if re.Code == c {
			return true
		}
	}
	return false
}
