package electrum

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/tools/apitest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	apitest.CloseShared()
	os.Exit(code)
}

// ioGuard bounds every wait on the server (a failure guard, not a speed
// assertion).
const ioGuard = 20 * time.Second

// served is the Electrum server over the fixture (the real index and
// mempool, and the service's ScriptQueries), on a TCP port.
type served struct {
	f    *apitest.Fixture
	svc  *api.UtxoService
	srv  *Server
	addr string
}

// newServed serves the shared fixture, which tests must not change.
func newServed(t *testing.T, cfg Config) *served {
	t.Helper()
	return serve(t, apitest.Shared(t, apitest.Options{Mempool: true}), cfg)
}

// newServedOwn serves a fixture of the test's own, which it may reorg.
func newServedOwn(t *testing.T, cfg Config) *served {
	t.Helper()
	return serve(t, apitest.New(t, apitest.Options{Mempool: true}), cfg)
}

// serve serves a fixture; mods change the service's configuration.
func serve(t *testing.T, f *apitest.Fixture, cfg Config, mods ...func(*api.Config)) *served {
	t.Helper()
	return serveWrapped(t, f, cfg, nil, mods...)
}

// serveWrapped serves a fixture with its script queries wrapped (nil:
// as they are).
func serveWrapped(t *testing.T, f *apitest.Fixture, cfg Config, wrap func(api.ScriptQueries) api.ScriptQueries, mods ...func(*api.Config)) *served {
	t.Helper()
	acfg := api.Config{
		BlockFilters: f.BlockFilters, MempoolFilters: apitest.MempoolFilters, Mempool: f.Mempool, Log: apitest.Quiet(),
		Build: api.BuildInfo{Version: "test", Host: "apitest"},
	}
	for _, m := range mods {
		m(&acfg)
	}
	svc := api.NewUtxoService(f.DB, f.Backend, nil, acfg)
	cfg.Log = apitest.Quiet()
	scripts := svc.Capabilities().Scripts
	if wrap != nil {
		scripts = wrap(scripts)
	}
	srv, err := New(svc, scripts, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The fixture's mempool loaded before the server listened: announce
	// its txs as the wiring does while the mempool loads.
	for _, tx := range f.Mempool.Txs() {
		var descs []bchain.AddrDesc
		for _, p := range tx.Prevouts {
			descs = append(descs, p.Desc)
		}
		srv.OnMempoolTx(append(descs, tx.OutDescs...))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), ioGuard)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			t.Error(err)
		}
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return &served{f: f, svc: svc, srv: srv, addr: ln.Addr().String()}
}

// client speaks newline-delimited JSON-RPC to the server.
type client struct {
	t     testing.TB
	c     net.Conn
	r     *bufio.Reader
	id    int
	notes []notification
}

func dial(t testing.TB, addr string) *client {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return newClient(t, c)
}

func newClient(t testing.TB, c net.Conn) *client {
	return &client{t: t, c: c, r: bufio.NewReaderSize(c, 1<<20)}
}

func (c *client) sendLine(line string) {
	c.t.Helper()
	_ = c.c.SetWriteDeadline(time.Now().Add(ioGuard))
	if _, err := c.c.Write([]byte(line + "\n")); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// readLine reads one message; "" when the server closed the connection.
func (c *client) readLine() string {
	c.t.Helper()
	_ = c.c.SetReadDeadline(time.Now().Add(ioGuard))
	line, err := c.r.ReadString('\n')
	if err != nil {
		if line == "" {
			return ""
		}
		c.t.Fatalf("read: %v (%q)", err, line)
	}
	return strings.TrimSuffix(line, "\n")
}

// answer is a decoded response.
type answer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
	Method string          `json:"method"`
	Params []json.RawMessage
}

// call sends a request and returns its answer; notifications that come
// first are kept.
func (c *client) call(method string, params ...any) answer {
	c.t.Helper()
	c.id++
	if params == nil {
		params = []any{}
	}
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	if err != nil {
		c.t.Fatal(err)
	}
	c.sendLine(string(b))
	return c.answerTo(fmt.Sprint(c.id))
}

func (c *client) answerTo(id string) answer {
	c.t.Helper()
	for {
		line := c.readLine()
		if line == "" {
			c.t.Fatalf("connection closed waiting for the answer to %s", id)
		}
		var a answer
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			c.t.Fatalf("answer %q: %v", line, err)
		}
		if a.Method != "" {
			var n notification
			if err := json.Unmarshal([]byte(line), &n); err != nil {
				c.t.Fatal(err)
			}
			c.notes = append(c.notes, n)
			continue
		}
		if string(a.ID) != id {
			c.t.Fatalf("answer to %s, want %s: %s", a.ID, id, line)
		}
		return a
	}
}

// ok returns the result of a call that must succeed, decoded into T.
func ok[T any](t testing.TB, c *client, method string, params ...any) T {
	t.Helper()
	a := c.call(method, params...)
	if a.Error != nil {
		t.Fatalf("%s %v: %v", method, params, a.Error)
	}
	var v T
	if err := json.Unmarshal(a.Result, &v); err != nil {
		t.Fatalf("%s: result %s: %v", method, a.Result, err)
	}
	return v
}

// fails checks that a call fails with code and a message containing text.
func fails(t testing.TB, c *client, code int, text, method string, params ...any) {
	t.Helper()
	a := c.call(method, params...)
	if a.Error == nil || a.Error.Code != code || !strings.Contains(a.Error.Message, text) {
		t.Errorf("%s %v: %s / %+v, want error %d %q", method, params, a.Result, a.Error, code, text)
	}
}

// note waits for the next notification of method.
func (c *client) note(method string) notification {
	c.t.Helper()
	for {
		for i, n := range c.notes {
			if n.Method == method {
				c.notes = append(c.notes[:i], c.notes[i+1:]...)
				return n
			}
		}
		line := c.readLine()
		if line == "" {
			c.t.Fatalf("connection closed waiting for %s", method)
		}
		var n notification
		if err := json.Unmarshal([]byte(line), &n); err != nil || n.Method == "" {
			c.t.Fatalf("want a notification, got %q", line)
		}
		c.notes = append(c.notes, n)
	}
}

// negotiated dials and negotiates version.
func (s *served) negotiated(t testing.TB, version string) *client {
	t.Helper()
	c := dial(t, s.addr)
	got := ok[[]string](t, c, "server.version", "test", version)
	if len(got) != 2 || got[1] != version {
		t.Fatalf("server.version %s: %v", version, got)
	}
	return c
}

// disconnectTip undoes the fixture's tip block in the index, as a reorg
// does, and tells the server; reconnectTip connects it again.
func (s *served) disconnectTip(t *testing.T) {
	t.Helper()
	if _, _, err := s.index(t).DisconnectTip(nil); err != nil {
		t.Fatal(err)
	}
	s.srv.OnBlock()
}

func (s *served) reconnectTip(t *testing.T) {
	t.Helper()
	s.connectRaw(t, s.f.Raw[s.f.TipHeight()], s.f.TipHeight())
}

// connectRaw connects the serialized block raw at height and tells the
// server.
func (s *served) connectRaw(t *testing.T, raw []byte, height int) {
	t.Helper()
	blk, err := s.f.Parser.ParseBlock(raw)
	if err != nil {
		t.Fatal(err)
	}
	blk.Height = uint32(height)
	if err := s.index(t).ConnectBlock(blk); err != nil {
		t.Fatal(err)
	}
	s.srv.OnBlockConnected(blk)
}

func (s *served) index(t *testing.T) *db.UtxoIndex {
	t.Helper()
	x, err := db.NewUtxoIndex(s.f.DB, s.f.Parser, 300, s.f.BlockFilters)
	if err != nil {
		t.Fatal(err)
	}
	return x
}
