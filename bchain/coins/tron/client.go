package tron

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// maxAnswer bounds a node answer read into memory (a full block with its
// txs is a few MB on mainnet).
const maxAnswer = 64 << 20

// httpAPI posts JSON to java-tron's HTTP API (/wallet/... on the full
// node's port, /walletsolidity/... on the solidity port), as Blockbook's
// client does: POST with a JSON body, any status >= 300 an error.
type httpAPI struct {
	base   string
	client *http.Client
}

func (h *httpAPI) post(ctx context.Context, path string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.client.Do(req)
	if err != nil {
		return fmt.Errorf("tron %s: %w", path, err)
	}
	defer func() {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswer))
		_ = resp.Body.Close()
	}()
	if resp.StatusCode >= 300 {
		return fmt.Errorf("tron %s: HTTP status %d", path, resp.StatusCode)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
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
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": r.id.Add(1), "method": method, "params": params})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return fmt.Errorf("tron %s: %w", method, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode >= 300 {
		return fmt.Errorf("tron %s: HTTP status %d", method, resp.StatusCode)
	}
	var ans struct {
		Result json.RawMessage `json:"result"`
		Error  *RPCError       `json:"error"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxAnswer)).Decode(&ans); err != nil {
		return fmt.Errorf("tron %s: %w", method, err)
	}
	if ans.Error != nil {
		return ans.Error
	}
	if len(ans.Result) == 0 {
		ans.Result = json.RawMessage("null")
	}
	return json.Unmarshal(ans.Result, out)
}

func newHTTPClient(timeout time.Duration) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 16
	return &http.Client{Timeout: timeout, Transport: t}
}
