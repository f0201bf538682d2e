package server

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// Past the message rate a connection gets error answers, and its address
// is blocked from new connections; a local tool is not limited.
func TestWebsocketMessageRate(t *testing.T) {
	over := NewOverLimits(time.Hour)
	s, srv := startWS(t, &fakeService{}, WebsocketConfig{MessageRate: 3, MessageWindow: time.Hour, IPBlockDuration: time.Hour, Over: over})
	public := http.Header{"X-Real-Ip": {"203.0.113.7"}}
	c, _, err := dial(t, srv, public)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, data := roundTrip(t, c, websocket.TextMessage, `{"id":"p","method":"ping"}`); string(data) != "{}" && !strings.Contains(string(data), `"data":{}`) {
			t.Fatalf("ping %d: %s", i, data)
		}
	}
	if _, data := roundTrip(t, c, websocket.TextMessage, `{"id":"x","method":"ping"}`); !strings.Contains(string(data), "Too many messages") {
		t.Fatalf("4th message: %s", data)
	}
	if _, resp, err := dial(t, srv, public); err == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("blocked address connected: %v", err)
	}
	if _, ok := s.Blocked()["203.0.113.7"]; !ok {
		t.Fatal("address not listed as blocked")
	}
	if _, ws := over.List(); len(ws) != 1 || ws[0].Limit != "messages" {
		t.Fatalf("over-limit list: %+v", ws)
	}
	local := mustDial(t, srv)
	for i := 0; i < 5; i++ {
		if _, data := roundTrip(t, local, websocket.TextMessage, `{"id":"p","method":"ping"}`); strings.Contains(string(data), "Too many") {
			t.Fatalf("local tool limited: %s", data)
		}
	}
}

// getAccountInfo may ask for a bounded number of distinct accounts per
// connection; asking again for a known one is fine.
func TestWebsocketGetAccountInfoLimit(t *testing.T) {
	_, srv := startWS(t, &fakeService{}, WebsocketConfig{GetAccountInfoLimit: 1})
	c, _, err := dial(t, srv, http.Header{"X-Real-Ip": {"203.0.113.8"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, data := roundTrip(t, c, websocket.TextMessage, `{"id":"1","method":"getAccountInfo","params":{"descriptor":"a"}}`); strings.Contains(string(data), "Too many accounts") {
		t.Fatalf("first account: %s", data)
	}
	if _, data := roundTrip(t, c, websocket.TextMessage, `{"id":"2","method":"getAccountInfo","params":{"descriptor":"a"}}`); strings.Contains(string(data), "Too many accounts") {
		t.Fatalf("same account again: %s", data)
	}
	if _, data := roundTrip(t, c, websocket.TextMessage, `{"id":"3","method":"getAccountInfo","params":{"descriptor":"b"}}`); !strings.Contains(string(data), "Too many accounts on this connection (limit 1)") {
		t.Fatalf("second account: %s", data)
	}
}

func TestWSCost(t *testing.T) {
	for params, want := range map[string]int{
		`{"method":"ping"}`: 1,
		`{"method":"getAccountInfo","params":{"descriptor":"x","details":"txs"}}`:                                1,
		`{"method":"getAccountInfo","params":{"descriptor":"x","details":"txs","pageSize":1000}}`:                11,
		`{"method":"getAccountInfo","params":{"descriptor":"x","details":"txs","pageSize":"1000"}}`:              11,
		`{"method":"getAccountInfo","params":{"descriptor":"x","gap":10000}}`:                                    21,
		`{"method":"getAccountInfo","params":{"descriptor":"x","details":"txs","pageSize":1000,"gap":10000}}`:    31,
		`{"method":"getAccountUtxo","params":{"descriptor":"x","gap":100000}}`:                                   21,
		`{"method":"getAccountInfo","params":{"descriptor":"x","details":"txs","pageSize":100000,"gap":100000}}`: 48,
	} {
		req, err := parseRequest([]byte(params))
		if err != nil {
			t.Fatal(err)
		}
		if got := wsCost(&req, 48); got != want {
			t.Errorf("%s: %d, want %d", params, got, want)
		}
	}
}

// A heavy request takes its cost in slots; one that does not fit takes
// none (a partial take is given back).
func TestTakePending(t *testing.T) {
	c := &wsConn{pending: make(chan struct{}, 12)}
	heavy, _ := parseRequest([]byte(`{"method":"getAccountInfo","params":{"descriptor":"x","details":"txs","pageSize":1000}}`))
	ping, _ := parseRequest([]byte(`{"method":"ping"}`))
	if n := c.takePending(&heavy); n != 11 {
		t.Fatalf("first heavy took %d", n)
	}
	if n := c.takePending(&heavy); n != 0 || len(c.pending) != 11 {
		t.Fatalf("second heavy took %d, %d slots held", n, len(c.pending))
	}
	if n := c.takePending(&ping); n != 1 {
		t.Fatalf("ping beside it took %d", n)
	}
	c.releasePending(12)
	if len(c.pending) != 0 {
		t.Fatal("slots not released")
	}
}
