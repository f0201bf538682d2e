package mesh_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/mesh"
	"github.com/openexplorer/blockbook/tools/apitest"
	"github.com/openexplorer/blockbook/tools/meshcheck"
)

// Tests of the Mesh front over apitest's fixture: a chaingen regtest chain
// (every script kind, OP_RETURNs, pending txs) indexed by the real index
// code. Every answer is validated against the Mesh specification with
// closed schemas (tools/meshcheck); expected values come from the raw
// chain (chaingen's ledger), never from the code under test.

func TestMain(m *testing.M) {
	code := m.Run()
	apitest.CloseShared()
	os.Exit(code)
}

type fixture struct {
	*apitest.Fixture
	srv    *mesh.Server
	client *meshcheck.Client
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureOver(t, apitest.Shared(t, apitest.Options{Mempool: true}), nil)
}

// newFixtureOver serves f's index; esq, when given, replaces the
// service's block lookups (wrap names the service).
func newFixtureOver(t *testing.T, f *apitest.Fixture, esq func(svc api.EsploraQueries) api.EsploraQueries) *fixture {
	t.Helper()
	cfg := api.Config{Log: apitest.Quiet(), Build: api.BuildInfo{Version: "test", Host: "apitest"},
		TxCache: f.DB, Limits: api.Limits{MaxUtxos: 1000}}
	if f.Mempool != nil {
		cfg.Mempool = f.Mempool
	}
	svc := api.NewUtxoService(f.DB, f.Backend, nil, cfg)
	var lookups api.EsploraQueries = svc
	if esq != nil {
		lookups = esq(svc)
	}
	srv := mesh.New(svc, svc, lookups, mesh.Options{Blockchain: "Bitcoin", Network: "regtest", Symbol: "BTC", Decimals: 8,
		Log: apitest.Quiet()})
	k, err := meshcheck.New()
	if err != nil {
		t.Fatal(err)
	}
	fx := &fixture{Fixture: f, srv: srv}
	fx.client = &meshcheck.Client{Checker: k, Post: fx.post,
		Network: map[string]any{"blockchain": "Bitcoin", "network": "regtest"}}
	return fx
}

// post sends a JSON body through the handler.
func (f *fixture) post(path string, body any) (int, []byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, nil, err
	}
	return f.raw(http.MethodPost, path, b)
}

func (f *fixture) raw(method, path string, body []byte) (int, []byte, error) {
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	rec := httptest.NewRecorder()
	f.srv.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes(), nil
}
