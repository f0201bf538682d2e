package electrum

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/apitest"
)

// whaleRows is the length of the whale's history and UTXO set: 10 units
// more than a call.
const whaleRows = 1000

// whale answers the fixture's demo script with its real history and
// UTXOs repeated to whaleRows entries, as an address with a large history
// would (the fixture's are a few txs); every other script as it is.
type whale struct {
	api.ScriptQueries
	script []byte
}

func (w *whale) ScriptHistory(ctx context.Context, script []byte, limit int) ([]api.ScriptTx, error) {
	txs, err := w.ScriptQueries.ScriptHistory(ctx, script, limit)
	return grown(w, script, txs), err
}

func (w *whale) ScriptUtxos(ctx context.Context, script []byte) ([]api.ScriptUtxo, error) {
	us, err := w.ScriptQueries.ScriptUtxos(ctx, script)
	return grown(w, script, us), err
}

// grown repeats the whale's rows to whaleRows; other scripts' as they are.
func grown[T any](w *whale, script []byte, rows []T) []T {
	if !bytes.Equal(script, w.script) || len(rows) == 0 {
		return rows
	}
	out := make([]T, whaleRows)
	for i := range out {
		out[i] = rows[i%len(rows)]
	}
	return out
}

// servedWhale serves the shared fixture with the demo script a whale;
// it returns the whale's script hash.
func servedWhale(t *testing.T, cfg Config) (*served, string) {
	t.Helper()
	f := apitest.Shared(t, apitest.Options{Mempool: true})
	script, err := f.Parser.AddrDescFromAddress(f.DemoAddress)
	if err != nil {
		t.Fatal(err)
	}
	s := serveWrapped(t, f, cfg, func(q api.ScriptQueries) api.ScriptQueries { return &whale{ScriptQueries: q, script: script} })
	return s, ScriptHash(script)
}

var retryIn = regexp.MustCompile(`retry in (\d+) s`)

// untilRefused makes calls until the rate limit refuses one; it returns
// the calls served and the seconds the refusal says to wait.
func untilRefused(t *testing.T, c *client, most int, method string, params ...any) (served, wait int) {
	t.Helper()
	for served = 0; served < most; served++ {
		a := c.call(method, params...)
		if a.Error == nil {
			continue
		}
		m := retryIn.FindStringSubmatch(a.Error.Message)
		if a.Error.Code != codeExcessive || !strings.Contains(a.Error.Message, "rate limit") || m == nil {
			t.Fatalf("%s: unexpected error %+v", method, a.Error)
		}
		wait, _ = strconv.Atoi(m[1])
		return served, wait
	}
	return served, 0
}

// A client asking a large history, a whale's UTXOs or 2016 headers in a
// loop is refused (-101, with the seconds to wait) after far fewer calls
// than one that pings; each server has its own budget (the clients are
// both 127.0.0.1).
func TestCallCostWhaleRefusedSooner(t *testing.T) {
	cfg := Config{CallsPerMinute: 60, CallBurst: 100}
	type loop struct {
		method string
		params func(sh string) []any
		most   int // calls served at most (at least 100 for a ping)
	}
	loops := []loop{
		{"blockchain.scripthash.get_history", func(sh string) []any { return []any{sh} }, 11},
		{"blockchain.scripthash.listunspent", func(sh string) []any { return []any{sh} }, 11},
		{"blockchain.block.headers", func(string) []any { return []any{0, 2016} }, 5},
	}
	s, _ := servedWhale(t, cfg)
	pinger := s.negotiated(t, "1.4")
	s.srv.hooks.limitLocal.Store(true) // from here 127.0.0.1 is limited
	served, wait := untilRefused(t, pinger, 1000, "server.ping")
	if served < 100 || wait < 1 {
		t.Fatalf("a pinging client: refused after %d calls (burst 100), wait %d s", served, wait)
	}
	t.Logf("server.ping: %d calls before -101", served)
	for _, l := range loops {
		s, sh := servedWhale(t, cfg)
		c := s.negotiated(t, "1.4")
		s.srv.hooks.limitLocal.Store(true)
		served, wait := untilRefused(t, c, 1000, l.method, l.params(sh)...)
		if served == 0 || served > l.most || wait < 5 {
			t.Errorf("%s in a loop: refused after %d calls (want 1 to %d), retry in %d s", l.method, served, l.most, wait)
		}
		t.Logf("%s: %d calls before -101, retry in %d s", l.method, served, wait)
	}
}

// A whale's history, whose length is known only once read, is served
// within the budget and charged after: the client's next call, a ping, is
// refused with the seconds until its budget has refilled; the budget is
// then in debt by the call's weight.
func TestCallCostPostCharge(t *testing.T) {
	s, sh := servedWhale(t, Config{CallsPerMinute: 60, CallBurst: 5})
	c := s.negotiated(t, "1.4")
	s.srv.hooks.limitLocal.Store(true)
	if a := c.call("blockchain.scripthash.get_history", sh); a.Error != nil {
		t.Fatalf("the whale's history within the burst: %+v", a.Error)
	}
	// 5 tokens, a call of 11: 6 in debt, held at one burst deep (a
	// little refilled since): 6 s (+1) from a ping's cost.
	served, wait := untilRefused(t, c, 1, "server.ping")
	if served != 0 || wait < 6 || wait > 8 {
		t.Errorf("a ping after the post-charge: %d served, retry in %d s (want about 7)", served, wait)
	}
}

// A batch is charged the sum of its calls, post-charges included: 5 whale
// histories (11 units each) and 60 pings against a burst of 100 leave 45
// pings served.
func TestCallCostBatchSum(t *testing.T) {
	s, sh := servedWhale(t, Config{CallsPerMinute: 60, CallBurst: 100})
	c := s.negotiated(t, "1.4")
	s.srv.hooks.limitLocal.Store(true)
	calls := make([]string, 0, 65)
	for i := 0; i < 5; i++ {
		calls = append(calls, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"blockchain.scripthash.get_history","params":[%q]}`, i, sh))
	}
	c.sendLine("[" + strings.Join(calls, ",") + "," + strings.TrimPrefix(pingBatchLine(100, 60), "["))
	var answers []answer
	if err := json.Unmarshal([]byte(c.readLine()), &answers); err != nil {
		t.Fatal(err)
	}
	histories, pings, refused := 0, 0, 0
	for _, a := range answers {
		switch {
		case a.Error != nil && a.Error.Code == codeExcessive && strings.Contains(a.Error.Message, "rate limit"):
			refused++
		case a.Error != nil:
			t.Fatalf("unexpected answer %+v", a.Error)
		case len(a.ID) < 3: // ids 0 to 4; the pings' are 100 on
			histories++
		default:
			pings++
		}
	}
	// 100 - 5×11 = 45, and a token a second refilled while it runs.
	if histories != 5 || pings < 45 || pings > 47 || refused != 60-pings {
		t.Errorf("a batch of 5 whale histories and 60 pings, burst 100: %d histories, %d pings served, %d refused", histories, pings, refused)
	}
}

// A loopback peer stays exempt from the budget however heavy its calls
// (a local proxy or the operator's tools), yet what its calls weigh is
// counted in blockbook_electrum_call_cost_total.
func TestCallCostLocalExempt(t *testing.T) {
	reg := prometheus.NewRegistry()
	s, sh := servedWhale(t, Config{CallsPerMinute: 60, CallBurst: 5, Metrics: reg})
	c := s.negotiated(t, "1.4")
	for i := 0; i < 20; i++ {
		if a := c.call("blockchain.scripthash.get_history", sh); a.Error != nil {
			t.Fatalf("call %d of an exempt loopback peer: %+v", i, a.Error)
		}
	}
	if ref := s.srv.rate.Spend("127.0.0.1", 5); ref.Msg != "" {
		t.Errorf("an exempt peer's budget was spent: a call of the whole burst 5 refused: %+v", ref)
	}
	if got := metricValue(t, reg, "blockbook_electrum_call_cost_total"); got != 1+20*11 {
		t.Errorf("blockbook_electrum_call_cost_total %v, want %d (server.version, 20 histories of 11)", got, 1+20*11)
	}
}

func metricValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) > 0 {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// The weights: a call 1; rows and bytes add by the larger; headers are
// charged before the call by the count asked.
func TestCallCostWeights(t *testing.T) {
	for _, c := range []struct {
		m           meter
		pre, bytes  int
		want        int
		description string
	}{
		{meter{}, 1, 100, 1, "a ping"},
		{meter{rows: 99}, 1, 9_000, 1, "a wallet's history of 99 txs"},
		{meter{rows: 100_000}, 1, 9_500_000, 1001, "a history of 100,000 txs"},
		{meter{rows: 2016}, 21, 330_000, 21, "2016 headers, charged before"},
		{meter{rows: 10}, 21, 2_000, 21, "10 headers of 2016 asked: no refund"},
		{meter{}, 1, 1 << 20, 17, "a 1 MiB answer (a 512 KiB tx in hex)"},
		{meter{blocks: 1000}, 1, 50, 1001, "1000 blocks of tweaks"},
	} {
		if got := c.m.cost(c.pre, c.bytes); got != c.want {
			t.Errorf("%s: %d, want %d", c.description, got, c.want)
		}
	}
	for params, want := range map[string]int{`[0,2016]`: 21, `[0,5000]`: 21, `[100,99]`: 1, `{"start_height":0,"count":250}`: 3, `[0]`: 1, `"x"`: 1} {
		if got := preCost(&request{Method: "blockchain.block.headers", Params: json.RawMessage(params)}); got != want {
			t.Errorf("headers %s: pre-cost %d, want %d", params, got, want)
		}
	}
}

// A call of several places (2016 headers: 21 of 24) leaves the client
// room for 3 single calls, and a second such call waits until the first
// gives its places back; what a call gathered is given back when its
// wait ends.
func TestCallCostSlots(t *testing.T) {
	s := newClientSlots(24)
	const ip = "203.0.113.9"
	short := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		t.Cleanup(cancel)
		return ctx
	}
	big, ok := s.acquire(context.Background(), ip, 21)
	if !ok {
		t.Fatal("21 places of 24 refused")
	}
	if _, ok := s.acquire(short(), ip, 21); ok {
		t.Fatal("a second call of 21 places ran beside the first")
	}
	var singles []func()
	for i := 0; i < 3; i++ {
		r, ok := s.acquire(short(), ip, 1)
		if !ok {
			t.Fatalf("single call %d beside a call of 21 places: refused", i)
		}
		singles = append(singles, r)
	}
	if _, ok := s.acquire(short(), ip, 1); ok {
		t.Fatal("a 4th single call ran beside 21 places and 3 calls")
	}
	big()
	if _, ok := s.acquire(short(), ip, 100); ok { // capped at the limit: 24
		t.Fatal("a call of 24 places ran beside 3 held ones")
	}
	// The failed gathering gave back the 21 places it held.
	if r, ok := s.acquire(short(), ip, 21); !ok {
		t.Fatal("21 places beside 3 held, after a failed gathering: refused")
	} else {
		r()
	}
	for _, r := range singles {
		r()
	}
	if r, ok := s.acquire(short(), ip, 100); !ok {
		t.Fatal("a call capped at the limit cannot run alone")
	} else {
		r()
	}
	if n := s.waiting(ip); n != 0 {
		t.Fatalf("%d calls still counted", n)
	}
}

// Parallel connections of one client cannot pass at the pre-cost while
// its first calls run: the budget is asked once a call holds one of the
// client's places, after the calls before it were charged. 30 connections
// asking the whale's history at once (11 units each, a burst of 100, 2
// places) are served about as many times as one connection in a loop.
func TestCallCostParallelConnections(t *testing.T) {
	s, sh := servedWhale(t, Config{CallsPerMinute: 60, CallBurst: 100, MaxCallsPerIP: 2})
	conns := make([]*client, 30)
	for i := range conns {
		conns[i] = s.negotiated(t, "1.4")
	}
	s.srv.hooks.limitLocal.Store(true)
	var served atomic.Int32
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() {
			if a := c.call("blockchain.scripthash.get_history", sh); a.Error == nil {
				served.Add(1)
			}
		})
	}
	wg.Wait()
	if n := served.Load(); n == 0 || n > 11 {
		t.Errorf("30 parallel whale histories: %d served, want 1 to 11 (the burst's worth)", n)
	}
	t.Logf("30 parallel whale histories: %d served", served.Load())
}
