package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/internal/listen"
)

// Protocol-level behaviour of the websocket server against a stand-in
// service (the methods' answers are tested end to end in the root package).

// fakeService answers Info from a function; any other call panics (and is
// recovered by the server), which the tests would notice.
type fakeService struct {
	api.Service
	info func(ctx context.Context) (*api.WsInfo, error)
}

func (f *fakeService) Info(ctx context.Context) (*api.WsInfo, error) { return f.info(ctx) }

// Capabilities: the stand-in offers none of the optional parts.
func (f *fakeService) Capabilities() api.Capabilities { return api.Capabilities{} }

// CurrentFiatRates: no rates (the explorer asks on every page).
func (f *fakeService) CurrentFiatRates(context.Context, []string, string) (*api.FiatTicker, error) {
	return nil, &api.Error{Msg: "No tickers found!"}
}

const waitGuard = 30 * time.Second

func startWS(t *testing.T, svc api.Service, cfg WebsocketConfig) (*Websocket, *httptest.Server) {
	t.Helper()
	ws := NewWebsocket(svc, cfg, slog.New(slog.DiscardHandler), prometheus.NewRegistry())
	ctx, cancel := context.WithCancel(context.Background())
	go ws.Run(ctx)
	mux := http.NewServeMux()
	mux.Handle("GET /websocket", ws)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		_ = ws.Shutdown(context.Background())
		srv.Close()
		cancel()
	})
	return ws, srv
}

func dial(t *testing.T, srv *httptest.Server, hdr http.Header) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	url := "ws" + strings.TrimPrefix(srv.URL, "http") + "/websocket"
	c, resp, err := websocket.DefaultDialer.Dial(url, hdr)
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, resp, err
}

func mustDial(t *testing.T, srv *httptest.Server) *websocket.Conn {
	t.Helper()
	c, _, err := dial(t, srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// roundTrip sends a frame and reads the next message.
func roundTrip(t *testing.T, c *websocket.Conn, kind int, frame string) (id string, data json.RawMessage) {
	t.Helper()
	if err := c.WriteMessage(kind, []byte(frame)); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(waitGuard))
	_, msg, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("reading the answer to %q: %v", frame, err)
	}
	var res struct {
		ID   string          `json:"id"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(msg, &res); err != nil {
		t.Fatalf("answer %s: %v", msg, err)
	}
	return res.ID, res.Data
}

func errorMessage(data json.RawMessage) string {
	var e struct {
		Error struct{ Message string } `json:"error"`
	}
	_ = json.Unmarshal(data, &e)
	return e.Error.Message
}

func okInfo(context.Context) (*api.WsInfo, error) { return &api.WsInfo{Name: "Test"}, nil }

func TestWebsocketMalformedRequests(t *testing.T) {
	_, srv := startWS(t, &fakeService{info: okInfo}, WebsocketConfig{})
	c := mustDial(t, srv)
	for _, tc := range []struct {
		frame, id, err string
		kind           int
	}{
		{`{"id":"1","method":"getInfo"`, "", "Invalid request, not a JSON object", websocket.TextMessage},
		{`[1,2,3]`, "", "Invalid request, not a JSON object", websocket.TextMessage},
		{`{"id":"2"}`, "2", "method must be a non-empty string", websocket.TextMessage},
		{`{"id":"3","method":42}`, "3", "method must be a non-empty string", websocket.TextMessage},
		{`{"id":"4","method":"noSuchMethod"}`, "4", `Unknown method "noSuchMethod"`, websocket.TextMessage},
		{`{"id":"5","method":"getBlockHash","params":{"height":"one"}}`, "5", "height must be a number, got string", websocket.TextMessage},
		{`{"id":"6","method":"getBlockHash","params":[1]}`, "6", "Invalid params: expected an object, got array", websocket.TextMessage},
		{`{"id":"7","method":"getInfo"}`, "", "Binary messages are not supported", websocket.BinaryMessage},
		{`{"id":[1],"method":"getInfo"}`, "[1]", "id must be a string", websocket.TextMessage},
	} {
		id, data := roundTrip(t, c, tc.kind, tc.frame)
		if id != tc.id {
			t.Errorf("%s: id %q, want %q", tc.frame, id, tc.id)
		}
		if msg := errorMessage(data); !strings.Contains(msg, tc.err) {
			t.Errorf("%s: error %q, want %q", tc.frame, msg, tc.err)
		}
	}
	// A numeric id is answered with its text; the connection still works.
	id, data := roundTrip(t, c, websocket.TextMessage, `{"id":12,"method":"getInfo"}`)
	if id != "12" || !strings.Contains(string(data), `"name":"Test"`) {
		t.Fatalf("numeric id: %s %s", id, data)
	}
}

func TestWebsocketErrorsAreMapped(t *testing.T) {
	var calls atomic.Int32
	svc := &fakeService{info: func(context.Context) (*api.WsInfo, error) {
		switch calls.Add(1) {
		case 1:
			return nil, &api.Error{Msg: "a user mistake"}
		case 2:
			return nil, fmt.Errorf("rpc: %w", bchain.ErrNodeUnavailable)
		case 3:
			return nil, fmt.Errorf("slow query at /secret/path: %w", context.DeadlineExceeded)
		case 4:
			return nil, errors.New("disk on fire at /secret/path")
		}
		panic("boom")
	}}
	_, srv := startWS(t, svc, WebsocketConfig{})
	c := mustDial(t, srv)
	for _, want := range []string{"a user mistake", "the blockchain node is not responding", "the request took too long", "Internal error", "Internal error"} {
		_, data := roundTrip(t, c, websocket.TextMessage, `{"id":"x","method":"getInfo"}`)
		if msg := errorMessage(data); !strings.Contains(msg, want) || strings.Contains(msg, "secret") {
			t.Errorf("error %q, want %q", msg, want)
		}
	}
}

// An oversized frame closes the connection with 1009 and a reason.
func TestWebsocketOversizedFrame(t *testing.T) {
	_, srv := startWS(t, &fakeService{info: okInfo}, WebsocketConfig{MaxMessageBytes: 1024})
	c := mustDial(t, srv)
	frame := `{"id":"1","method":"getInfo","params":{"pad":"` + strings.Repeat("x", 2000) + `"}}`
	if err := c.WriteMessage(websocket.TextMessage, []byte(frame)); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(waitGuard))
	_, _, err := c.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.CloseMessageTooBig || !strings.Contains(ce.Text, "larger than 1024 bytes") {
		t.Fatalf("want close 1009 with a reason, got %v", err)
	}
}

// A client that stops reading is dropped once its queue is full, and the
// server does not block on it.
func TestWebsocketSlowClientIsDropped(t *testing.T) {
	big := strings.Repeat("v", 256<<10)
	ws, srv := startWS(t, &fakeService{info: func(context.Context) (*api.WsInfo, error) {
		return &api.WsInfo{Version: big}, nil
	}}, WebsocketConfig{SendQueue: 8})
	c := mustDial(t, srv)
	for i := 0; i < 400; i++ {
		if err := c.WriteMessage(websocket.TextMessage, []byte(`{"id":"1","method":"getInfo"}`)); err != nil {
			break // the server already closed the connection
		}
	}
	deadline := time.Now().Add(waitGuard)
	dropped := func() float64 {
		var m dto.Metric
		_ = ws.m.dropped.Write(&m)
		return m.GetCounter().GetValue()
	}
	for dropped() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the slow client was never dropped")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for ws.Connections() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the slow client's connection was not released")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Others are still served.
	if _, data := roundTrip(t, mustDial(t, srv), websocket.TextMessage, `{"id":"2","method":"ping"}`); string(data) != "{}" {
		t.Fatalf("ping after dropping a slow client: %s", data)
	}
}

// The send queue is bounded in bytes too, per connection and for all
// connections: a client that asks for large answers and never reads is
// dropped long before the 500 messages the count allows (64 answers of
// 1 MiB here, which the count alone would all keep).
func TestWebsocketQueueBytes(t *testing.T) {
	big := strings.Repeat("v", 1<<20)
	for name, cfg := range map[string]WebsocketConfig{
		"connection": {SendQueueBytes: 4 << 20},
		"all":        {SendQueueBytes: 1 << 30, MaxQueuedBytes: 4 << 20},
	} {
		t.Run(name, func(t *testing.T) {
			ws, srv := startWS(t, &fakeService{info: func(context.Context) (*api.WsInfo, error) {
				return &api.WsInfo{Version: big}, nil
			}}, cfg)
			c := mustDial(t, srv)
			for i := 0; i < 64; i++ {
				if err := c.WriteMessage(websocket.TextMessage, []byte(`{"id":"1","method":"getInfo"}`)); err != nil {
					break // the server already closed the connection
				}
			}
			deadline := time.Now().Add(waitGuard)
			for ws.Connections() != 0 {
				if time.Now().After(deadline) {
					t.Fatalf("a non-reading client with 64 MiB of answers was not dropped (%d bytes budgeted)", ws.queued.Used())
				}
				time.Sleep(10 * time.Millisecond)
			}
			if n := ws.queued.Used(); n != 0 {
				t.Fatalf("%d bytes still counted after the client was dropped", n)
			}
		})
	}
}

// Requests in progress are bounded per connection; the excess is answered
// with an error and the connection stays usable.
func TestWebsocketPendingRequestLimit(t *testing.T) {
	release := make(chan struct{})
	_, srv := startWS(t, &fakeService{info: func(ctx context.Context) (*api.WsInfo, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return &api.WsInfo{}, nil
	}}, WebsocketConfig{MaxPendingRequests: 2})
	c := mustDial(t, srv)
	for i := 0; i < 3; i++ {
		if err := c.WriteMessage(websocket.TextMessage, []byte(`{"id":"slow","method":"getInfo"}`)); err != nil {
			t.Fatal(err)
		}
	}
	_ = c.SetReadDeadline(time.Now().Add(waitGuard))
	_, msg, err := c.ReadMessage()
	if err != nil || !strings.Contains(string(msg), "Too many requests in progress on this connection (limit 2)") {
		t.Fatalf("third request: %s %v", msg, err)
	}
	close(release)
	for i := 0; i < 2; i++ {
		if _, msg, err := c.ReadMessage(); err != nil || strings.Contains(string(msg), "error") {
			t.Fatalf("held request %d: %s %v", i, msg, err)
		}
	}
}

func TestWebsocketOriginsAndPerIPLimit(t *testing.T) {
	_, srv := startWS(t, &fakeService{info: okInfo}, WebsocketConfig{
		AllowedOrigins: []string{"https://Wallet.Example"}, MaxConnsPerIP: 2,
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
	})
	if _, resp, err := dial(t, srv, http.Header{"Origin": {"https://evil.example"}}); err == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign origin: %v %v", resp, err)
	}
	for _, o := range []string{"https://wallet.example", ""} {
		hdr := http.Header{"X-Forwarded-For": {"203.0.113.7"}}
		if o != "" {
			hdr.Set("Origin", o)
		}
		if _, _, err := dial(t, srv, hdr); err != nil {
			t.Fatalf("origin %q: %v", o, err)
		}
	}
	// 203.0.113.7 (behind the trusted proxy) now holds two connections.
	if _, resp, err := dial(t, srv, http.Header{"X-Forwarded-For": {"203.0.113.7"}}); err == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("third connection from one IP: %v %v", resp, err)
	}
	if _, _, err := dial(t, srv, http.Header{"X-Forwarded-For": {"203.0.113.8"}}); err != nil {
		t.Fatalf("another client IP: %v", err)
	}
}

func TestClientIP(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	for _, tc := range []struct{ peer, xff, want string }{
		{"198.51.100.1:5000", "203.0.113.7", "198.51.100.1"}, // untrusted peer: header ignored
		{"10.1.1.1:5000", "203.0.113.7", "203.0.113.7"},
		{"10.1.1.1:5000", "203.0.113.7, 10.2.2.2", "203.0.113.7"}, // proxies appended by a trusted chain
		{"10.1.1.1:5000", "6.6.6.6, 203.0.113.7", "203.0.113.7"},  // a forged left entry is not believed
		{"10.1.1.1:5000", "garbage", "10.1.1.1"},                  // unparsable: stop at the proxy
		{"10.1.1.1:5000", "", "10.1.1.1"},
		{"[::ffff:198.51.100.1]:5000", "203.0.113.7", "198.51.100.1"},
	} {
		r := httptest.NewRequest("GET", "/websocket", nil)
		r.RemoteAddr = tc.peer
		if tc.xff != "" {
			r.Header.Set("X-Forwarded-For", tc.xff)
		}
		if got := listen.ClientIP(r, trusted, ClientIPConfig{}); got != tc.want {
			t.Errorf("peer %s xff %q: %s, want %s", tc.peer, tc.xff, got, tc.want)
		}
	}
	if listen.IPKey("2001:db8:1:2:3:4:5:6") != listen.IPKey("2001:db8:1:2:ffff::1") || listen.IPKey("2001:db8:1:2::1") == listen.IPKey("2001:db8:1:3::1") {
		t.Fatal("IPv6 clients must be grouped per /64")
	}
	if _, err := ParseTrustedProxies("10.0.0.0/8, 192.0.2.1, ::1"); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseTrustedProxies("10.0.0.0/33"); err == nil {
		t.Fatal("a bad CIDR was accepted")
	}
}

// Shutdown closes connections with "going away" and waits for requests in
// progress, so that the index is not closed under them.
func TestWebsocketShutdownWaitsForRequests(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	var finished atomic.Bool
	ws, srv := startWS(t, &fakeService{info: func(context.Context) (*api.WsInfo, error) {
		close(started)
		<-release
		finished.Store(true)
		return &api.WsInfo{}, nil
	}}, WebsocketConfig{})
	c := mustDial(t, srv)
	if err := c.WriteMessage(websocket.TextMessage, []byte(`{"id":"1","method":"getInfo"}`)); err != nil {
		t.Fatal(err)
	}
	<-started
	done := make(chan error, 1)
	go func() { done <- ws.Shutdown(context.Background()) }()
	_ = c.SetReadDeadline(time.Now().Add(waitGuard))
	_, _, err := c.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.CloseGoingAway {
		t.Fatalf("want close 1001, got %v", err)
	}
	select {
	case err := <-done:
		t.Fatalf("Shutdown returned (%v) while a request was running", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-done; err != nil || !finished.Load() {
		t.Fatalf("shutdown: %v finished=%v", err, finished.Load())
	}
	if _, resp, err := dial(t, srv, nil); err == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("connecting after shutdown: %v %v", resp, err)
	}
}

// The method table holds exactly the methods of the API contract
// (shared/API.md, blockbook-api.d.ts's WsReq plus the filter calls).
func TestWebsocketMethodTable(t *testing.T) {
	want := []string{"estimateFee", "getAccountInfo", "getAccountUtxo", "getBalanceHistory", "getBlock", "getBlockFilter",
		"getBlockFiltersBatch", "getBlockHash", "getContractInfo", "getCurrentFiatRates", "getFiatRatesForTimestamps", "getFiatRatesTickersList",
		"getInfo", "getMempoolFilters", "getSilentPaymentTweaks", "getTransaction", "getTransactionSpecific", "longTermFeeRate", "ping", "rpcCall", "sendTransaction",
		"subscribeAddresses", "subscribeFiatRates", "subscribeNewBlock", "subscribeNewTransaction", "unsubscribeAddresses",
		"unsubscribeFiatRates", "unsubscribeNewBlock", "unsubscribeNewTransaction"}
	if got := WebsocketMethods(); !slices.Equal(got, want) {
		t.Fatalf("methods %v\nwant %v", got, want)
	}
}

// addrService adds address handling to fakeService: an address's
// descriptor is its own bytes.
type addrService struct{ fakeService }

func (addrService) AddrDesc(a string) (bchain.AddrDesc, error)   { return bchain.AddrDesc(a), nil }
func (addrService) DescAddress(d bchain.AddrDesc) (string, bool) { return string(d), true }

func notice(txid byte, descs ...string) api.TxNotice {
	n := api.TxNotice{Txid: bchain.Hash{txid}, Render: func(context.Context) (*api.Tx, error) {
		return &api.Tx{Txid: bchain.Hash{txid}.String(), BlockHeight: -1}, nil
	}}
	for _, d := range descs {
		n.Descs = append(n.Descs, bchain.AddrDesc(d))
	}
	return n
}

// A tx announced a second time because an input turned out to spend from a
// subscribed address reaches that address's subscribers only, not the
// subscribers of every new tx (who already had it).
func TestWebsocketResolvedInputNotification(t *testing.T) {
	ws, srv := startWS(t, &addrService{fakeService{info: okInfo}}, WebsocketConfig{EnableSubNewTx: true})
	c := mustDial(t, srv)
	for _, frame := range []string{`{"id":"addrs","method":"subscribeAddresses","params":{"addresses":["alice"]}}`,
		`{"id":"all","method":"subscribeNewTransaction"}`} {
		if _, data := roundTrip(t, c, websocket.TextMessage, frame); !strings.Contains(string(data), `"subscribed":true`) {
			t.Fatalf("%s: %s", frame, data)
		}
	}
	next := func() (string, string) {
		t.Helper()
		_ = c.SetReadDeadline(time.Now().Add(waitGuard))
		_, msg, err := c.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			ID   string `json:"id"`
			Data json.RawMessage
		}
		_ = json.Unmarshal(msg, &m)
		return m.ID, string(m.Data)
	}
	ws.OnMempoolTxResolved(notice(1, "alice"))
	if id, data := next(); id != "addrs" || !strings.Contains(data, `"address":"alice"`) || !strings.Contains(data, bchain.Hash{1}.String()) {
		t.Fatalf("resolved input: %s %s", id, data)
	}
	ws.OnMempoolTx(notice(2, "bob"))
	if id, data := next(); id != "all" || !strings.Contains(data, bchain.Hash{2}.String()) {
		t.Fatalf("a new tx after the resolution (the resolution must not have reached the new-tx subscription): %s %s", id, data)
	}
}

// An expensive request takes a place of the process-wide gate every front
// shares: with none free it is answered "Server busy" without running,
// while a cheap one is served.
func TestWebsocketGate(t *testing.T) {
	gate := listen.NewGate(1, 20*time.Millisecond, nil)
	release, ok := gate.Enter(context.Background(), "other front")
	if !ok {
		t.Fatal("no place in an empty gate")
	}
	_, srv := startWS(t, &fakeService{info: func(context.Context) (*api.WsInfo, error) {
		return &api.WsInfo{Name: "Testcoin"}, nil
	}}, WebsocketConfig{Gate: gate})
	c := mustDial(t, srv)
	for _, m := range []string{
		`{"id":"heavy","method":"getAccountInfo","params":{"descriptor":"x","details":"txs","pageSize":1000}}`,
		`{"id":"cheap","method":"getInfo"}`,
	} {
		if err := c.WriteMessage(websocket.TextMessage, []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]string{}
	for len(got) < 2 {
		_ = c.SetReadDeadline(time.Now().Add(waitGuard))
		_, data, err := c.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			ID   string          `json:"id"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatal(err)
		}
		got[r.ID] = string(r.Data)
	}
	if !strings.Contains(got["heavy"], "Server busy") || !strings.Contains(got["cheap"], "Testcoin") {
		t.Fatalf("with the gate full: %v", got)
	}
	release()
	if n := gate.InProgress(); n != 0 {
		t.Fatalf("%d places held after the answers", n)
	}
}
