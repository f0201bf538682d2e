package btc

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/openexplorer/blockbook/bchain"
)

// btcdWSServer plays btcd's websocket RPC endpoint (/ws): basic auth on the
// upgrade request, then the client's notifyblocks request, answered with
// {"result":null,"error":null,"id":1}; notifications are JSON-RPC 1.0
// requests with a null id, as btcd's rpcwebsocket.go sends them.
type btcdWSServer struct {
	t        *testing.T
	srv      *httptest.Server
	pass     string
	upgrader websocket.Upgrader
	sessions chan *websocket.Conn
	// rpc, when set, serves the JSON-RPC requests (any path but /ws), as
	// btcd serves both on one port.
	rpc http.Handler
	// subscribe is the request the client must send first: notifyblocks
	// without params (the default) or notifynewtransactions [false].
	subscribe string
	attempts  atomic.Int32
	authFail  atomic.Int32

	mu    sync.Mutex
	conns []*websocket.Conn
}

func newBtcdWSServer(t *testing.T, pass string, rpc http.Handler) *btcdWSServer {
	s := &btcdWSServer{t: t, pass: pass, rpc: rpc, sessions: make(chan *websocket.Conn, 16)}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(func() {
		s.mu.Lock()
		for _, c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.srv.Close()
	})
	return s
}

func (s *btcdWSServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/ws" && s.rpc != nil {
		s.rpc.ServeHTTP(w, r)
		return
	}
	s.attempts.Add(1)
	if r.URL.Path != "/ws" {
		s.t.Errorf("websocket request for %q; btcd serves /ws", r.URL.Path)
		http.NotFound(w, r)
		return
	}
	if u, p, ok := r.BasicAuth(); !ok || u != fxUser || p != s.pass {
		s.authFail.Add(1)
		http.Error(w, "401 Unauthorized.", http.StatusUnauthorized)
		return
	}
	conn, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		s.t.Errorf("upgrade: %v", err)
		return
	}
	s.mu.Lock()
	s.conns = append(s.conns, conn)
	s.mu.Unlock()

	_ = conn.SetReadDeadline(time.Now().Add(notifyGuard))
	_, data, err := conn.ReadMessage()
	if err != nil {
		s.t.Errorf("reading the client's first request: %v", err)
		conn.Close()
		return
	}
	_ = conn.SetReadDeadline(time.Time{})
	var req struct {
		JSONRPC string            `json:"jsonrpc"`
		ID      json.RawMessage   `json:"id"`
		Method  string            `json:"method"`
		Params  []json.RawMessage `json:"params"`
	}
	wantMethod, wantParams := "notifyblocks", "[]"
	if s.subscribe == "notifynewtransactions" {
		wantMethod, wantParams = s.subscribe, "[false]"
	}
	err = json.Unmarshal(data, &req)
	params, _ := json.Marshal(req.Params)
	if err != nil || req.Method != wantMethod || req.JSONRPC != "1.0" ||
		string(params) != wantParams || len(req.ID) == 0 || string(req.ID) == "null" {
		s.t.Errorf("first request %s; want a JSON-RPC 1.0 %s %s with an id", data, wantMethod, wantParams)
		conn.Close()
		return
	}
	if err := conn.WriteMessage(websocket.TextMessage, fmt.Appendf(nil, `{"result":null,"error":null,"id":%s}`, req.ID)); err != nil {
		s.t.Errorf("answer %s: %v", wantMethod, err)
		return
	}
	s.sessions <- conn
}

// next waits for the notifier's next subscribed connection.
func (s *btcdWSServer) next(t *testing.T) *websocket.Conn {
	t.Helper()
	select {
	case c := <-s.sessions:
		return c
	case <-time.After(notifyGuard):
		t.Fatal("the notifier did not connect and subscribe")
		return nil
	}
}

func btcdNotification(method string, params ...any) []byte {
	b, err := json.Marshal(map[string]any{"jsonrpc": "1.0", "method": method, "params": params, "id": nil})
	if err != nil {
		panic(err)
	}
	return b
}

func wsSend(t *testing.T, c *websocket.Conn, kind int, data []byte) {
	t.Helper()
	if err := c.WriteMessage(kind, data); err != nil {
		t.Fatalf("send: %v", err)
	}
}

func TestBtcdNotifier(t *testing.T) {
	t.Parallel()
	srv := newBtcdWSServer(t, fxPass, nil)
	sig := newSignalCounter()
	logs := newLogCapture(sig.count)
	b := &BtcdNotifier{RPCURL: srv.srv.URL, User: fxUser, Pass: fxPass, Log: slog.New(logs)}
	stop := runNotifier(t, b.Run, sig)

	header170 := fxBlock170(t)[:80]
	c := srv.next(t)
	for _, msg := range [][]byte{
		btcdNotification("txaccepted", fxTxid, 10.0),
		btcdNotification("relevanttxaccepted", fxRawTxHex(t)),
		[]byte(`{"result":null,"error":null,"id":2}`),
		[]byte(`not json`),
		btcdNotification("rescanprogress", fxHash170, 170, 1231731025),
		btcdNotification("blockconnected", fxHash170, 170, 1231731025),
		btcdNotification("blockdisconnected", fxHash170, 170, 1231731025),
		btcdNotification("filteredblockconnected", 170, fmt.Sprintf("%x", header170), []string{}),
		btcdNotification("filteredblockdisconnected", 170, fmt.Sprintf("%x", header170)),
		btcdNotification("txacceptedverbose", map[string]any{"txid": fxTxid}),
	} {
		wsSend(t, c, websocket.TextMessage, msg)
	}
	wsSend(t, c, websocket.BinaryMessage, []byte{0xff, 0x00})
	// btcd goes away without a close frame; the notifier logs the drop once
	// it has read everything sent before it.
	c.Close()
	drop := logs.waitLog(t, "reconnect after the drop", isReconnectLog)
	if drop.count != 4 || drop.attrs["channel"] != "btcd-ws" {
		t.Errorf("at the drop: %d signals (channel %q); want 4 for the four block notifications", drop.count, drop.attrs["channel"])
	}

	// It reconnects and subscribes again; this time btcd shuts down cleanly.
	c = srv.next(t)
	wsSend(t, c, websocket.TextMessage, btcdNotification("blockconnected", fxHash170, 170, 1231731025))
	wsSend(t, c, websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, "shutting down"))
	drop = logs.waitLog(t, "reconnect after the close frame", isReconnectLog)
	if drop.count != 5 {
		t.Errorf("after the close frame: %d signals; want 5", drop.count)
	}

	c = srv.next(t)
	wsSend(t, c, websocket.TextMessage, btcdNotification("blockconnected", fxHash170, 170, 1231731025))
	sig.waitFor(t, 6)
	if err := stop(); err != nil {
		t.Errorf("Run = %v after cancellation; want nil", err)
	}
	if n := sig.count(); n != 6 {
		t.Errorf("%d signals; want 6", n)
	}
	if n := srv.authFail.Load(); n != 0 {
		t.Errorf("%d connections without the right credentials", n)
	}
}

func TestBtcdNotifierBadCredentials(t *testing.T) {
	t.Parallel()
	srv := newBtcdWSServer(t, "another password", nil)
	sig := newSignalCounter()
	logs := newLogCapture(sig.count)
	b := &BtcdNotifier{RPCURL: srv.srv.URL, User: fxUser, Pass: fxPass, Log: slog.New(logs)}
	stop := runNotifier(t, b.Run, sig)
	rec := logs.waitLog(t, "a refused connection", isReconnectLog)
	if !strings.Contains(rec.attrs["err"], "bad handshake") {
		t.Errorf("reconnect log err = %q", rec.attrs["err"])
	}
	if err := stop(); err != nil {
		t.Errorf("Run = %v", err)
	}
	if srv.authFail.Load() < 1 || sig.count() != 0 {
		t.Errorf("auth failures %d, signals %d", srv.authFail.Load(), sig.count())
	}
}

func TestBtcdNotifierCancelWhileUnreachable(t *testing.T) {
	t.Parallel()
	sig := newSignalCounter()
	logs := newLogCapture(sig.count)
	b := &BtcdNotifier{RPCURL: fmt.Sprintf("http://127.0.0.1:%d", freeTCPPort(t)), User: fxUser, Pass: fxPass, Log: slog.New(logs)}
	stop := runNotifier(t, b.Run, sig)
	logs.waitLog(t, "a failed dial", isReconnectLog)
	if err := stop(); err != nil {
		t.Errorf("Run = %v", err)
	}
}

func TestBtcdWebsocketURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8334":                  "ws://127.0.0.1:8334/ws",
		"http://127.0.0.1:8334/":                 "ws://127.0.0.1:8334/ws",
		"https://node.example:8334":              "wss://node.example:8334/ws",
		"HTTPS://node.example:8334":              "wss://node.example:8334/ws",
		"http://user:secret@127.0.0.1:18334/rpc": "ws://127.0.0.1:18334/ws",
	} {
		got, err := btcdWebsocketURL(in)
		if err != nil || got != want {
			t.Errorf("btcdWebsocketURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := btcdWebsocketURL("http://[::1"); err == nil {
		t.Error("a malformed rpc_url was accepted")
	}
	b := &BtcdNotifier{RPCURL: "http://[::1", Log: discardLog()}
	if err := b.Run(testCtx(t), func() {}); err == nil {
		t.Error("Run with a malformed rpc_url should fail at once")
	}
}

// TestNotifierSelection checks which notifier block_notifications and
// message_queue_binding give, through ParseConfig and NewBackend.
func TestNotifierSelection(t *testing.T) {
	build := func(doc string) (*bchain.Backend, error) {
		cfg, err := bchain.ParseConfig([]byte(doc))
		if err != nil {
			return nil, err
		}
		return bchain.NewBackend(cfg, bchain.Env{Log: discardLog()})
	}
	const base = `"coin_name":"Regtest","rpc_url":"http://127.0.0.1:18443","rpc_user":"u","rpc_pass":"p"`
	for _, tc := range []struct {
		extra string
		want  string
	}{
		{`"message_queue_binding":"tcp://127.0.0.1:28332"`, "zmq"},
		{`"block_notifications":"auto","message_queue_binding":"tcp://127.0.0.1:28332"`, "zmq"},
		{`"block_notifications":"zmq","message_queue_binding":"tcp://127.0.0.1:28332"`, "zmq"},
		{`"block_notifications":"btcd","message_queue_binding":"tcp://127.0.0.1:28332"`, "btcd"},
		{`"block_notifications":"btcd"`, "btcd"},
		{``, "auto"},
		{`"block_notifications":"none","message_queue_binding":"tcp://127.0.0.1:28332"`, "none"},
	} {
		doc := "{" + base + "}"
		if tc.extra != "" {
			doc = "{" + base + "," + tc.extra + "}"
		}
		b, err := build(doc)
		if err != nil {
			t.Errorf("%s: %v", tc.extra, err)
			continue
		}
		got := "none"
		switch n := b.Notifier.(type) {
		case *ZMQNotifier:
			got = "zmq"
			if n.Endpoint != "tcp://127.0.0.1:28332" || n.Log == nil {
				t.Errorf("%s: ZMQ notifier %+v", tc.extra, n)
			}
		case *BtcdNotifier:
			got = "btcd"
			if n.RPCURL != "http://127.0.0.1:18443" || n.User != "u" || n.Pass != "p" || n.Log == nil {
				t.Errorf("%s: btcd notifier %+v", tc.extra, n)
			}
		case *autoNotifier:
			got = "auto"
		case nil:
		default:
			got = fmt.Sprintf("%T", n)
		}
		if got != tc.want {
			t.Errorf("%s: notifier %s, want %s", tc.extra, got, tc.want)
		}
	}
	_, err := build("{" + base + `,"block_notifications":"zmq"}`)
	if !errors.Is(err, bchain.ErrConfig) || !strings.Contains(err.Error(), "message_queue_binding") {
		t.Errorf("zmq without message_queue_binding: %v", err)
	}
}

// TestAutoNotifier: without message_queue_binding the notifier asks the node
// what it is; btcd gets its websocket notifications, Core is polled.
func TestAutoNotifier(t *testing.T) {
	t.Parallel()
	t.Run("btcd", func(t *testing.T) {
		t.Parallel()
		fs := newFixtureServer(t)
		btcdWorld(t, fs)
		srv := newBtcdWSServer(t, fxPass, http.HandlerFunc(fs.serveHTTP))
		cfg, err := bchain.ParseConfig([]byte(`{"coin_name":"Bitcoin","rpc_url":"` + srv.srv.URL + `","rpc_user":"` + fxUser + `","rpc_pass":"` + fxPass + `"}`))
		if err != nil {
			t.Fatal(err)
		}
		b, err := bchain.NewBackend(cfg, bchain.Env{Log: discardLog()})
		if err != nil {
			t.Fatal(err)
		}
		sig := newSignalCounter()
		stop := runNotifier(t, b.Notifier.Run, sig)
		c := srv.next(t)
		wsSend(t, c, websocket.TextMessage, btcdNotification("blockconnected", fxHash170, 170, 1231731025))
		sig.waitFor(t, 1)
		if err := stop(); err != nil {
			t.Errorf("Run = %v", err)
		}
		if fs.CountCalls("getnetworkinfo") != 1 {
			t.Errorf("calls: %v", fs.CallKeys())
		}
	})
	t.Run("core", func(t *testing.T) {
		t.Parallel()
		fs := newFixtureServer(t)
		coreWorld(t, fs)
		fs.arrived = make(chan fxCall, 16)
		b, _ := newFixtureBackend(t, fs, backendOpts{})
		// newFixtureBackend disables notifications; build the auto one the
		// way pickNotifier does for this node.
		n, err := pickNotifier(&bchain.Config{RPCURL: fs.URL()}, b.Chain.(*Node))
		if err != nil {
			t.Fatal(err)
		}
		sig := newSignalCounter()
		stop := runNotifier(t, n.Run, sig)
		select {
		case c := <-fs.arrived:
			if c.Method != "getnetworkinfo" {
				t.Errorf("first call %s", c)
			}
		case <-time.After(notifyGuard):
			t.Fatal("the auto notifier never asked the node what it is")
		}
		if err := stop(); err != nil {
			t.Errorf("Run = %v", err)
		}
		if sig.count() != 0 {
			t.Errorf("signals from a Core node without ZMQ: %d", sig.count())
		}
	})
}
