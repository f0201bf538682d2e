package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/app"
)

// listenersStack is the demo stack with every front on (public, Esplora,
// Electrum TCP and websocket), the default per-client limits, and the
// listener kit's timeouts and caps scaled down so that the probes of issue
// 47 finish in seconds.
type listenersStack struct {
	*demoStack
	esplora, electrum, electrumWS string
}

const (
	testReadTimeout  = 2 * time.Second
	testWriteTimeout = 3 * time.Second
	testMaxConns     = 64
	testMaxAnswer    = 1 << 20
	testMaxQueued    = 16 << 20
	testElectrumMax  = 32 // Electrum connections
	testSubsBytes    = 64 << 10
	testCallsPerMin  = 60 // Electrum's rate limit: one call a second
	// testCallBurst leaves room for checkElectrumSubsBytes's counted
	// client (300 calls, then its retries), testMaxBatch for
	// checkElectrumRateLimit's batches past it.
	testCallBurst = 1000
	testMaxBatch  = 4000
)

func startListenersStack(t *testing.T) *listenersStack {
	t.Helper()
	addrs := make(chan [2]string, 3)
	limits := withDefaultLimits(t)
	t.Setenv("BB_ADMIN_USER", "admin")
	t.Setenv("BB_ADMIN_PASSWORD", "secret")
	st := startDemoStackWith(t, nil, func(o *app.Options) {
		limits(o)
		o.Esplora.Addr, o.Electrum.TCP, o.Electrum.WS = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
		o.Electrum.CallsPerMinute, o.Electrum.CallBurst, o.Electrum.MaxBatch = testCallsPerMin, testCallBurst, testMaxBatch
		o.Electrum.MaxAnswerBytes, o.Electrum.MaxQueuedBytes = testMaxAnswer, testMaxQueued
		o.Electrum.MaxConns, o.Electrum.MaxSubsBytesPerIP = testElectrumMax, testSubsBytes
		o.Listen.ReadTimeout, o.Listen.WriteTimeout, o.Listen.MaxConns = testReadTimeout, testWriteTimeout, testMaxConns
		next := o.OnListen
		o.OnListen = func(name, a string) {
			if name == "esplora" || strings.HasPrefix(name, "electrum") {
				addrs <- [2]string{name, a}
				return
			}
			next(name, a)
		}
	})
	ls := &listenersStack{demoStack: st}
	for range 3 {
		select {
		case a := <-addrs:
			switch a[0] {
			case "esplora":
				ls.esplora = "http://" + a[1]
			case "electrumws":
				ls.electrumWS = a[1]
			default:
				ls.electrum = a[1]
			}
		case <-time.After(waitFor):
			t.Fatalf("the listeners did not start\n%s", st.inst.logs)
		}
	}
	return ls
}

// The Electrum TCP listener is on the kit's connection cap: the
// connection past -electrummaxconns is refused in the protocol's words,
// and a place given back (a client leaves) is taken again.
func checkElectrumConnCap(t *testing.T, ls *listenersStack) {
	ping := func() (net.Conn, string) {
		c, err := net.Dial("tcp", ls.electrum)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		_ = c.SetDeadline(time.Now().Add(waitFor))
		if _, err := c.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"server.ping","params":[]}` + "\n")); err != nil {
			return c, err.Error()
		}
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			return c, err.Error()
		}
		return c, line
	}
	var held []net.Conn
	for range testElectrumMax {
		c, line := ping()
		if !strings.Contains(line, `"result":null`) {
			t.Fatalf("connection %d: %s", len(held)+1, line)
		}
		held = append(held, c)
	}
	if _, line := ping(); !strings.Contains(line, fmt.Sprintf("too many connections (limit %d)", testElectrumMax)) || !strings.Contains(line, "-101") {
		t.Errorf("connection %d: %s", testElectrumMax+1, line)
	}
	_ = held[0].Close()
	deadline := time.Now().Add(waitFor)
	for {
		c, line := ping()
		if strings.Contains(line, `"result":null`) {
			break
		}
		_ = c.Close()
		if time.Now().After(deadline) {
			t.Fatalf("a freed place was never taken again: %s", line)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, c := range held {
		_ = c.Close()
	}
}

// Issue 47's probes, scaled down, on one stack; the frozen node last.
func TestE2EListeners(t *testing.T) {
	ls := startListenersStack(t)
	defer func() {
		if t.Failed() {
			t.Log(tail(ls.inst.logs.String(), 40))
		}
	}()
	t.Run("Esplora404", func(t *testing.T) { checkEsplora404(t, ls) })
	t.Run("EsploraPerClient", func(t *testing.T) { checkEsploraPerClient(t, ls) })
	t.Run("ElectrumConnCap", func(t *testing.T) { checkElectrumConnCap(t, ls) })
	t.Run("ElectrumBatchBytes", func(t *testing.T) { checkElectrumBatchBytes(t, ls) })
	t.Run("ElectrumSubsBytes", func(t *testing.T) { checkElectrumSubsBytes(t, ls) })
	t.Run("ElectrumRateLimit", func(t *testing.T) { checkElectrumRateLimit(t, ls) })
	t.Run("ElectrumNonReaders", func(t *testing.T) { checkElectrumNonReaders(t, ls) })
	t.Run("EsploraNonReaders", func(t *testing.T) { checkEsploraNonReader(t, ls) })
	t.Run("EsploraSlowBodies", func(t *testing.T) { checkEsploraSlowBodies(t, ls) })
	t.Run("Admin", func(t *testing.T) { checkAdminHardening(t, ls) })
	t.Run("NodeFrozen", func(t *testing.T) { checkFrontsNodeFrozen(t, ls) })
}

// A 60 KB path comes back as a short 404, never echoed whole, and every
// answer says nosniff (a 900 KB one was 921 KB of text/plain); a 900 KB
// path is refused by Go's server past 64 KB of request line, with its
// fixed 431 text, before anything parses it.
func checkEsplora404(t *testing.T, ls *listenersStack) {
	resp, err := httpClient.Get(ls.esplora + "/api/" + strings.Repeat("a", 60_000))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || len(body) > 1024 {
		t.Errorf("60 KB path: %d with a %d-byte body", resp.StatusCode, len(body))
	}
	if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("404 without nosniff: %v", resp.Header)
	}
	resp, err = httpClient.Get(ls.esplora + "/api/" + strings.Repeat("a", 900_000))
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge || len(body) > 1024 {
		t.Errorf("900 KB path: %d with a %d-byte body, want a short 431", resp.StatusCode, len(body))
	}
	resp, err = httpClient.Get(ls.esplora + "/api/blocks/tip/height")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("200 without nosniff: %v", resp.Header)
	}
}

// Heavy requests of one named client (behind a local proxy) get 429s from
// the public port's budget; another client is served (they were all 200).
func checkEsploraPerClient(t *testing.T, ls *listenersStack) {
	heavy := ls.esplora + "/api/address/" + firstAddress(t, ls) + "/txs"
	codes := burst(t, 40, heavy, "203.0.113.70")
	if codes[200] == 0 || codes[http.StatusTooManyRequests] < 10 || codes[200]+codes[http.StatusTooManyRequests] != 40 {
		t.Errorf("40 concurrent heavy Esplora requests from one client: %v", codes)
	}
	t.Logf("40 concurrent heavy Esplora requests from one client: %v", codes)
	if c, _ := do(t, "GET", ls.esplora+"/api/blocks/tip/height", "203.0.113.71", "", ""); c != 200 {
		t.Errorf("another client: %d", c)
	}
}

func firstAddress(t *testing.T, ls *listenersStack) string {
	var blk struct {
		Txs []struct {
			Vout []struct {
				Addresses []string `json:"addresses"`
			} `json:"vout"`
		} `json:"txs"`
	}
	getJSON(t, ls.inst.base+"/api/v2/block/1", 200, &blk)
	return blk.Txs[0].Vout[0].Addresses[0]
}

// One batch of header calls that would produce many MB answers at most
// -electrummaxanswer (1 MB here) plus an error per call past it; a batch
// over -electrummaxbatch is refused whole.
func checkElectrumBatchBytes(t *testing.T, ls *listenersStack) {
	c := dialElectrum(t, ls.electrum)
	one := c.ok("blockchain.block.headers", 0, 2016)
	calls := make([]string, 1000)
	for i := range calls {
		calls[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"blockchain.block.headers","params":[0,2016]}`, i+1000)
	}
	unbounded := len(one) * len(calls)
	if unbounded < 10*testMaxAnswer {
		t.Fatalf("the demo chain's headers (%d bytes) do not make a large batch", len(one))
	}
	line := electrumExchange(t, c, "["+strings.Join(calls, ",")+"]")
	var answers []struct {
		Error *struct{ Code int } `json:"error"`
	}
	if err := json.Unmarshal(line, &answers); err != nil {
		t.Fatalf("batch answer: %v", err)
	}
	tooLarge := 0
	for _, a := range answers {
		if a.Error != nil && a.Error.Code == -101 {
			tooLarge++
		}
	}
	if len(line) > testMaxAnswer+len(one)+len(calls)*200 || tooLarge == 0 || len(answers) != len(calls) {
		t.Errorf("a batch that would answer %d bytes answered %d bytes, %d answers, %d too large", unbounded, len(line), len(answers), tooLarge)
	}
	t.Logf("a batch of %d header calls (%d bytes unbounded): %d bytes, %d calls answered \"response too large\"", len(calls), unbounded, len(line), tooLarge)
	big := make([]string, 10_000)
	for i := range big {
		big[i] = calls[0]
	}
	if line := electrumExchange(t, c, "["+strings.Join(big, ",")+"]"); !strings.Contains(string(line), "batch too large") || len(line) > 1024 {
		t.Errorf("a batch of 10,000 calls: %.300s", line)
	}
}

// Subscribed Electrum clients that pipeline header batches and never read
// hold a bounded amount of the server's memory (the queues' bytes), and
// the liveness probe keeps judging the node healthy meanwhile (one such
// client took 1.3 GB; 100 made /health answer 503 for 12-19 s).
func checkElectrumNonReaders(t *testing.T, ls *listenersStack) {
	const clients, calls = 20, 3
	one := len(dialElectrum(t, ls.electrum).ok("blockchain.block.headers", 0, 2016))
	batch := make([]string, calls)
	for i := range batch {
		batch[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"blockchain.block.headers","params":[0,2016]}`, i)
	}
	line := []byte("[" + strings.Join(batch, ",") + "]\n")
	heapBefore := heapInUse()
	conns := make([]net.Conn, clients)
	for i := range conns {
		c := dialElectrum(t, ls.electrum)
		c.ok("blockchain.headers.subscribe")
		conns[i] = c.c
		go func() { // blocks once the server stops reading this client
			for {
				if _, err := c.c.Write(line); err != nil {
					return
				}
			}
		}()
	}
	// Meanwhile /health must stay 200: sampled for 5 s.
	bad := 0
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if code, body, _ := timedRequest(t, "GET", ls.inst.internal+"/health", ""); code != 200 {
			bad++
			t.Logf("/health under the non-readers: %d %s", code, body)
		}
	}
	grown := int64(heapInUse()) - int64(heapBefore)
	unbounded := int64(clients) * 256 * int64(one*calls)
	t.Logf("%d non-reading clients (answers of %d bytes, %d MB if queued by count): heap grew %d MB; /health not 200 %d times", clients, one*calls, unbounded>>20, grown>>20, bad)
	if bad > 0 {
		t.Errorf("/health answered other than 200 %d times while the node was fine", bad)
	}
	// The heap is the whole test process's (the instance's other work
	// included): 38 MB grew here locally and 90 MB once on a loaded CI
	// machine, so the slack is 128 MB, still a quarter of what queueing by
	// count holds.
	if limit := int64(testMaxQueued + 128<<20); grown > limit || limit > unbounded/3 {
		t.Errorf("the heap grew %d MB under %d non-readers (unbounded %d MB), more than the %d MB queued budget plus 128 MB", grown>>20, clients, unbounded>>20, testMaxQueued>>20)
	}
	for _, c := range conns {
		_ = c.Close()
	}
}

// heapInUse is this process's live heap after a collection (the instance
// runs in it).
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// electrumExchange sends one line and reads the next answer line.
func electrumExchange(t *testing.T, c *electrumClient, line string) []byte {
	t.Helper()
	_ = c.c.SetWriteDeadline(time.Now().Add(waitFor))
	if _, err := c.c.Write([]byte(line + "\n")); err != nil {
		t.Fatal(err)
	}
	_ = c.c.SetReadDeadline(time.Now().Add(waitFor))
	out, err := c.r.ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A client that pipelines requests and never reads is dropped at the
// write timeout: reading afterwards ends before all the answers (it was
// served in full, however long it took).
func checkEsploraNonReader(t *testing.T, ls *listenersStack) {
	path := "/api/address/" + firstAddress(t, ls) + "/txs"
	_, page := esploraGet(t, ls.esplora+path)
	n := min(max(200, (128<<20)/max(len(page), 1)), 20_000)
	conn, err := net.Dial("tcp", strings.TrimPrefix(ls.esplora, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req := "GET " + path + " HTTP/1.1\r\nHost: e2e\r\n\r\n"
	go func() { // blocks once the server stops reading
		w := bufio.NewWriter(conn)
		for i := 0; i < n; i++ {
			if _, err := w.WriteString(req); err != nil {
				return
			}
		}
		_ = w.Flush()
	}()
	time.Sleep(testWriteTimeout + 2*time.Second) // past the write timeout: the probe itself
	_ = conn.SetReadDeadline(time.Now().Add(waitFor))
	r := bufio.NewReader(conn)
	got := 0
	for ; got < n; got++ {
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			break
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			break
		}
	}
	if got == n {
		t.Errorf("a client that read nothing for %v got all %d answers of %d bytes: it was never dropped", testWriteTimeout+2*time.Second, n, len(page))
	}
	t.Logf("non-reader: %d of %d pipelined answers (%d bytes each) before the server dropped it", got, n, len(page))
}

// Slow bodies: past -listenmaxconns the connections are refused at once,
// and those admitted are dropped at the read timeout (2,000 were held
// 40 s); the listener serves again afterwards.
func checkEsploraSlowBodies(t *testing.T, ls *listenersStack) {
	const n = testMaxConns + 16
	addr := strings.TrimPrefix(ls.esplora, "http://")
	conns := make([]net.Conn, 0, n)
	for i := 0; i < n; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, _ = c.Write([]byte("POST /api/tx HTTP/1.1\r\nHost: e2e\r\nContent-Length: 100000\r\n\r\n0100"))
		conns = append(conns, c)
	}
	start := time.Now()
	var mu sync.Mutex
	refused, dropped, held := 0, 0, 0
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.SetReadDeadline(time.Now().Add(waitFor))
			b, _ := io.ReadAll(c)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case strings.Contains(string(b), "Too many connections"):
				refused++
			case time.Since(start) < 4*testReadTimeout+5*time.Second:
				dropped++
			default:
				held++
			}
		}()
	}
	wg.Wait()
	t.Logf("%d slow-body connections: %d refused, %d dropped within %v, %d held longer", n, refused, dropped, time.Since(start).Round(time.Millisecond), held)
	if refused < n-testMaxConns || held > 0 {
		t.Errorf("%d slow-body connections with a cap of %d: %d refused, %d held past the read timeout", n, testMaxConns, refused, held)
	}
	if code, body := esploraGet(t, ls.esplora+"/api/blocks/tip/height"); code != 200 {
		t.Errorf("after the slow bodies: %d %s", code, body)
	}
}

// With the node frozen every front says the node is not responding in its
// protocol's words: Electrum's broadcast code 2 without the node's URL,
// Esplora's fee estimates 503 (not the values cached before the freeze).
func checkFrontsNodeFrozen(t *testing.T, ls *listenersStack) {
	if code, body := esploraGet(t, ls.esplora+"/api/fee-estimates"); code != 200 {
		t.Fatalf("fee-estimates before the freeze: %d %s", code, body)
	}
	var raw string
	var blk struct {
		Txs []struct {
			Txid string `json:"txid"`
		} `json:"txs"`
	}
	getJSON(t, ls.inst.base+"/api/v2/block/2", 200, &blk)
	getJSON(t, ls.inst.base+"/api/v2/rawtx/"+blk.Txs[0].Txid, 200, &raw)
	if err := ls.node.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	// A node call sent before the probe notices the freeze ends when it
	// does, with a 503 (it waited for the thaw and answered 200).
	inFlight := make(chan string, 1)
	go func() {
		start := time.Now()
		code, body, _ := timedRequest(t, "GET", ls.inst.base+"/api/v2/tx-specific/"+blk.Txs[0].Txid, "")
		inFlight <- fmt.Sprintf("%d after %v: %.200s", code, time.Since(start).Round(time.Millisecond), body)
	}()
	thawed := false
	thaw := func() {
		if !thawed {
			thawed = true
			_ = ls.node.Signal(syscall.SIGCONT)
		}
	}
	defer thaw()
	waitHealth(t, ls.inst.internal, 503, 15*time.Second)

	c := dialElectrum(t, ls.electrum)
	_, e := c.try("blockchain.transaction.broadcast", raw)
	var re struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if err := json.Unmarshal(e, &re); err != nil || re.Code != 2 || strings.Contains(re.Message, "http") || strings.Contains(re.Message, "127.0.0.1") {
		t.Errorf("Electrum broadcast with the node frozen: %s", e)
	}
	if code, body := esploraGet(t, ls.esplora+"/api/fee-estimates"); code != http.StatusServiceUnavailable || strings.Contains(string(body), "http") {
		t.Errorf("Esplora fee-estimates with the node frozen: %d %s", code, body)
	}
	select {
	case got := <-inFlight:
		t.Logf("the call in flight when the node froze: %s", got)
		if !strings.HasPrefix(got, "503 ") {
			t.Errorf("the call in flight when the node froze: %s, want 503 while frozen", got)
		}
	case <-time.After(15 * time.Second):
		t.Errorf("the call in flight when the node froze still waits")
	}
	thaw()
	waitHealth(t, ls.inst.internal, 200, 15*time.Second)
}

// /admin/checkpoint refuses a symlinked parent that points into the
// datadir and a name with a newline (both were accepted), and wrong
// passwords are answered one at a time after growing delays (1,000 took
// 0.17 s); the right one is answered at once.
func checkAdminHardening(t *testing.T, ls *listenersStack) {
	root := t.TempDir()
	link := filepath.Join(root, "into-datadir")
	if err := os.Symlink(ls.dataDir, link); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(link, "cp"), filepath.Join(root, "cp\nforged")} {
		body, _ := json.Marshal(map[string]string{"dir": dir})
		if code, resp := do(t, "POST", ls.inst.internal+"/admin/checkpoint", "", "admin:secret", string(body)); code != http.StatusBadRequest {
			t.Errorf("checkpoint into %q: %d %s", dir, code, resp)
		}
	}
	const guesses = 5
	start := time.Now()
	var wg sync.WaitGroup
	for range guesses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code, _ := do(t, "GET", ls.inst.internal+"/admin", "", "admin:guess", ""); code != http.StatusUnauthorized {
				t.Errorf("a wrong password: %d", code)
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	t.Logf("%d wrong passwords in parallel took %v", guesses, took.Round(time.Millisecond))
	if took < time.Second { // 0.1+0.2+...+0.5 s one after the other
		t.Errorf("%d wrong passwords took %v: not slowed down", guesses, took)
	}
	start = time.Now()
	if code, _ := do(t, "GET", ls.inst.internal+"/admin", "", "admin:secret", ""); code != 200 || time.Since(start) > 5*time.Second {
		t.Errorf("the right password: %d after %v", code, time.Since(start))
	}
}
