package eth

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// fakeNode is a scripted JSON-RPC server: each method answers from a
// handler; unknown methods get -32601 like a real node.
type fakeNode struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	handlers map[string]func(params []json.RawMessage) (any, *rpcErrObj)
	calls    map[string]int
}

type rpcErrObj struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type rpcReq struct {
	ID     json.RawMessage   `json:"id"`
	Method string            `json:"method"`
	Params []json.RawMessage `json:"params"`
}

type rpcResp struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcErrObj      `json:"error,omitempty"`
}

func newFakeNode(t *testing.T) *fakeNode {
	f := &fakeNode{t: t, handlers: map[string]func([]json.RawMessage) (any, *rpcErrObj){}, calls: map[string]int{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeNode) handle(method string, h func(params []json.RawMessage) (any, *rpcErrObj)) {
	f.mu.Lock()
	f.handlers[method] = h
	f.mu.Unlock()
}

func (f *fakeNode) answer(method string, v any) {
	f.handle(method, func([]json.RawMessage) (any, *rpcErrObj) { return v, nil })
}

func (f *fakeNode) count(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

func (f *fakeNode) one(r rpcReq) rpcResp {
	f.mu.Lock()
	h := f.handlers[r.Method]
	f.calls[r.Method]++
	f.mu.Unlock()
	resp := rpcResp{JSONRPC: "2.0", ID: r.ID}
	if h == nil {
		resp.Error = &rpcErrObj{Code: -32601, Message: "the method " + r.Method + " does not exist/is not available"}
		return resp
	}
	res, e := h(r.Params)
	if e != nil {
		resp.Error = e
	} else if res == nil {
		resp.Result = json.RawMessage("null")
	} else {
		resp.Result = res
	}
	return resp
}

func (f *fakeNode) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		var reqs []rpcReq
		if err := json.Unmarshal(body, &reqs); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		out := make([]rpcResp, len(reqs))
		for i, q := range reqs {
			out[i] = f.one(q)
		}
		writeJSON(f.t, w, out)
		return
	}
	var q rpcReq
	if err := json.Unmarshal(body, &q); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	writeJSON(f.t, w, f.one(q))
}

// writeJSON answers a test server's request with v as JSON. A value that
// does not encode is a bug in the test; a failed write means the client
// hung up (a cancelled or timed-out call), which it sees on its own.
func writeJSON(t *testing.T, w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		t.Errorf("test server: encoding the answer: %v", err)
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if _, err := w.Write(b); err != nil {
		t.Logf("test server: writing the answer: %v", err)
	}
}

func discardLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

// newTestNode builds a Node for coin against url, with raw extra config.
func newTestNode(t *testing.T, coin, url string, extra map[string]any) *Node {
	t.Helper()
	doc := map[string]any{"coin_name": coin, "rpc_url": url, "rpc_timeout": 5}
	for k, v := range extra {
		doc[k] = v
	}
	raw, _ := json.Marshal(doc)
	cfg, err := bchain.ParseConfig(raw)
	if err != nil {
		t.Fatal(err)
	}
	n, err := NewNode(coin, cfg, discardLog())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.rpc.close)
	return n
}
