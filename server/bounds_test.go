package server

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/openexplorer/blockbook/api"
)

// JSON answers, errors included, tell browsers not to sniff them.
func TestJSONAnswersAreNosniff(t *testing.T) {
	s := newServed(t)
	for _, path := range []string{"/api/v2", "/api/v2/tx/nothex<script>", "/api/v2/block-index/1"} {
		resp, err := s.srv.Client().Get(s.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options %q, want nosniff", path, got)
		}
	}
}

// A preflight to any API path answers 204 with the CORS headers and runs no
// handler (a handler would answer 200 or 400 with a JSON body).
func TestCORSPreflight(t *testing.T) {
	s := newServed(t)
	for _, path := range []string{"/api", "/api/v2/tx/" + strings.Repeat("ab", 32), "/api/v2/sendtx/", "/api/v1/nosuch"} {
		req, err := http.NewRequest(http.MethodOptions, s.srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Origin", "https://wallet.example")
		req.Header.Set("Access-Control-Request-Method", "POST")
		resp, err := s.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		h := resp.Header
		if resp.StatusCode != http.StatusNoContent || resp.ContentLength > 0 {
			t.Errorf("OPTIONS %s: %d (%d bytes), want 204 empty", path, resp.StatusCode, resp.ContentLength)
		}
		if h.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") ||
			!strings.Contains(h.Get("Access-Control-Allow-Headers"), "Content-Type") {
			t.Errorf("OPTIONS %s: CORS headers %v", path, h)
		}
	}
	if !isAPIPath("/prefix/api/v2/tx/x") || isAPIPath("/tx/abc") || isAPIPath("/apiary") {
		t.Error("isAPIPath misreads a path")
	}
}

// REST list parameters past their bounds are a 400 naming the bound.
func TestRESTListBounds(t *testing.T) {
	s := newServed(t)
	ts := strings.TrimSuffix(strings.Repeat("1700000000,", api.MaxFiatTimestamps+1), ",")
	code, _, body := s.do(t, "GET", "/api/v2/multi-tickers/?timestamp="+ts, "")
	if code != http.StatusBadRequest || !strings.Contains(string(body), "Too many timestamps: 10001, at most 10000") {
		t.Errorf("multi-tickers over the bound: %d %s", code, body)
	}
	ts = strings.TrimSuffix(strings.Repeat("1700000000,", api.MaxFiatTimestamps), ",")
	if code, _, body = s.do(t, "GET", "/api/v2/multi-tickers/?timestamp="+ts, ""); code != http.StatusOK {
		t.Errorf("multi-tickers at the bound: %d %.200s", code, body)
	}
	cur := strings.TrimSuffix(strings.Repeat("usd,", api.MaxCurrencies+1), ",")
	code, _, body = s.do(t, "GET", "/api/v2/balancehistory/"+s.f.DemoAddress+"?fiatcurrency="+cur, "")
	if code != http.StatusBadRequest || !strings.Contains(string(body), "Too many currencies") {
		t.Errorf("balancehistory with %d currencies: %d %s", api.MaxCurrencies+1, code, body)
	}
}

// Websocket: a height no block can have is out of range, a valid one past
// the tip answers "", and a non-integer keeps the type error.
func TestWebsocketBoundsOnFixture(t *testing.T) {
	s := newServed(t)
	c := mustDial(t, s.srv)
	tip := s.f.TipHeight()
	for i, tc := range []struct{ height, wantErr, wantHash string }{
		{"-1", "Block height -1 is out of range, it must be 0 to 4294967295", ""},
		{"4294967296", "Block height 4294967296 is out of range", ""},
		{"-99999999999999999999999", "Block height -99999999999999999999999 is out of range", ""},
		{"1.5", "Invalid params: height must be a number", ""},
		{`"7"`, "Invalid params: height must be a number, got string", ""},
		{strconv.Itoa(tip + 1000), "", `{"hash":""}`},
		{"4294967295", "", `{"hash":""}`},
		{"57", "", `{"hash":"` + s.f.BlockHash(57) + `"}`},
	} {
		id, data := roundTrip(t, c, websocket.TextMessage, `{"id":"`+strconv.Itoa(i)+`","method":"getBlockHash","params":{"height":`+tc.height+`}}`)
		if id != strconv.Itoa(i) {
			t.Fatalf("answer %s to request %d", id, i)
		}
		msg := errorMessage(data)
		if tc.wantErr != "" && !strings.HasPrefix(msg, tc.wantErr) || tc.wantErr == "" && string(data) != tc.wantHash {
			t.Errorf("height %s: %s, want error %q or %s", tc.height, data, tc.wantErr, tc.wantHash)
		}
	}
	tokens := make([]string, wsMaxFiatTokens+1)
	frame, err := json.Marshal(wsParams{"id": "t", "method": "subscribeFiatRates", "params": wsParams{"tokens": tokens}})
	if err != nil {
		t.Fatal(err)
	}
	if _, data := roundTrip(t, c, websocket.TextMessage, string(frame)); !strings.HasPrefix(errorMessage(data), "Too many tokens: 1001") {
		t.Errorf("subscribeFiatRates over the bound: %.300s", data)
	}
	ts := make([]int64, api.MaxFiatTimestamps+1)
	frame, err = json.Marshal(wsParams{"id": "f", "method": "getFiatRatesForTimestamps", "params": wsParams{"timestamps": ts}})
	if err != nil {
		t.Fatal(err)
	}
	if _, data := roundTrip(t, c, websocket.TextMessage, string(frame)); !strings.HasPrefix(errorMessage(data), "Too many timestamps: 10001") {
		t.Errorf("getFiatRatesForTimestamps over the bound: %.300s", data)
	}
}
