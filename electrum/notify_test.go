package electrum

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"math/big"
	"net"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/openexplorer/blockbook/bchain"
)

// tipAddress is a ledger address with a tx in the tip block.
func tipAddress(t *testing.T, s *served) (string, []historyItem) {
	t.Helper()
	for _, addr := range ledgerAddresses(s.f) {
		h := wantHistory(t, s, addr)
		for _, it := range h {
			if it.Fee == nil && int(it.Height) == s.f.TipHeight() {
				return addr, h
			}
		}
	}
	t.Fatal("no ledger address has a tx in the tip block")
	return "", nil
}

// rechecks counts the sessions' notification passes, so that a test can
// wait for one instead of sleeping.
func rechecks(s *served) chan struct{} {
	ch := make(chan struct{}, 100)
	s.srv.hooks.afterRecheck = func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	return ch
}

func waitRecheck(t *testing.T, ch chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(ioGuard):
		t.Fatal("no recheck")
	}
}

// A reorg that undoes the block of an address's tx changes its status:
// every subscriber is notified of the new status, and again when the
// block comes back; an unsubscribed client is not.
func TestReorgNotifiesStatus(t *testing.T) {
	s := newServedOwn(t, Config{})
	addr, hist := tipAddress(t, s)
	sh := scripthashOf(t, s.f, addr)
	a, b, gone := s.negotiated(t, "1.4"), s.negotiated(t, "1.6"), s.negotiated(t, "1.4")
	before := map[*client]*string{}
	for _, c := range []*client{a, b, gone} {
		before[c] = ok[*string](t, c, "blockchain.scripthash.subscribe", sh)
	}
	if !ok[bool](t, gone, "blockchain.scripthash.unsubscribe", sh) {
		t.Fatal("unsubscribe answered false")
	}
	tip := s.f.TipHeight()
	if n := ok[headerNote](t, a, "blockchain.headers.subscribe"); int(n.Height) != tip {
		t.Fatalf("tip %+v", n)
	}
	var kept []historyItem
	for _, it := range hist {
		if it.Fee != nil || int(it.Height) < s.f.TipHeight() {
			kept = append(kept, it)
		}
	}
	s.disconnectTip(t)
	for _, c := range []*client{a, b} {
		n := c.note("blockchain.scripthash.subscribe")
		got := ok[[]historyItem](t, c, "blockchain.scripthash.get_history", sh)
		if len(got) != len(kept) || len(n.Params) != 2 || n.Params[0] != sh || !sameStatus(noteStatus(t, n), status(got)) || sameStatus(noteStatus(t, n), before[c]) {
			t.Errorf("after the reorg: %+v, history %v", n, got)
		}
	}
	if n := a.note("blockchain.headers.subscribe"); !strings.Contains(string(mustJSON(t, n.Params)), `"height":`+strconv.Itoa(tip-1)+`,`) {
		t.Errorf("header after the reorg: %+v", n)
	}
	s.reconnectTip(t)
	if n := a.note("blockchain.headers.subscribe"); !strings.Contains(string(mustJSON(t, n.Params)), `"height":`+strconv.Itoa(tip)+`,`) {
		t.Errorf("header after the block came back: %+v", n)
	}
	for _, c := range []*client{a, b} {
		if n := c.note("blockchain.scripthash.subscribe"); !sameStatus(noteStatus(t, n), before[c]) {
			t.Errorf("block back: %+v, want %v", n, *before[c])
		}
	}
	// The unsubscribed client heard nothing: its next answer comes first.
	gone.call("server.ping")
	if len(gone.notes) != 0 {
		t.Errorf("unsubscribed client notified: %+v", gone.notes)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A client that sends calls and never reads their answers fills its own
// queues only: the others are served, events are taken at once, and the
// server closes it when a write stalls for WriteTimeout.
func TestSlowClientIsolated(t *testing.T) {
	s := newServed(t, Config{WriteTimeout: 500 * time.Millisecond})
	slow, fast := s.negotiated(t, "1.4"), s.negotiated(t, "1.4")
	ok[*string](t, slow, "blockchain.scripthash.subscribe", scripthashOf(t, s.f, s.f.DemoAddress))
	req := `{"id":0,"method":"blockchain.block.headers","params":[0,2016]}` + "\n"
	go func() { // the answers (about 20 KB each) are never read
		for range 600 {
			if _, err := slow.c.Write([]byte(req)); err != nil {
				return
			}
		}
	}()
	for range 20 {
		s.srv.OnBlock()
		s.srv.OnMempoolTx(nil)
		if p := fast.call("server.ping"); p.Error != nil {
			t.Fatal(p.Error)
		}
	}
	deadline := time.Now().Add(ioGuard)
	for s.srv.Sessions() != 1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := s.srv.Sessions(); n != 1 {
		t.Errorf("%d sessions: the stalled one was not closed", n)
	}
	if p := fast.call("server.ping"); p.Error != nil {
		t.Error(p.Error)
	}
}

// A connection that sends nothing for IdleTimeout is closed.
func TestIdleTimeout(t *testing.T) {
	s := newServed(t, Config{IdleTimeout: 300 * time.Millisecond})
	c := s.negotiated(t, "1.4")
	if line := c.readLine(); line != "" {
		t.Errorf("idle connection got %q", line)
	}
	deadline := time.Now().Add(ioGuard)
	for s.srv.Sessions() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := s.srv.Sessions(); n != 0 {
		t.Errorf("%d sessions left", n)
	}
}

func noteStatus(t *testing.T, n notification) *string {
	t.Helper()
	if len(n.Params) != 2 {
		t.Fatalf("notification %+v", n)
	}
	switch v := n.Params[1].(type) {
	case nil:
		return nil
	case string:
		return &v
	}
	t.Fatalf("status %v", n.Params[1])
	return nil
}

// A block connected on the tip rechecks the scripts it touches: their
// subscribers hear of it without a full recheck.
func TestBlockConnectedNotifies(t *testing.T) {
	s := newServedOwn(t, Config{})
	addr, _ := tipAddress(t, s)
	sh := scripthashOf(t, s.f, addr)
	if _, _, err := s.index(t).DisconnectTip(nil); err != nil { // the server is not told
		t.Fatal(err)
	}
	c := s.negotiated(t, "1.6")
	before := ok[*string](t, c, "blockchain.scripthash.subscribe", sh)
	ok[headerNote](t, c, "blockchain.headers.subscribe")
	s.reconnectTip(t)
	n := c.note("blockchain.scripthash.subscribe")
	if now := ok[[]historyItem](t, c, "blockchain.scripthash.get_history", sh); sameStatus(noteStatus(t, n), before) || !sameStatus(noteStatus(t, n), status(now)) {
		t.Errorf("after the block: %+v, before %v", n, before)
	}
	if h := c.note("blockchain.headers.subscribe"); !strings.Contains(string(mustJSON(t, h.Params)), `"height":`+strconv.Itoa(s.f.TipHeight())+`,`) {
		t.Errorf("header %+v", h)
	}
}

// A mempool event that does not change a status notifies nothing.
func TestUnchangedStatusIsQuiet(t *testing.T) {
	s := newServed(t, Config{})
	ch := rechecks(s)
	c := s.negotiated(t, "1.4")
	script, err := s.f.Parser.AddrDescFromAddress(s.f.DemoAddress)
	if err != nil {
		t.Fatal(err)
	}
	ok[*string](t, c, "blockchain.scripthash.subscribe", ScriptHash(script))
	s.srv.OnMempoolTx(nil)
	s.srv.OnMempoolTx([]bchain.AddrDesc{script})
	waitRecheck(t, ch)
	c.call("server.ping")
	if len(c.notes) != 0 {
		t.Errorf("notified without a change: %+v", c.notes)
	}
}

// The websocket transport: one message per call, notifications too.
func TestWebsocketTransport(t *testing.T) {
	s := newServedOwn(t, Config{})
	hs := httptest.NewServer(s.srv.WebsocketHandler())
	defer hs.Close()
	ws, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(hs.URL, "http")+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	call := func(req string) map[string]any {
		t.Helper()
		if err := ws.WriteMessage(websocket.TextMessage, []byte(req)); err != nil {
			t.Fatal(err)
		}
		_ = ws.SetReadDeadline(time.Now().Add(ioGuard))
		_, msg, err := ws.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(string(msg), "\n") {
			t.Errorf("websocket message ends with a newline")
		}
		var m map[string]any
		if err := json.Unmarshal(msg, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	if m := call(`{"jsonrpc":"2.0","id":1,"method":"server.version","params":["ws","1.6"]}`); m["result"].([]any)[1] != "1.6" {
		t.Errorf("version %v", m)
	}
	addr, _ := tipAddress(t, s)
	sh := scripthashOf(t, s.f, addr)
	if m := call(`{"jsonrpc":"2.0","id":2,"method":"blockchain.scripthash.subscribe","params":["` + sh + `"]}`); m["result"] == nil {
		t.Errorf("subscribe %v", m)
	}
	s.disconnectTip(t)
	_ = ws.SetReadDeadline(time.Now().Add(ioGuard))
	_, msg, err := ws.ReadMessage()
	if err != nil || !strings.Contains(string(msg), `"method":"blockchain.scripthash.subscribe"`) || !strings.Contains(string(msg), sh) {
		t.Errorf("notification %s %v", msg, err)
	}
}

// The TLS transport: the same lines inside TLS.
func TestTLSTransport(t *testing.T) {
	s := newServed(t, Config{})
	cert, pool := selfSigned(t)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.srv.Serve(ln) }()
	conn, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	c := newClient(t, conn)
	if v := ok[[]string](t, c, "server.version", "tls", "1.4"); v[1] != "1.4" {
		t.Errorf("version %v", v)
	}
	if h := ok[headerNote](t, c, "blockchain.headers.subscribe"); int(h.Height) != s.f.TipHeight() {
		t.Errorf("tip %+v", h)
	}
}

// selfSigned makes a certificate for 127.0.0.1 and a pool that trusts it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "electrum test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(parsed)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}

// Closing the server ends every session.
func TestCloseEndsSessions(t *testing.T) {
	s := newServed(t, Config{})
	c := s.negotiated(t, "1.4")
	ctx, cancel := context.WithTimeout(context.Background(), ioGuard)
	defer cancel()
	if err := s.srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if line := c.readLine(); line != "" {
		t.Errorf("after Close: %q", line)
	}
	if n := s.srv.Sessions(); n != 0 {
		t.Errorf("%d sessions after Close", n)
	}
}
