package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// getBody is one GET with a client that outwaits rpc_timeout; a transport
// error is status 0. Safe in goroutines (no t).
func getBody(url string) (int, string, time.Duration) {
	code, body, took, err := requestWithin("GET", url, "", 60*time.Second)
	if err != nil {
		return 0, err.Error(), took
	}
	return code, body, took
}

// nodeURLIn reports which of the node's addresses (host:port of each URL)
// a text gives away.
func nodeURLIn(text string, nodeURLs ...string) string {
	for _, raw := range nodeURLs {
		if u, err := url.Parse(raw); err == nil && u.Host != "" && strings.Contains(text, u.Host) {
			return u.Host
		}
	}
	return ""
}

// ethLoad runs clients goroutines sending node-bound REST requests (paths
// in turn) for d while /health is asked every 100 ms, and returns the
// status counts of each.
func ethLoad(base, internal string, paths []string, clients int, d time.Duration) (rest, health map[int]int, bodies []string) {
	rest, health = map[int]int{}, map[int]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	stop := time.Now().Add(d)
	var n atomic.Int64
	for range clients {
		wg.Go(func() {
			for first := true; first || time.Now().Before(stop); first = false {
				code, body, _ := getBody(base + paths[int(n.Add(1))%len(paths)])
				mu.Lock()
				rest[code]++
				if code != http.StatusOK && len(bodies) < 5 {
					bodies = append(bodies, body)
				}
				mu.Unlock()
			}
		})
	}
	wg.Go(func() {
		for time.Now().Before(stop) {
			code, body, _ := getBody(internal + "/health")
			mu.Lock()
			health[code]++
			if code != http.StatusOK && len(bodies) < 5 {
				bodies = append(bodies, "/health: "+body)
			}
			mu.Unlock()
			time.Sleep(100 * time.Millisecond)
		}
	})
	wg.Wait()
	return rest, health, bodies
}

// checkEthLoadKeepsHealth: heavy client load of node-bound requests on the
// Ethereum stack, with geth answering, never makes /health fail nor a
// node-bound request answer 503 (the probe has its own connections,
// eth.Node.ProbeChain); the proxy counts that the load reached the node.
func checkEthLoadKeepsHealth(t *testing.T, base, internal string, proxy *stallProxy, paths []string) {
	t.Helper()
	before := proxy.forwarded.Load()
	start := time.Now()
	const clients = 48
	rest, health, bodies := ethLoad(base, internal, paths, clients, 4*time.Second)
	calls := proxy.forwarded.Load() - before
	t.Logf("under load for %v: REST %v, /health %v, %d node calls", time.Since(start).Round(time.Millisecond), rest, health, calls)
	if rest[http.StatusServiceUnavailable] > 0 || health[http.StatusOK] == 0 || len(health) != 1 {
		t.Errorf("a healthy geth under client load: REST %v, /health %v: %q", rest, health, bodies)
	}
	// Every client was answered at least once (a machine at load 28 with
	// -race answered 48 to 60 in 4 s), each answer a node call or two.
	if rest[http.StatusOK] < clients || calls < clients {
		t.Errorf("the load was not heavy: %d answers, %d node calls", rest[http.StatusOK], calls)
	}
}

// inFlightAnswer is the status, body and time of a request sent right
// after the node froze, before the probe could know (sendInFlight).
type inFlightAnswer struct {
	path string
	code int
	body string
	took time.Duration
}

func sendInFlight(base string, paths []string) chan inFlightAnswer {
	out := make(chan inFlightAnswer, len(paths))
	for _, p := range paths {
		go func() {
			code, body, took := getBody(base + p)
			out <- inFlightAnswer{p, code, body, took}
		}()
	}
	return out
}
