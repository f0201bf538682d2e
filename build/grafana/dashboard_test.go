// Package grafana holds the Grafana dashboard (blockbook.json) and its
// test: the dashboard parses, and every metric it queries is one that a
// running blockbook's /metrics exports.
package grafana

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/gorilla/websocket"

	"github.com/openexplorer/blockbook/app"
	"github.com/openexplorer/blockbook/internal/syncbuf"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/regtest"
)

// waitFor guards the event waits; it is not a speed assertion.
const waitFor = 90 * time.Second

type panel struct {
	Type    string  `json:"type"`
	Title   string  `json:"title"`
	Panels  []panel `json:"panels"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

type dashboard struct {
	Title      string  `json:"title"`
	UID        string  `json:"uid"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			Definition string `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
}

// queries returns every PromQL expression of the dashboard by where it is.
func queries(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile("blockbook.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("blockbook.json: %v", err)
	}
	if d.Title == "" || d.UID == "" {
		t.Fatalf("dashboard without title or uid")
	}
	out := map[string]string{}
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			if p.Type != "row" && len(p.Targets) == 0 {
				t.Errorf("panel %q queries nothing", p.Title)
			}
			for i, tg := range p.Targets {
				out[fmt.Sprintf("panel %q target %d", p.Title, i)] = tg.Expr
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Definition != "" {
			out["variable "+v.Name] = v.Definition
		}
	}
	if len(out) < 20 {
		t.Fatalf("only %d queries in the dashboard", len(out))
	}
	return out
}

var (
	quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	// Our metrics, and the Go runtime's and process collector's.
	metricName = regexp.MustCompile(`\b(?:blockbook|go|process)_[A-Za-z0-9_]+\b`)
)

// metricsIn lists the metric names a PromQL expression reads (label values
// removed first, so that a quoted value is never taken for a name).
func metricsIn(expr string) []string {
	return metricName.FindAllString(quoted.ReplaceAllString(expr, `""`), -1)
}

func TestMetricsIn(t *testing.T) {
	got := metricsIn(`histogram_quantile(0.95, sum by (le, method) (rate(blockbook_rpc_latency_seconds_bucket{instance=~"go_x|blockbook_y"}[5m]))) / go_goroutines`)
	if strings.Join(got, " ") != "blockbook_rpc_latency_seconds_bucket go_goroutines" {
		t.Errorf("metricsIn: %v", got)
	}
}

// Long: the scenario touches every labelled metric the dashboard reads
// (a Vec exports nothing until a label set is used), in the order a
// reader follows: sync, REST, websocket, a refused connection, mempool, a
// new block and its notification, then the scrape.
//
// Every metric the dashboard queries is exported by a real blockbook's
// /metrics after ordinary use: a btcd regtest chain synced, REST and
// websocket requests, a mempool payment mined in a new block.
func TestDashboardMetricsAreExported(t *testing.T) {
	qs := queries(t)
	node, err := regtest.Start(context.Background(), regtest.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = node.Stop() })
	g := chaingen.New(&chaincfg.RegressionNetParams, "grafana")
	for i := 0; i < int(chaincfg.RegressionNetParams.CoinbaseMaturity)+5; i++ {
		if _, err := g.AddBlock(); err != nil {
			t.Fatal(err)
		}
	}
	if err := g.Submit(context.Background(), node, 1); err != nil {
		t.Fatal(err)
	}
	pub, internal := start(t, node)
	height, _ := g.Tip()
	waitHeight(t, pub, height)

	for _, path := range []string{"/api/v2", "/api/v2/block-index/1", "/api/v2/tx/" + strings.Repeat("ab", 32)} {
		resp, err := http.Get(pub + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	ws := dialWS(t, pub)
	call(t, ws, `{"id":"1","method":"getInfo","params":{}}`)
	call(t, ws, `{"id":"2","method":"subscribeNewBlock","params":{}}`)
	// A second connection from this client is over -wsmaxconnsperip=1.
	if c, _, err := websocket.DefaultDialer.Dial(wsURL(pub), wsClient); err == nil {
		c.Close()
		t.Error("a second websocket connection was accepted over the per-IP limit")
	}

	addr, err := g.Address(chaingen.P2WPKH, 9001)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := g.CreatePayment([]chaingen.Output{{Address: addr, Value: 500_000}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := node.SendRawTransaction(context.Background(), tx); err != nil {
		t.Fatal(err)
	}
	waitMempool(t, pub)
	if _, err := g.AddBlock(tx); err != nil {
		t.Fatal(err)
	}
	if err := g.Submit(context.Background(), node, height+1); err != nil {
		t.Fatal(err)
	}
	readNotification(t, ws, "2")
	waitHeight(t, pub, height+1)

	exported := scrape(t, internal)
	for where, expr := range qs {
		names := metricsIn(expr)
		if len(names) == 0 {
			t.Errorf("%s: no metric name found in %q", where, expr)
		}
		for _, n := range names {
			if !exported[n] {
				t.Errorf("%s queries %s, which /metrics does not export", where, n)
			}
		}
	}
}

// start runs blockbook in-process on free loopback ports.
func start(t *testing.T, node *regtest.Node) (public, internal string) {
	t.Helper()
	cfg := fmt.Sprintf(`{"coin_name":"Regtest","rpc_url":%q,"rpc_user":%q,"rpc_pass":%q,"rpc_timeout":25,"parse":true}`,
		node.RPCURL, node.RPCUser, node.RPCPass)
	cfgPath := t.TempDir() + "/blockchaincfg.json"
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	addrs := make(chan [2]string, 2)
	o := &app.Options{
		BlockchainCfg: cfgPath, DataDir: t.TempDir(), Sync: true, Public: "127.0.0.1:0", Internal: "127.0.0.1:0",
		Workers: 2, DBCache: 32 << 20, DBMaxOpenFiles: 256, Rollback: -1, SyncMemoryMB: 64, LogFormat: "text",
		ResyncMempoolMs: 60_000, WsMaxConnsPerIP: 1, XpubMaxGap: 100, XpubCacheSize: 1000, BalanceHistoryMaxTxs: 1000,
		OnListen: func(name, addr string) { addrs <- [2]string{name, addr} },
	}
	logs := &syncbuf.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, o, slog.New(slog.NewTextHandler(logs, nil))) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("blockbook exited with error: %v\n%s", err, logs)
			}
		case <-time.After(waitFor):
			t.Errorf("blockbook did not stop\n%s", logs)
		}
	})
	for i := 0; i < 2; i++ {
		select {
		case a := <-addrs:
			if a[0] == "public" {
				public = "http://" + a[1]
			} else {
				internal = "http://" + a[1]
			}
		case err := <-done:
			t.Fatalf("blockbook exited: %v\n%s", err, logs)
		case <-time.After(waitFor):
			t.Fatalf("blockbook did not start\n%s", logs)
		}
	}
	return public, internal
}

type status struct {
	Blockbook struct {
		BestHeight    int32 `json:"bestHeight"`
		InSync        bool  `json:"inSync"`
		MempoolSize   int   `json:"mempoolSize"`
		InSyncMempool bool  `json:"inSyncMempool"`
	} `json:"blockbook"`
}

// waitStatus polls /api/v2 until ok accepts it (a failure guard).
func waitStatus(t *testing.T, base, what string, ok func(status) bool) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for time.Now().Before(deadline) {
		var st status
		if resp, err := http.Get(base + "/api/v2"); err == nil {
			err = json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			if err == nil && ok(st) {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("status never showed %s", what)
}

func waitHeight(t *testing.T, base string, h int32) {
	t.Helper()
	waitStatus(t, base, fmt.Sprintf("height %d in sync", h), func(s status) bool { return s.Blockbook.InSync && s.Blockbook.BestHeight == h })
}

func waitMempool(t *testing.T, base string) {
	t.Helper()
	waitStatus(t, base, "the payment in the mempool", func(s status) bool { return s.Blockbook.MempoolSize == 1 })
}

func wsURL(base string) string { return "ws" + strings.TrimPrefix(base, "http") + "/websocket" }

func dialWS(t *testing.T, base string) *websocket.Conn {
	t.Helper()
	c, _, err := websocket.DefaultDialer.Dial(wsURL(base), wsClient)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// wsClient names a public client: a loopback peer without it is exempt from
// the per-client limits (an operator's own tool), as in Blockbook.
var wsClient = http.Header{"X-Real-Ip": {"203.0.113.7"}}

// call sends a request and reads its answer.
func call(t *testing.T, c *websocket.Conn, req string) {
	t.Helper()
	if err := c.WriteMessage(websocket.TextMessage, []byte(req)); err != nil {
		t.Fatal(err)
	}
	var id struct{ ID string }
	_ = json.Unmarshal([]byte(req), &id)
	readNotification(t, c, id.ID)
}

// readNotification reads messages until one with the id arrives.
func readNotification(t *testing.T, c *websocket.Conn, id string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(waitFor))
	for {
		_, msg, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("websocket: waiting for id %s: %v", id, err)
		}
		var m struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(msg, &m) == nil && m.ID == id {
			return
		}
	}
}

// scrape returns the series names /metrics exports (histograms as their
// _bucket, _sum and _count series).
func scrape(t *testing.T, internal string) map[string]bool {
	t.Helper()
	resp, err := http.Get(internal + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	names := map[string]bool{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		if i := strings.IndexAny(line, "{ "); i > 0 {
			names[line[:i]] = true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if !names["blockbook_best_height"] {
		list := make([]string, 0, len(names))
		for n := range names {
			list = append(list, n)
		}
		sort.Strings(list)
		t.Fatalf("/metrics lacks blockbook_best_height: %v", list)
	}
	return names
}
