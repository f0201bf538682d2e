package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// dialElectrumAs opens an Electrum websocket as a local proxy (nginx's
// `proxy_set_header X-Real-Ip $remote_addr`, tools/nginxlb) does for a
// remote client: a loopback peer is a trusted proxy by the documented
// rule, so realIP ("" sends none: the peer itself, exempt) is the client.
func dialElectrumAs(t *testing.T, addr, realIP string) *websocket.Conn {
	t.Helper()
	h := http.Header{}
	if realIP != "" {
		h.Set("X-Real-Ip", realIP)
	}
	c, _, err := websocket.DefaultDialer.Dial("ws://"+addr+"/", h)
	if err != nil {
		t.Fatalf("electrum websocket as %q: %v", realIP, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

type rateAnswer struct {
	ID    int `json:"id"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

var retryIn = regexp.MustCompile(`retry in (\d+) s`)

// pingBatch sends a batch of n server.ping and returns how many were
// served and the seconds to wait the limited ones name (the largest).
func pingBatch(t *testing.T, c *websocket.Conn, n int) (served, limited, retry int) {
	t.Helper()
	calls := make([]string, n)
	for i := range calls {
		calls[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"server.ping","params":[]}`, i+1)
	}
	_ = c.SetWriteDeadline(time.Now().Add(waitFor))
	if err := c.WriteMessage(websocket.TextMessage, []byte("["+strings.Join(calls, ",")+"]")); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(waitFor))
	_, msg, err := c.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	var answers []rateAnswer
	if err := json.Unmarshal(msg, &answers); err != nil || len(answers) != n {
		t.Fatalf("a batch of %d: %d answers, %v: %.300s", n, len(answers), err, msg)
	}
	for _, a := range answers {
		switch {
		case a.Error == nil:
			served++
		case a.Error.Code == -101 && strings.Contains(a.Error.Message, "rate limit"):
			limited++
			m := retryIn.FindStringSubmatch(a.Error.Message)
			if m == nil {
				t.Fatalf("a limited call names no time to retry: %q", a.Error.Message)
			}
			s, _ := strconv.Atoi(m[1])
			retry = max(retry, s)
		default:
			t.Fatalf("call %d: %d %q", a.ID, a.Error.Code, a.Error.Message)
		}
	}
	return served, limited, retry
}

// -electrumcallsperminute and -electrumcallburst on the real stack, the
// client named by X-Real-Ip from a local (trusted) proxy: past the burst a
// call answers -101 with the seconds to retry, over all the client's
// connections, and served again after them; another client, and the proxy
// itself naming no one (a local peer, exempt), are not affected.
func checkElectrumRateLimit(t *testing.T, ls *listenersStack) {
	const client, other = "203.0.113.47", "198.51.100.47"
	a := dialElectrumAs(t, ls.electrumWS, client)
	const over = testCallBurst + 50
	start := time.Now()
	served, limited, retry := pingBatch(t, a, over)
	// A token refills every second, so a slow machine may serve one more
	// for each second the batch took.
	refilled := 1 + int(time.Since(start).Seconds()*testCallsPerMin/60)
	if served < testCallBurst || served > testCallBurst+refilled || limited != over-served {
		t.Fatalf("%s: a batch of %d past a burst of %d: %d served, %d limited", client, over, testCallBurst, served, limited)
	}
	if retry < 1 || retry > 60/testCallsPerMin+1 {
		t.Errorf("%s: retry in %d s, want about %d", client, retry, 60/testCallsPerMin)
	}
	// The same client on a new connection is still limited.
	if served, limited, _ := pingBatch(t, dialElectrumAs(t, ls.electrumWS, client), 3); limited == 0 {
		t.Errorf("%s on a second connection: %d served, none limited", client, served)
	}
	// Another client has its whole burst; the local proxy is exempt.
	if served, limited, _ := pingBatch(t, dialElectrumAs(t, ls.electrumWS, other), testCallBurst); served != testCallBurst {
		t.Errorf("%s (another client): %d of its burst of %d served, %d limited", other, served, testCallBurst, limited)
	}
	if served, limited, _ := pingBatch(t, dialElectrumAs(t, ls.electrumWS, ""), 3*testCallBurst); limited != 0 {
		t.Errorf("the local proxy itself (exempt): %d served, %d limited", served, limited)
	}
	// After the time it was told, the client is served again.
	time.Sleep(time.Duration(retry) * time.Second)
	if served, _, _ := pingBatch(t, a, 1); served != 1 {
		t.Errorf("%s: not served %d s after the limit, as its answer said", client, retry)
	}
}

// One client's script-hash subscriptions stop at
// -electrummaxsubsbytesperip (64 KiB here, each counted as 512 bytes plus
// its script) with -101, and a closed connection gives its bytes back
// (before, the only caps were counts: 100,000 a connection and 1,000
// connections an address, tens of GB). The client is counted as a remote
// one is: named by X-Real-Ip on the websocket, the test being its local
// proxy. The proxy's own connection (a loopback peer, e.g. a TLS
// terminator in front of many wallets) is exempt from the per-address
// caps, as from every per-client limit.
func checkElectrumSubsBytes(t *testing.T, ls *listenersStack) {
	const n, client = 300, "192.0.2.48"
	if got, refused := subscribeMany(t, n, func(batch string) []byte {
		c := dialElectrum(t, ls.electrum)
		defer c.c.Close()
		return electrumExchange(t, c, batch)
	}); got != n || refused != 0 {
		t.Errorf("the local proxy itself (exempt): %d of %d subscriptions held, %d refused", got, n, refused)
	}
	viaProxy := func(batch string) []byte {
		c := dialElectrumAs(t, ls.electrumWS, client)
		defer c.Close()
		return wsExchange(t, c, batch)
	}
	got, refused := subscribeMany(t, n, viaProxy)
	t.Logf("%d subscriptions asked under a %d-byte cap: %d held, %d refused", n, testSubsBytes, got, refused)
	if got == 0 || got > testSubsBytes/512 || got+refused != n {
		t.Errorf("%d subscriptions under a %d-byte cap: %d held, %d refused", n, testSubsBytes, got, refused)
	}
	deadline := time.Now().Add(waitFor)
	for { // the closed connection's bytes come back
		again, _ := subscribeMany(t, got, viaProxy)
		if again == got {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the first connection closed, %d of %d subscriptions held", again, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// subscribeMany subscribes to n script hashes in one batch over
// exchange's new connection and counts the answers: held, or refused
// at the memory cap.
func subscribeMany(t *testing.T, n int, exchange func(batch string) []byte) (subscribed, refused int) {
	t.Helper()
	calls := make([]string, n)
	for i := range calls {
		calls[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"blockchain.scripthash.subscribe","params":["%064x"]}`, i+1, i+1)
	}
	var answers []struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(exchange("["+strings.Join(calls, ",")+"]"), &answers); err != nil {
		t.Fatal(err)
	}
	for _, a := range answers {
		switch {
		case a.Error == nil:
			subscribed++
		case a.Error.Code == -101 && strings.Contains(a.Error.Message, "memory limit"):
			refused++
		default:
			t.Errorf("subscribe: %+v", a.Error)
		}
	}
	return subscribed, refused
}

// wsExchange sends one message on an Electrum websocket and reads the
// answer.
func wsExchange(t *testing.T, c *websocket.Conn, msg string) []byte {
	t.Helper()
	_ = c.SetWriteDeadline(time.Now().Add(waitFor))
	if err := c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(waitFor))
	_, b, err := c.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
