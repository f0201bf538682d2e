package tron

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/openexplorer/blockbook/bchain"
)

// defaultMaxAnswer bounds a node answer read into memory (a full block
// with its txs is a few MB on mainnet).
const defaultMaxAnswer = 64 << 20

// maxAnswer is the bound in force: atomic, since a test lowers it while
// other goroutines may read it.
var maxAnswer atomic.Int64

func init() { maxAnswer.Store(defaultMaxAnswer) }

// httpAPI posts JSON to java-tron's HTTP API (/wallet/... on the full
// node's port, /walletsolidity/... on the solidity port), as Blockbook's
// client does: POST with a JSON body, any status >= 300 an error.
type httpAPI struct {
	base   string
	client *http.Client
}

func (h *httpAPI) post(ctx context.Context, path string, body, out any) error {
	raw, err := postJSON(ctx, h.client, h.base+path, body)
	if err != nil {
		return fmt.Errorf("tron %s: %w", path, err)
	}
	// java-tron answers errors with status 200 and {"Error": "..."}.
	var e struct {
		Error string `json:"Error"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Error != "" {
		return fmt.Errorf("tron %s: %s", path, e.Error)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("tron %s: %w", path, err)
	}
	return nil
}

// jsonRPC calls java-tron's Ethereum-compatible JSON-RPC (/jsonrpc).
type jsonRPC struct {
	url    string
	client *http.Client
	id     atomic.Uint64
}

// RPCError is an error object of a JSON-RPC answer.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *RPCError) Error() string {
	return fmt.Sprintf("tron json-rpc error %d: %s", e.Code, e.Message)
}

func (r *jsonRPC) call(ctx context.Context, out any, method string, params ...any) error {
	if params == nil {
		params = []any{}
	}
	raw, err := postJSON(ctx, r.client, r.url, map[string]any{"jsonrpc": "2.0", "id": r.id.Add(1), "method": method, "params": params})
	if err != nil {
		return fmt.Errorf("tron %s: %w", method, err)
	}
	var ans struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil {
		return fmt.Errorf("tron %s: %w", method, err)
	}
	if ans.Error != nil { // a revert too: the node's own reason
		return &bchain.RPCError{Code: ans.Error.Code, Message: ans.Error.Message}
	}
	if len(ans.Result) == 0 {
		ans.Result = json.RawMessage("null")
	}
	return json.Unmarshal(ans.Result, out)
}

// ErrTooLarge is an answer over maxAnswer bytes: refused, not cut, since
// a cut answer would decode wrong or not at all.
var ErrTooLarge = errors.New("node answer too large")

// postJSON posts body as JSON and reads the answer (at most maxAnswer
// bytes, ErrTooLarge beyond); a status of 300 or more is an error.
func postJSON(ctx context.Context, c *http.Client, url string, body any) ([]byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	limit := maxAnswer.Load()
	// Drained so that the connection is reused.
	defer func() {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, limit))
		_ = resp.Body.Close()
	}()
	if resp.StatusCode >= 300 {
		return nil, fmt.Errorf("HTTP status %d", resp.StatusCode)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(raw)) > limit {
		return nil, fmt.Errorf("%w: over %d bytes", ErrTooLarge, limit)
	}
	return raw, nil
}

func newHTTPClient(timeout time.Duration) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 16
	return &http.Client{Timeout: timeout, Transport: t}
}
