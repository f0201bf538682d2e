package rpcfault

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// upstream answers every JSON-RPC call with a string result, as
// getbestblockhash does, and counts the calls.
func upstream(t *testing.T) (*httptest.Server, *int) {
	t.Helper()
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if u, p, ok := r.BasicAuth(); !ok || u != "user" || p != "pass" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"result":"00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff","error":null,"id":1}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func start(t *testing.T) (*Proxy, *int) {
	t.Helper()
	up, calls := upstream(t)
	p, err := Start(up.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p, calls
}

// call posts one JSON-RPC request through the proxy.
func call(ctx context.Context, p *Proxy) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL,
		strings.NewReader(`{"jsonrpc":"1.0","id":1,"method":"getbestblockhash","params":[]}`))
	if err != nil {
		return 0, "", err
	}
	req.SetBasicAuth("user", "pass")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// rpcResult decodes a body as a JSON-RPC answer with a string result, the
// way a client expecting a block hash does.
func rpcResult(body string) (string, error) {
	var r struct {
		Result *string          `json:"result"`
		Error  *json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		return "", err
	}
	if r.Result == nil {
		return "", errors.New("no result")
	}
	return *r.Result, nil
}

func TestPassThrough(t *testing.T) {
	p, calls := start(t)
	code, body, err := call(t.Context(), p)
	if err != nil || code != 200 {
		t.Fatalf("%d %q %v", code, body, err)
	}
	if res, err := rpcResult(body); err != nil || len(res) != 64 {
		t.Fatalf("result %q %v", res, err)
	}
	if *calls != 1 || p.Count(None) != 1 {
		t.Fatalf("upstream calls %d, forwarded %d", *calls, p.Count(None))
	}
}

// Every garbage kind gives an answer that a JSON-RPC client cannot use as
// a string result, and the broken ones are really broken the way they say.
func TestGarbageKinds(t *testing.T) {
	p, _ := start(t)
	for _, c := range []struct {
		kind     Kind
		code     int
		wantBody string
	}{
		{NotJSON, 200, "everything is fine"},
		{HTMLError, 502, "<html>"},
		{WrongShape, 200, `"items"`},
		{WrongType, 200, `"result":12345`},
		{Truncated, 200, `{"result":"00ff`},
		{HTTP500, 500, "Internal Server Error"},
		{HTTP503, 503, "Service Unavailable"},
	} {
		t.Run(c.kind.String(), func(t *testing.T) {
			p.Set(Fault{Kind: c.kind})
			code, body, err := call(t.Context(), p)
			if err != nil {
				t.Fatalf("transport error %v", err)
			}
			if code != c.code || !strings.Contains(body, c.wantBody) {
				t.Fatalf("got %d %q, want %d with %q", code, body, c.code, c.wantBody)
			}
			if res, err := rpcResult(body); err == nil {
				t.Fatalf("a client would accept %q as the result", res)
			}
			if p.Count(c.kind) != 1 {
				t.Fatalf("count %d", p.Count(c.kind))
			}
		})
	}
}

func TestCutConnection(t *testing.T) {
	p, _ := start(t)
	p.Set(Fault{Kind: CutConnection})
	code, body, err := call(t.Context(), p)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("got %d %q %v, want the body cut short (unexpected EOF)", code, body, err)
	}
	if !strings.HasPrefix(body, `{"result":"00ff`) || len(body) > 60 {
		t.Fatalf("partial body %q", body)
	}
}

// A stalled request gets nothing until its client gives up, and a request
// still waiting when the fault ends gets the node's answer, late.
func TestStall(t *testing.T) {
	p, calls := start(t)
	p.Set(Fault{Kind: Stall})
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if _, _, err := call(ctx, p); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("stalled call ended with %v, want the client's deadline", err)
	}
	if *calls != 0 {
		t.Fatalf("the stalled call reached the node")
	}
	done := make(chan error, 1)
	go func() {
		_, body, err := call(t.Context(), p)
		if err == nil {
			_, err = rpcResult(body)
		}
		done <- err
	}()
	for p.Count(Stall) < 2 {
		time.Sleep(5 * time.Millisecond)
	}
	p.Clear()
	if err := <-done; err != nil {
		t.Fatalf("released call: %v", err)
	}
}

func TestLag(t *testing.T) {
	p, _ := start(t)
	p.Set(Fault{Kind: Lag, Delay: 150 * time.Millisecond})
	start := time.Now()
	code, body, err := call(t.Context(), p)
	if err != nil || code != 200 {
		t.Fatalf("%d %q %v", code, body, err)
	}
	if _, err := rpcResult(body); err != nil {
		t.Fatalf("lagged answer is damaged: %v", err)
	}
	// A lower bound only: the answer cannot have come before the delay.
	if took := time.Since(start); took < 150*time.Millisecond {
		t.Fatalf("answered after %v, before the delay", took)
	}
}

// A node that is down (nothing listens) shows through as a dropped
// connection, not as an answer made up by the proxy.
func TestNodeDown(t *testing.T) {
	up, _ := upstream(t)
	p, err := Start(up.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	up.Close()
	if code, body, err := call(t.Context(), p); err == nil {
		t.Fatalf("got %d %q with the node down", code, body)
	}
}

func TestWrongTypeKeepsErrors(t *testing.T) {
	in := []byte(`{"result":null,"error":{"code":-5,"message":"not found"},"id":3}`)
	if got := wrongType(in); string(got) != string(in) {
		t.Fatalf("an error answer was changed: %s", got)
	}
	if got := wrongType([]byte(`{"result":{"height":3},"error":null,"id":3}`)); !strings.Contains(string(got), `"result":"not what`) {
		t.Fatalf("object result: %s", got)
	}
	if _, err := Start("ftp://x"); err == nil {
		t.Fatal("a non-http target was accepted")
	}
	if Kind(99).String() != "kind(99)" || len(Kinds()) != int(numKinds)-1 {
		t.Fatal("kind names")
	}
}
