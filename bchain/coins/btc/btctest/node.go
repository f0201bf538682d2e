package btctest

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// RPCError is a JSON-RPC error a stand-in node answers with.
type RPCError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// MethodNotFound is what Core-derived nodes answer for a method they lack.
var MethodNotFound = &RPCError{Code: -32601, Message: "Method not found"}

// Answer decides a stand-in node's reply to one call: a result (any value
// JSON encodes, json.RawMessage as it is) or an error.
type Answer func(method string, params []any) (any, *RPCError)

// Recorded answers each method with its recorded result and any other
// with MethodNotFound.
func Recorded(results map[string]json.RawMessage) Answer {
	return func(method string, _ []any) (any, *RPCError) {
		if res, ok := results[method]; ok {
			return res, nil
		}
		return nil, MethodNotFound
	}
}

// Node stands in for a coin's JSON-RPC node where none can run in the test
// suite. It replies as Core-derived nodes do: the result with HTTP 200, an
// error with HTTP 404 (unknown method) or 500, and records the methods
// called. It stops when the test ends.
type Node struct {
	URL    string
	srv    *httptest.Server
	answer Answer
	mu     sync.Mutex
	calls  []string
}

// NewNode starts a stand-in node replying with answer.
func NewNode(t testing.TB, answer Answer) *Node {
	t.Helper()
	n := &Node{answer: answer}
	n.srv = httptest.NewServer(n)
	t.Cleanup(n.srv.Close)
	n.URL = n.srv.URL
	return n
}

// Close stops the node before the test ends (a node that went away).
func (n *Node) Close() { n.srv.Close() }

// ServeHTTP answers one JSON-RPC request.
func (n *Node) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params []any           `json:"params"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	n.mu.Lock()
	n.calls = append(n.calls, req.Method)
	n.mu.Unlock()
	res, rpcErr := n.answer(req.Method, req.Params)
	resp := struct {
		Result any             `json:"result"`
		Error  *RPCError       `json:"error"`
		ID     json.RawMessage `json:"id"`
	}{res, rpcErr, req.ID}
	w.Header().Set("Content-Type", "application/json")
	switch {
	case rpcErr == nil:
	case rpcErr.Code == MethodNotFound.Code:
		w.WriteHeader(http.StatusNotFound)
	default:
		w.WriteHeader(http.StatusInternalServerError)
	}
	_ = json.NewEncoder(w).Encode(resp)
}

// Calls returns the methods called so far and forgets them.
func (n *Node) Calls() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := slices.Clone(n.calls)
	n.calls = nil
	return c
}

// Backend builds the backend of a config document (coin_name, rpc_url and
// any other keys) with a quiet logger, closed when the test ends.
func Backend(t testing.TB, doc map[string]any) (*bchain.Backend, error) {
	t.Helper()
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := bchain.ParseConfig(data)
	if err != nil {
		return nil, err
	}
	b, err := bchain.NewBackend(cfg, bchain.Env{Log: slog.New(slog.DiscardHandler)})
	if err == nil && b.Close != nil {
		t.Cleanup(func() { _ = b.Close() })
	}
	return b, err
}
