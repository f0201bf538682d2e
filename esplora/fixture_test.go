package esplora_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/esplora"
	"github.com/openexplorer/blockbook/tools/apitest"
)

// Tests of the Esplora front over apitest's fixture: a chaingen regtest
// chain indexed by the real index code, an in-memory node and the real
// mempool. Expected values come from the raw chain (scriptOracle and
// apitest's oracle), never from the code under test.

func TestMain(m *testing.M) {
	code := m.Run()
	apitest.CloseShared()
	os.Exit(code)
}

type fixture struct {
	*apitest.Fixture
	svc    *api.UtxoService
	srv    *esplora.Server
	oracle *scriptOracle
}

// newFixture builds the front over the shared fixture with its mempool.
// The oracle holds each script's history from the raw chain.
func newFixture(t *testing.T, opts esplora.Options) *fixture {
	t.Helper()
	f := apitest.Shared(t, apitest.Options{Mempool: true})
	cfg := api.Config{
		BlockFilters: f.BlockFilters, MempoolFilters: apitest.MempoolFilters, Log: apitest.Quiet(),
		Build: api.BuildInfo{Version: "test", Host: "apitest"}, TxCache: f.DB, Mempool: f.Mempool,
	}
	svc := api.NewUtxoService(f.DB, f.Backend, nil, cfg)
	o := newScriptOracle(t, f)
	scripts := svc.Capabilities().Scripts
	if scripts == nil {
		t.Fatal("the Bitcoin-type service has no script queries")
	}
	opts.Log = apitest.Quiet()
	return &fixture{Fixture: f, svc: svc, srv: esplora.New(svc, scripts, svc, opts), oracle: o}
}

// get answers a GET of path on the front.
func (f *fixture) get(t *testing.T, path string) (int, string) {
	t.Helper()
	return f.do(t, http.MethodGet, path, "")
}

func (f *fixture) do(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	rec := httptest.NewRecorder()
	f.srv.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// getJSON requires a 200 and decodes the answer into v.
func (f *fixture) getJSON(t *testing.T, path string, v any) {
	t.Helper()
	code, body := f.get(t, path)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, code, body)
	}
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("GET %s: %v in %s", path, err, body)
	}
}

// wantError requires an error answer with its status and text.
func (f *fixture) wantError(t *testing.T, method, path, body string, status int, text string) {
	t.Helper()
	code, got := f.do(t, method, path, body)
	if code != status || !strings.HasPrefix(got, text) {
		t.Errorf("%s %s = %d %q, want %d %q", method, path, code, got, status, text)
	}
}

// scriptOracle knows each script's history from the raw chain and the
// node's pending txs.
type scriptOracle struct {
	hist  map[string][]api.ScriptTx // confirmed in chain order, then pending in mempool order
	funds map[string][]wire.OutPoint
	outs  map[wire.OutPoint]*wire.TxOut
	at    map[wire.OutPoint]uint32 // height of the funding tx (0: pending)
	spent map[wire.OutPoint]bool   // spent by a confirmed tx
	pspnt map[wire.OutPoint]bool   // spent by a pending tx
	ptxs  map[bchain.Hash]bool
}

func newScriptOracle(t *testing.T, f *apitest.Fixture) *scriptOracle {
	t.Helper()
	o := &scriptOracle{hist: map[string][]api.ScriptTx{}, funds: map[string][]wire.OutPoint{},
		outs: map[wire.OutPoint]*wire.TxOut{}, at: map[wire.OutPoint]uint32{}, spent: map[wire.OutPoint]bool{},
		pspnt: map[wire.OutPoint]bool{}, ptxs: map[bchain.Hash]bool{}}
	add := func(tx *wire.MsgTx, height uint32, pos int) {
		txid := hashOf(tx.TxHash().String())
		touched := map[string]bool{}
		for _, in := range tx.TxIn {
			prev, ok := o.outs[in.PreviousOutPoint]
			if !ok {
				continue
			}
			if height == 0 {
				o.pspnt[in.PreviousOutPoint] = true
			} else {
				o.spent[in.PreviousOutPoint] = true
			}
			touched[string(prev.PkScript)] = true
		}
		for n, out := range tx.TxOut {
			op := wire.OutPoint{Hash: tx.TxHash(), Index: uint32(n)}
			o.outs[op], o.at[op] = out, height
			o.funds[string(out.PkScript)] = append(o.funds[string(out.PkScript)], op)
			touched[string(out.PkScript)] = true
		}
		for s := range touched {
			e := api.ScriptTx{Txid: txid, Height: height, Pos: pos}
			if height == 0 {
				e.Pos = -1
				o.ptxs[txid] = true
			}
			o.hist[s] = append(o.hist[s], e)
		}
	}
	for h, b := range f.Gen.Blocks() {
		if h == 0 {
			continue
		}
		for pos, tx := range b.Transactions {
			add(tx, uint32(h), pos)
		}
	}
	for _, tx := range f.Pending {
		add(tx, 0, -1)
	}
	return o
}

func hashOf(s string) bchain.Hash {
	h, err := bchain.ParseHash(s)
	if err != nil {
		panic(err)
	}
	return h
}

func (o *scriptOracle) ScriptByHash(_ context.Context, sh [32]byte) ([]byte, bool, error) {
	for s := range o.hist {
		if sha256Of([]byte(s)) == sh {
			return []byte(s), true, nil
		}
	}
	return nil, false, nil
}

func (o *scriptOracle) ScriptHistory(_ context.Context, script []byte, limit int) ([]api.ScriptTx, error) {
	h := o.hist[string(script)]
	if len(h) > limit {
		return nil, api.ErrTooManyTxs
	}
	return slices.Clone(h), nil
}

func (o *scriptOracle) ScriptBalance(_ context.Context, script []byte) (*api.ScriptBalance, error) {
	var b api.ScriptBalance
	for _, e := range o.hist[string(script)] {
		if e.Pos < 0 {
			b.Mempool.TxCount++
		} else {
			b.Chain.TxCount++
		}
	}
	for _, op := range o.funds[string(script)] {
		v := o.outs[op].Value
		st := &b.Chain
		if o.at[op] == 0 {
			st = &b.Mempool
		}
		st.FundedTxoCount++
		st.FundedTxoSum += v
		if o.spent[op] {
			b.Chain.SpentTxoCount++
			b.Chain.SpentTxoSum += v
		}
		if o.pspnt[op] {
			b.Mempool.SpentTxoCount++
			b.Mempool.SpentTxoSum += v
		}
	}
	return &b, nil
}

func (o *scriptOracle) ScriptUtxos(_ context.Context, script []byte) ([]api.ScriptUtxo, error) {
	var out []api.ScriptUtxo
	for _, op := range o.funds[string(script)] {
		if o.spent[op] || o.pspnt[op] || bytes.HasPrefix(script, []byte{0x6a}) {
			continue
		}
		out = append(out, api.ScriptUtxo{Txid: hashOf(op.Hash.String()), Vout: op.Index, Height: o.at[op], Value: o.outs[op].Value})
	}
	return out, nil
}

func (o *scriptOracle) BlockHeaders(context.Context, uint32, int) ([][]byte, error) { return nil, nil }
func (o *scriptOracle) BlockTxids(context.Context, uint32) ([]bchain.Hash, error)   { return nil, nil }
func (o *scriptOracle) TxPosition(context.Context, bchain.Hash) (uint32, int, bool, error) {
	return 0, 0, false, nil
}

// esploraOptions are the front's options in the tests (address search off).
func esploraOptions() esplora.Options { return esplora.Options{} }
