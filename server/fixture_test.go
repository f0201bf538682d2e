package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/apitest"
)

// The REST, websocket and explorer fronts over apitest's fixture (a
// chaingen chain in a real index, an in-memory node and the real mempool):
// status codes, content types and one answer per route or method family,
// checked against chaingen's ledgers. The exact wire shapes are pinned by
// the e2e golden files.

func TestMain(m *testing.M) {
	code := m.Run()
	apitest.CloseShared()
	os.Exit(code)
}

// served is the fixture behind a public server with the websocket.
type served struct {
	f   *apitest.Fixture
	svc *api.UtxoService
	srv *httptest.Server
	ws  *Websocket
}

func newServed(t *testing.T) *served {
	t.Helper()
	f := apitest.Shared(t, apitest.Options{Mempool: true})
	svc := api.NewUtxoService(f.DB, f.Backend, nil, api.Config{
		BlockFilters: f.BlockFilters, MempoolFilters: apitest.MempoolFilters, Mempool: f.Mempool, Log: apitest.Quiet(),
		Build: api.BuildInfo{Version: "test", Host: "apitest"}, TxCache: f.DB,
	})
	ws := NewWebsocket(svc, WebsocketConfig{EnableSubNewTx: true}, apitest.Quiet(), prometheus.NewRegistry())
	ctx, cancel := context.WithCancel(context.Background())
	go ws.Run(ctx)
	p := NewPublic(svc, PublicConfig{Websocket: ws}, apitest.Quiet(), prometheus.NewRegistry())
	s := &served{f: f, svc: svc, srv: httptest.NewServer(p.Handler()), ws: ws}
	t.Cleanup(func() {
		_ = p.Shutdown(context.Background())
		s.srv.Close()
		cancel()
	})
	return s
}

// do sends a request and returns the status, the content type and the body.
func (s *served) do(t *testing.T, method, path, body string) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), b
}

// decode unmarshals an answer or fails the test.
func decode[T any](t *testing.T, what string, body []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%s: %v in %s", what, err, body)
	}
	return v
}
