package btc

import (
	"bytes"
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/bchain"
)

// This file holds the fixture server that stands in for Bitcoin Core (and,
// with inline answers, for btcd): an httptest.Server that checks basic auth,
// decodes each JSON-RPC request, answers from a table keyed by method and
// params, records every call, and can inject transport failures.

// The fixture world (testdata/core/README.md): a mainnet node whose tip is
// block 170.
const (
	fxHash169  = "000000002a22cfee1f2c846adbd12b3e183d4f97683f85dad08a79780a84bd55"
	fxHash170  = "00000000d1145790a8694403d4063f323d499e655c83426834d4ce2f8dd4a2ee"
	fxTxid     = "f4184fc596403b9d638783cf57adfe4c75c605f6356fbc91338530e9831e9e16"
	fxCoinbase = "b1fea52486ce0c62bb442b530a3f0132b826c74e473d1f2c220bfa78111c5082"
	// fxUnknownTx is a txid the fixture node has never seen.
	fxUnknownTx = "0000000000000000000000000000000000000000000000000000000000c0ffee"
	// fxUnknownBlock is a block hash the fixture node has never seen.
	fxUnknownBlock = "00000000000000000000000000000000000000000000000000000000deadbeef"

	fxUser = "blockbook"
	fxPass = "correct horse battery staple"
)

func mustHash(t testing.TB, s string) bchain.Hash {
	t.Helper()
	h, err := bchain.ParseHash(s)
	if err != nil {
		t.Fatalf("bad hash %q: %v", s, err)
	}
	return h
}

// fault is a transport failure the fixture server can inject instead of a
// JSON-RPC answer.
type fault int

const (
	faultNone         fault = iota
	faultHTML500            // HTTP 500 with an HTML error page, as a reverse proxy sends
	faultHTML502            // HTTP 502 Bad Gateway HTML page
	faultWorkQueue          // HTTP 503 "Work queue depth exceeded", Core's answer when -rpcworkqueue is full
	faultTruncated          // HTTP 200 with the first half of a valid envelope
	faultGarbage            // HTTP 200 with a body that is not JSON
	faultEmptyBody          // HTTP 200 with an empty body
	faultEmptyObject        // HTTP 200 with "{}" (neither result nor error)
	faultCloseConn          // the connection is closed without an answer
	faultUnauthorized       // HTTP 401 with an empty body, as Core answers bad credentials
	faultForbidden          // HTTP 403, as Core answers a method outside -rpcwhitelist
)

func (f fault) String() string {
	return [...]string{"none", "html500", "html502", "work queue full", "truncated", "garbage", "empty body", "empty object",
		"connection close", "unauthorized", "forbidden"}[f]
}

// fxReply is one scripted answer.
type fxReply struct {
	Result json.RawMessage // the result when Error is nil
	Error  json.RawMessage // an error object, or nil
	Fault  fault
	// Raw, when set, is sent as the whole body with HTTP status Status
	// (default 200) instead of an envelope.
	Raw    []byte
	Status int
	// Delay holds the answer back; a negative delay never answers (until the
	// client gives up or the test ends).
	Delay time.Duration
}

// coreFixture loads testdata/core/<name>.json, which must be a JSON-RPC 1.0
// envelope with exactly the keys result, error and id.
func coreFixture(t testing.TB, name string) fxReply {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "core", name+".json"))
	if err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	var env map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&env); err != nil {
		t.Fatalf("fixture %s is not a JSON object: %v", name, err)
	}
	for _, k := range []string{"result", "error", "id"} {
		if _, ok := env[k]; !ok {
			t.Fatalf("fixture %s: envelope lacks %q", name, k)
		}
	}
	if len(env) != 3 {
		t.Fatalf("fixture %s: envelope has extra keys: %v", name, env)
	}
	r := fxReply{}
	if string(env["error"]) != "null" {
		var e struct {
			Code    *int    `json:"code"`
			Message *string `json:"message"`
		}
		if err := json.Unmarshal(env["error"], &e); err != nil || e.Code == nil || e.Message == nil {
			t.Fatalf("fixture %s: error is not {code, message}: %s", name, env["error"])
		}
		if string(env["result"]) != "null" {
			t.Fatalf("fixture %s: both result and error are set", name)
		}
		r.Error = compactJSON(t, env["error"])
		return r
	}
	r.Result = compactJSON(t, env["result"])
	return r
}

func compactJSON(t testing.TB, raw []byte) json.RawMessage {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatalf("compact %s: %v", raw, err)
	}
	return b.Bytes()
}

// resultReply answers with a literal JSON result.
func resultReply(result string) fxReply { return fxReply{Result: json.RawMessage(result)} }

// errorReply answers with a node error object.
func errorReply(code int, message string) fxReply {
	e, _ := json.Marshal(map[string]any{"code": code, "message": message})
	return fxReply{Error: e}
}

func faultReply(f fault) fxReply { return fxReply{Fault: f} }

// fxCall is one request the fixture server received.
type fxCall struct {
	Method  string
	Params  string // canonical JSON of the params array
	ID      json.RawMessage
	JSONRPC string
	AuthOK  bool
	// ContentType and HTTPMethod are recorded to check the request shape.
	ContentType, HTTPMethod string
	At                      time.Time
}

func (c fxCall) String() string { return c.Method + " " + c.Params }

// fxRoute is a queue of replies; the last one repeats.
type fxRoute struct {
	replies []fxReply
	next    int
}

func (r *fxRoute) take() fxReply {
	rep := r.replies[r.next]
	if r.next < len(r.replies)-1 {
		r.next++
	}
	return rep
}

// fixtureServer is a fake JSON-RPC node.
type fixtureServer struct {
	t          testing.TB
	srv        *httptest.Server
	user, pass string
	quit       chan struct{}

	mu        sync.Mutex
	exact     map[string]*fxRoute // method + " " + canonical params
	anyParams map[string]*fxRoute // method, whatever the params
	calls     []fxCall
	// arrived, when set, receives every call (without blocking) as soon as
	// it is decoded, before it is answered.
	arrived chan fxCall
}

func newFixtureServer(t testing.TB) *fixtureServer {
	t.Helper()
	fs := &fixtureServer{
		t: t, user: fxUser, pass: fxPass, quit: make(chan struct{}),
		exact: map[string]*fxRoute{}, anyParams: map[string]*fxRoute{},
	}
	fs.srv = httptest.NewServer(http.HandlerFunc(fs.serveHTTP))
	t.Cleanup(func() {
		close(fs.quit) // releases handlers that hold their answer back
		fs.srv.Close()
	})
	return fs
}

func (fs *fixtureServer) URL() string { return fs.srv.URL }

// canonicalParams renders a params array the same way for requests decoded
// off the wire and for table keys written in Go.
func canonicalParams(raw []byte) (string, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return "[]", nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var params []any
	if err := dec.Decode(&params); err != nil {
		return "", err
	}
	if params == nil {
		params = []any{}
	}
	out, err := json.Marshal(params)
	return string(out), err
}

// fxKey is the table key of method called with params.
func fxKey(method string, params ...any) string {
	if params == nil {
		params = []any{}
	}
	raw, err := json.Marshal(params)
	if err != nil {
		panic(err)
	}
	c, err := canonicalParams(raw)
	if err != nil {
		panic(err)
	}
	return method + " " + c
}

// on answers method called with exactly params by the replies, in turn.
func (fs *fixtureServer) on(method string, params []any, replies ...fxReply) {
	fs.t.Helper()
	if len(replies) == 0 {
		fs.t.Fatal("on: no replies")
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.exact[fxKey(method, params...)] = &fxRoute{replies: replies}
}

// onAny answers method, whatever its params, when no exact route matches.
func (fs *fixtureServer) onAny(method string, replies ...fxReply) {
	fs.t.Helper()
	if len(replies) == 0 {
		fs.t.Fatal("onAny: no replies")
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.anyParams[method] = &fxRoute{replies: replies}
}

// Calls returns the calls received so far.
func (fs *fixtureServer) Calls() []fxCall {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return append([]fxCall(nil), fs.calls...)
}

// CallKeys returns "method params" of every call, in order.
func (fs *fixtureServer) CallKeys() []string {
	var out []string
	for _, c := range fs.Calls() {
		out = append(out, c.String())
	}
	return out
}

// CountCalls counts the calls of method (any params).
func (fs *fixtureServer) CountCalls(method string) int {
	n := 0
	for _, c := range fs.Calls() {
		if c.Method == method {
			n++
		}
	}
	return n
}

func (fs *fixtureServer) ResetCalls() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.calls = nil
}

func (fs *fixtureServer) serveHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	user, pass, hasAuth := r.BasicAuth()
	call := fxCall{
		AuthOK: hasAuth && user == fs.user && pass == fs.pass, At: time.Now(),
		ContentType: r.Header.Get("Content-Type"), HTTPMethod: r.Method,
	}
	var req struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	decodeErr := json.Unmarshal(body, &req)
	call.Method, call.ID, call.JSONRPC = req.Method, req.ID, req.JSONRPC
	params, paramsErr := canonicalParams(req.Params)
	call.Params = params

	fs.mu.Lock()
	fs.calls = append(fs.calls, call)
	arrived := fs.arrived
	var route *fxRoute
	if call.AuthOK && decodeErr == nil && paramsErr == nil {
		route = fs.exact[req.Method+" "+params]
		if route == nil {
			route = fs.anyParams[req.Method]
		}
	}
	var rep fxReply
	if route != nil {
		rep = route.take()
	}
	fs.mu.Unlock()
	if arrived != nil {
		select {
		case arrived <- call:
		default:
		}
	}

	// Core checks credentials before it looks at the request, and deters
	// guessing with an empty 401.
	if !call.AuthOK {
		w.Header().Set("WWW-Authenticate", `Basic realm="jsonrpc"`)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if decodeErr != nil || paramsErr != nil {
		fs.writeEnvelope(w, nil, []byte(`{"code":-32700,"message":"Parse error"}`), []byte("null"))
		return
	}
	if route == nil {
		rep = coreFixture(fs.t, "error-method-not-found")
	}
	if rep.Delay != 0 {
		var wait <-chan time.Time
		if rep.Delay > 0 {
			wait = time.After(rep.Delay)
		}
		select {
		case <-wait:
		case <-r.Context().Done():
			return
		case <-fs.quit:
			return
		}
	}
	switch rep.Fault {
	case faultNone:
		if rep.Raw != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(cmp.Or(rep.Status, http.StatusOK))
			_, _ = w.Write(rep.Raw)
			return
		}
		fs.writeEnvelope(w, rep.Result, rep.Error, req.ID)
	case faultHTML500, faultHTML502:
		status := http.StatusInternalServerError
		if rep.Fault == faultHTML502 {
			status = http.StatusBadGateway
		}
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(status)
		fmt.Fprintf(w, "<html>\r\n<head><title>%d %s</title></head>\r\n<body>\r\n<center><h1>%d %s</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n",
			status, http.StatusText(status), status, http.StatusText(status))
	case faultWorkQueue:
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("Work queue depth exceeded"))
	case faultTruncated:
		full := envelope(resultOr(rep.Result, `"`+fxHash170+`"`), nil, req.ID)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(full[:len(full)/2])
	case faultGarbage:
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("JSON-RPC server is taking a nap\x00\xff"))
	case faultEmptyBody:
		w.WriteHeader(http.StatusOK)
	case faultEmptyObject:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("{}\n"))
	case faultCloseConn:
		hj, ok := w.(http.Hijacker)
		if !ok {
			fs.t.Errorf("fixture server: cannot hijack the connection")
			return
		}
		conn, _, err := hj.Hijack()
		if err == nil {
			conn.Close()
		}
	case faultUnauthorized:
		w.Header().Set("WWW-Authenticate", `Basic realm="jsonrpc"`)
		w.WriteHeader(http.StatusUnauthorized)
	case faultForbidden:
		w.WriteHeader(http.StatusForbidden)
	}
}

func resultOr(r json.RawMessage, def string) json.RawMessage {
	if r == nil {
		return json.RawMessage(def)
	}
	return r
}

// envelope renders Core's reply: {"result":...,"error":...,"id":...}\n.
func envelope(result, rpcErr, id json.RawMessage) []byte {
	if result == nil {
		result = json.RawMessage("null")
	}
	if rpcErr == nil {
		rpcErr = json.RawMessage("null")
	}
	if id == nil {
		id = json.RawMessage("null")
	}
	var b bytes.Buffer
	b.WriteString(`{"result":`)
	b.Write(result)
	b.WriteString(`,"error":`)
	b.Write(rpcErr)
	b.WriteString(`,"id":`)
	b.Write(id)
	b.WriteString("}\n")
	return b.Bytes()
}

// writeEnvelope answers like Core does to a JSON-RPC 1.0 request: errors
// come with HTTP 500, or 404 for an unknown method, 400 for a bad request.
func (fs *fixtureServer) writeEnvelope(w http.ResponseWriter, result, rpcErr, id json.RawMessage) {
	status := http.StatusOK
	if rpcErr != nil {
		var e struct{ Code int }
		_ = json.Unmarshal(rpcErr, &e)
		switch e.Code {
		case -32601:
			status = http.StatusNotFound
		case -32600:
			status = http.StatusBadRequest
		default:
			status = http.StatusInternalServerError
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(envelope(result, rpcErr, id))
}

// coreWorld installs Core's answers for the fixture world (a node without
// -txindex, which is Core's default).
func coreWorld(t testing.TB, fs *fixtureServer) {
	t.Helper()
	fs.on("getnetworkinfo", nil, coreFixture(t, "getnetworkinfo"))
	fs.on("getblockchaininfo", nil, coreFixture(t, "getblockchaininfo"))
	fs.on("getbestblockhash", nil, coreFixture(t, "getbestblockhash"))
	fs.on("getblockhash", []any{170}, coreFixture(t, "getblockhash-170"))
	fs.onAny("getblockhash", coreFixture(t, "getblockhash-out-of-range"))
	// Core reads the height as a C++ int: larger values fail in the JSON
	// layer, which Core reports as RPC_MISC_ERROR.
	fs.on("getblockhash", []any{uint32(1 << 31)}, errorReply(-1, "JSON integer out of range"))
	fs.on("getblockhash", []any{^uint32(0)}, errorReply(-1, "JSON integer out of range"))
	fs.on("getblockheader", []any{fxHash170, true}, coreFixture(t, "getblockheader-170"))
	fs.onAny("getblockheader", coreFixture(t, "getblockheader-not-found"))
	fs.on("getblock", []any{fxHash170, 0}, coreFixture(t, "getblock-170-raw"))
	fs.on("getblock", []any{fxHash169, 0}, coreFixture(t, "getblock-169-raw"))
	fs.onAny("getblock", coreFixture(t, "getblock-not-found"))
	fs.on("getrawtransaction", []any{fxTxid, 0, fxHash170}, coreFixture(t, "getrawtransaction-f4184fc5-0"))
	fs.on("getrawtransaction", []any{fxTxid, 1, fxHash170}, coreFixture(t, "getrawtransaction-f4184fc5-1-blockhash"))
	fs.on("getrawtransaction", []any{fxUnknownTx, 0, fxHash170}, coreFixture(t, "getrawtransaction-not-in-block"))
	fs.on("getrawtransaction", []any{fxUnknownTx, 1, fxHash170}, coreFixture(t, "getrawtransaction-not-in-block"))
	fs.onAny("getrawtransaction", coreFixture(t, "getrawtransaction-no-txindex"))
	fs.on("estimatesmartfee", []any{2, "ECONOMICAL"}, coreFixture(t, "estimatesmartfee"))
	fs.on("estimatesmartfee", []any{2, "CONSERVATIVE"}, coreFixture(t, "estimatesmartfee"))
	fs.on("estimatesmartfee", []any{0, "ECONOMICAL"}, coreFixture(t, "error-invalid-conf-target"))
	fs.onAny("estimatesmartfee", coreFixture(t, "estimatesmartfee-no-estimate"))
	fs.on("sendrawtransaction", []any{fxRawTxHex(t)}, coreFixture(t, "sendrawtransaction-f4184fc5"))
}

// coreWorldWithTxindex switches the fixture node to one started with -txindex.
func coreWorldWithTxindex(t testing.TB, fs *fixtureServer) {
	t.Helper()
	coreWorld(t, fs)
	fs.on("getrawtransaction", []any{fxTxid, 0}, coreFixture(t, "getrawtransaction-f4184fc5-0"))
	fs.on("getrawtransaction", []any{fxTxid, 1}, coreFixture(t, "getrawtransaction-f4184fc5-1"))
	fs.onAny("getrawtransaction", coreFixture(t, "getrawtransaction-not-found"))
}

// btcdWorld installs btcd's answers (its codes and messages, from btcd's
// rpcserver) for the same chain: btcd has no getnetworkinfo, reports
// out-of-range heights with -1, and without --txindex finds only mempool txs.
func btcdWorld(t testing.TB, fs *fixtureServer) {
	t.Helper()
	fs.on("getnetworkinfo", nil, errorReply(-1, "Command unimplemented"))
	fs.on("getinfo", nil, resultReply(`{"version":260200,"protocolversion":70002,"blocks":170,"timeoffset":0,"connections":8,"proxy":"","difficulty":1,"testnet":false,"relayfee":0.00001,"errors":""}`))
	fs.on("getblockchaininfo", nil, resultReply(`{"chain":"mainnet","blocks":170,"headers":170,"bestblockhash":"`+fxHash170+`","difficulty":1,"mediantime":1231716245,"pruned":false,"bip9_softforks":{}}`))
	fs.on("getbestblockhash", nil, coreFixture(t, "getbestblockhash"))
	fs.on("getblockhash", []any{170}, coreFixture(t, "getblockhash-170"))
	fs.onAny("getblockhash", errorReply(-1, "Block number out of range"))
	fs.on("getblockheader", []any{fxHash170, true}, coreFixture(t, "getblockheader-170"))
	fs.onAny("getblockheader", errorReply(-5, "Block not found"))
	fs.on("getblock", []any{fxHash170, 0}, coreFixture(t, "getblock-170-raw"))
	fs.onAny("getblock", errorReply(-5, "Block not found"))
	fs.onAny("getrawtransaction", errorReply(-5, "The transaction index must be enabled to query the blockchain (specify --txindex)"))
	fs.on("estimatefee", []any{2}, resultReply(`0.0002`))
	fs.onAny("estimatefee", resultReply(`-1`))
	fs.onAny("estimatesmartfee", errorReply(-32601, "Method not found"))
}

// fxBlock170 is the raw block 170 from the fixture.
func fxBlock170(t testing.TB) []byte {
	t.Helper()
	var s string
	if err := json.Unmarshal(coreFixture(t, "getblock-170-raw").Result, &s); err != nil {
		t.Fatal(err)
	}
	raw, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// fxRawTxHex is the hex of tx f4184fc5… from the fixture.
func fxRawTxHex(t testing.TB) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(coreFixture(t, "getrawtransaction-f4184fc5-0").Result, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

type backendOpts struct {
	coin    string // default "Bitcoin"
	timeout int    // rpc_timeout in seconds; 0 leaves it out
	user    string // default fxUser
	pass    string // default fxPass
	// keepBackoff keeps the client's production retry backoff; by default
	// tests shrink it so that failure paths run fast.
	keepBackoff bool
}

// newFixtureBackend builds the backend the way the application does: a
// blockchaincfg.json document through bchain.ParseConfig and NewBackend.
func newFixtureBackend(t testing.TB, fs *fixtureServer, o backendOpts) (*bchain.Backend, *Node) {
	t.Helper()
	if o.coin == "" {
		o.coin = "Bitcoin"
	}
	if o.user == "" {
		o.user = fxUser
	}
	if o.pass == "" {
		o.pass = fxPass
	}
	doc := map[string]any{
		"coin_name": o.coin, "rpc_url": fs.URL(), "rpc_user": o.user, "rpc_pass": o.pass,
		"block_notifications": "none",
	}
	if o.timeout != 0 {
		doc["rpc_timeout"] = o.timeout
	}
	data, _ := json.Marshal(doc)
	cfg, err := bchain.ParseConfig(data)
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	b, err := bchain.NewBackend(cfg, bchain.Env{Log: discardLog(), Metrics: prometheus.NewRegistry()})
	if err != nil {
		t.Fatalf("NewBackend: %v", err)
	}
	node, ok := b.Chain.(*Node)
	if !ok {
		t.Fatalf("backend chain is %T, want *btc.Node", b.Chain)
	}
	if !o.keepBackoff {
		node.rpc.backoff = time.Millisecond
	}
	return b, node
}

func discardLog() *slog.Logger { return slog.New(slog.DiscardHandler) }

// testCtx is a context that fails the test rather than hang it.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func wantCalls(t testing.TB, fs *fixtureServer, want ...string) {
	t.Helper()
	got := fs.CallKeys()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("calls made:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func wantErrIs(t testing.TB, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("error %v does not wrap %v", err, target)
	}
}

// TestCoreFixturesAreConsistent checks the fixtures against each other and
// against the raw block data, so that a hand edit cannot make them lie.
func TestCoreFixturesAreConsistent(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("testdata", "core"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".json"); ok {
			coreFixture(t, name) // validates the envelope
			n++
		}
	}
	if n < 25 {
		t.Errorf("only %d fixtures found", n)
	}

	p := NewParser(networks["Bitcoin"].Params)
	blk, err := p.ParseBlock(fxBlock170(t))
	if err != nil {
		t.Fatal(err)
	}
	if blk.Hash.String() != fxHash170 || blk.Prev.String() != fxHash169 {
		t.Fatalf("block 170 fixture hashes to %s (prev %s)", blk.Hash, blk.Prev)
	}
	var raw169 string
	_ = json.Unmarshal(coreFixture(t, "getblock-169-raw").Result, &raw169)
	b169, _ := hex.DecodeString(raw169)
	if blk169, err := p.ParseBlock(b169); err != nil || blk169.Hash.String() != fxHash169 {
		t.Fatalf("block 169 fixture: %v", err)
	}

	var hdr struct {
		Hash, MerkleRoot, Bits, PreviousBlockHash, VersionHex string
		Height, Confirmations, NTx                            int
		Time, MedianTime                                      int64
		Nonce                                                 uint32
		Version                                               int32
	}
	if err := json.Unmarshal(coreFixture(t, "getblockheader-170").Result, &hdr); err != nil {
		t.Fatal(err)
	}
	if hdr.Hash != fxHash170 || hdr.Height != 170 || hdr.MerkleRoot != blk.MerkleRoot.String() ||
		hdr.Time != blk.Time || hdr.Nonce != blk.Nonce || hdr.Bits != fmt.Sprintf("%08x", blk.Bits) ||
		hdr.PreviousBlockHash != fxHash169 || hdr.NTx != len(blk.Txs) || hdr.Version != blk.Version ||
		hdr.VersionHex != fmt.Sprintf("%08x", blk.Version) || hdr.MedianTime > hdr.Time {
		t.Errorf("getblockheader-170 disagrees with the raw block: %+v", hdr)
	}

	if blk.Txs[0].Txid.String() != fxCoinbase || blk.Txs[1].Txid.String() != fxTxid {
		t.Errorf("block 170 txids: %s, %s", blk.Txs[0].Txid, blk.Txs[1].Txid)
	}
	if hex.EncodeToString(blk.Txs[1].Raw) != fxRawTxHex(t) {
		t.Errorf("getrawtransaction-f4184fc5-0 is not the tx in block 170")
	}
	for _, name := range []string{"getrawtransaction-f4184fc5-1", "getrawtransaction-f4184fc5-1-blockhash"} {
		var v struct {
			InActiveChain *bool `json:"in_active_chain"`
			Txid, Hash    string
			Size, VSize   int
			Weight        int
			Hex           string
			BlockHash     string
			Confirmations int
			Vout          []struct {
				Value        json.Number
				N            int
				ScriptPubKey struct{ Hex, Type, Desc string }
			}
		}
		if err := json.Unmarshal(coreFixture(t, name).Result, &v); err != nil {
			t.Fatal(err)
		}
		tx := blk.Txs[1]
		if v.Txid != fxTxid || v.Hash != fxTxid || v.Hex != fxRawTxHex(t) || v.Size != tx.Size ||
			v.VSize != tx.VSize || v.Weight != 4*tx.Size || v.BlockHash != fxHash170 || v.Confirmations != 1 {
			t.Errorf("%s disagrees with the raw tx", name)
		}
		if (v.InActiveChain != nil) != strings.HasSuffix(name, "-blockhash") {
			t.Errorf("%s: in_active_chain is present only when a blockhash is passed", name)
		}
		for i, o := range v.Vout {
			sat, err := btcToSat(o.Value)
			if err != nil || uint64(sat) != tx.Vout[i].Value || o.N != i ||
				o.ScriptPubKey.Hex != hex.EncodeToString(tx.Vout[i].Script) || o.ScriptPubKey.Type != "pubkey" ||
				!strings.HasPrefix(o.ScriptPubKey.Desc, "pk(") {
				t.Errorf("%s vout %d disagrees with the raw tx: %+v", name, i, o)
			}
		}
	}
	var txid string
	_ = json.Unmarshal(coreFixture(t, "sendrawtransaction-f4184fc5").Result, &txid)
	if txid != fxTxid {
		t.Errorf("sendrawtransaction fixture returns %s", txid)
	}
	for _, name := range []string{"getblockchaininfo", "getblockchaininfo-v28"} {
		var bc struct {
			BestBlockHash string
			Blocks        int
		}
		_ = json.Unmarshal(coreFixture(t, name).Result, &bc)
		if bc.BestBlockHash != fxHash170 || bc.Blocks != 170 {
			t.Errorf("%s does not describe the fixture tip", name)
		}
	}
}
