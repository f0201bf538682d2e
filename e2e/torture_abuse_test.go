package e2e

// Campaign 6: abuse (issue 47). Every listener at once under the attacks
// of issue 47's table, while a well-behaved client of each front and the
// load balancer's /health must see nothing of it.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var (
	abuseScaleFlag = flag.Int("torture.abuse.scale", 0, "abuse: attackers of each kind (short 5, full 100)")
	abuseDurFlag   = flag.Duration("torture.abuse.duration", 0, "abuse: how long the attacks run (short 10s, full 3m)")
	abuseProfFlag  = flag.String("torture.abuse.cpuprofile", "", "abuse: write the server's CPU profile of the attacks' first minute to this file")
	abuseArgsFlag  = flag.String("torture.abuse.serverargs", "", "abuse: more flags for the server, space-separated (e.g. -listenlateafter=0 to compare without the share rule)")
)

// TestTortureAbuse runs blockbook as a child (its memory its own) with the
// default limits, Esplora and Electrum on, and for the campaign's
// duration: Electrum clients that pipeline header batches and never read,
// Electrum batch bombs (1,000 header calls each), subscription floods,
// Esplora slow bodies, non-readers and 900 KB paths, and heavy requests
// on Esplora and the public port, each attacker a client of its own (its
// own loopback address, limited as any client with -listenlimitlocal:
// real attackers are not loopback peers). Meanwhile every 250 ms
// a victim (another named client, in a process of its own) asks each front once, and /health is
// read, each request timed. Required: the victims and /health never
// fail, their p99 latency stays under abuseP99, and the server's RSS stays
// within abuseRSSBudget of where it started.
func TestTortureAbuse(t *testing.T) {
	scale := tortureSize(*abuseScaleFlag, 5, 100)
	dur := tortureDuration(*abuseDurFlag, 10*time.Second, 3*time.Minute)
	st := &demoStack{node: startNode(t), g: demoChain(t), dataDir: t.TempDir()}
	submit(t, st.g, st.node, 1)
	cfg := writeConfig(t, st.node, nil)
	esplora, electrum, internal := freePort(t), freePort(t), freePort(t)
	args := []string{"-esplora=" + esplora, "-electrum=" + electrum, "-internal=" + internal,
		"-listenreadtimeout=5s", "-listenwritetimeout=10s", "-listenlimitlocal"}
	args = append(args, strings.Fields(*abuseArgsFlag)...)
	prof := freePort(t)
	if *abuseProfFlag != "" {
		args = append(args, "-prof="+prof)
	}
	c := startChild(t, cfg, st.dataDir, args...)
	h, hash := st.g.Tip()
	waitTip(t, c.base, h, hash.String(), c.logs)
	rssStart, _ := vmRSS(t, c.cmd.Process.Pid)
	addr := firstAddressOf(t, c.base)
	cpuStart, ownStart := cpuSeconds(c.cmd.Process.Pid), cpuSeconds(os.Getpid())

	ctx, stop := context.WithTimeout(context.Background(), dur)
	defer stop()
	if *abuseProfFlag != "" {
		go saveCPUProfile(t, "http://"+prof+"/debug/pprof/profile?seconds=60", *abuseProfFlag)
	}
	var attacks sync.WaitGroup
	var sent atomic.Int64
	// Each attacker is a client of its own, as attackers spread over many
	// addresses are: it connects from its own loopback address
	// (127.1.kind.n), and -listenlimitlocal makes the server limit local
	// peers per address as it limits remote ones (by default they are
	// exempt, being proxies). The per-client budgets then refuse each one
	// past its share, and the process-wide gate (-listenmaxheavy) sheds
	// what they ask together beyond what the process can do.
	kind := 0
	attack := func(n int, f func(ctx context.Context, d *net.Dialer)) {
		kind++
		for i := range n {
			d := attackerDialer(kind, i)
			attacks.Add(1)
			go func() { defer attacks.Done(); f(ctx, d) }()
		}
	}
	attack(scale, func(ctx context.Context, d *net.Dialer) { electrumNonReader(ctx, d, electrum, &sent) })
	attack(scale, func(ctx context.Context, d *net.Dialer) { electrumBatchBomb(ctx, d, electrum, &sent) })
	attack(scale, func(ctx context.Context, d *net.Dialer) { esploraSlowBody(ctx, d, esplora, &sent) })
	attack(scale, func(ctx context.Context, d *net.Dialer) {
		loopGet(ctx, d, "http://"+esplora+"/api/"+strings.Repeat("a", 900_000), &sent)
	})
	attack(scale, func(ctx context.Context, d *net.Dialer) {
		loopGet(ctx, d, "http://"+esplora+"/api/address/"+addr+"/txs", &sent)
	})
	attack(scale, func(ctx context.Context, d *net.Dialer) {
		loopGet(ctx, d, c.base+"/api/v2/address/"+addr+"?details=txs&pageSize=1000", &sent)
	})

	// The victims, and the balancer's /health, in a process of their own
	// (torture_victim_test.go); this one samples the server's RSS.
	vcmd, vout, err := startVictim(victimPlan{Health: "http://" + internal + "/health", Public: c.base + "/api/v2",
		Esplora: "http://" + esplora + "/api/blocks/tip/height", Electrum: electrum, For: time.Until(deadlineOf(ctx))})
	if err != nil {
		t.Fatalf("victim child: %v", err)
	}
	var rssPeak int64
	for ctx.Err() == nil {
		if rss, _ := vmRSS(t, c.cmd.Process.Pid); rss > rssPeak {
			rssPeak = rss
		}
		time.Sleep(250 * time.Millisecond)
	}
	recs, err := victimRecords(vcmd, vout)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 {
		t.Fatal("the victim child made no requests")
	}
	fails, asked := map[string]int{}, len(recs)
	var took []time.Duration
	slowest := map[string]time.Duration{}
	for _, r := range recs {
		if r.Failed {
			fails[r.Name]++
		}
		if r.Took > 0 {
			took = append(took, r.Took)
			slowest[r.Name] = max(slowest[r.Name], r.Took.Round(time.Millisecond))
		}
	}
	attacks.Wait()
	rssEnd, _ := vmRSS(t, c.cmd.Process.Pid)
	p50, p99 := quantiles(took)
	// The CPU figures tell the server's share from the attackers' (this
	// process) on a shared machine; shed is what the gate refused.
	tortureReport(t, "abuse", "%d attackers of each of 6 kinds for %v (%d attack requests): victim requests %d, failed %v, latency p50 %v p99 %v, slowest %v; server RSS start %d MiB, peak %d MiB, end %d MiB (budget %d MiB); CPU server %.0f s, attackers %.0f s; shed (gate by front; share refusals by listener) %s",
		scale, dur, sent.Load(), asked, fails, p50, p99, slowest, rssStart>>20, rssPeak>>20, rssEnd>>20, (rssStart+abuseRSSBudget)>>20,
		cpuSeconds(c.cmd.Process.Pid)-cpuStart, cpuSeconds(os.Getpid())-ownStart, gateShed(t, "http://"+internal+"/metrics"))
	for name, n := range fails {
		t.Errorf("%s failed %d times under the attacks", name, n)
	}
	if p99 > abuseP99 {
		t.Errorf("the victims' p99 latency %v under the attacks, want under %v", p99, abuseP99)
	}
	if rssPeak > rssStart+abuseRSSBudget {
		t.Errorf("server RSS peaked at %d MiB from %d MiB, over the %d MiB budget", rssPeak>>20, rssStart>>20, abuseRSSBudget>>20)
	}
	if t.Failed() {
		t.Log(tail(c.logs.String(), 40))
	}
}

// cpuSeconds is the user and system CPU time pid has used (/proc, in
// clock ticks of 1/100 s).
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command's closing parenthesis: utime and
	// stime are the 12th and 13th.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	s, _ := strconv.ParseFloat(f[12], 64)
	return (u + s) / 100
}

// gateShed is the gate's refusals by front, and the HTTP fronts' refusals
// of clients past their share while late, from the metrics.
func gateShed(t *testing.T, url string) string {
	resp, err := http.Get(url)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	var out []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		switch l := sc.Text(); {
		case strings.HasPrefix(l, "blockbook_gate_shed_total{"):
			out = append(out, strings.TrimPrefix(l, "blockbook_gate_shed_total"))
		case strings.Contains(l, "_limit_rejections_total{") && strings.Contains(l, `limit="share"`):
			// refused past their share while the process was late
			out = append(out, strings.TrimPrefix(l, "blockbook_"))
		}
	}
	return strings.Join(out, " ")
}

// abuseRSSBudget is what the attacks may add to the server's RSS: the
// client budgets they can fill (Electrum's queued answers, 64 MiB; the
// per-client HTTP cost budgets bound the heavy pages in progress) and
// Go's collector headroom, which doubles a heap; the rest is slack.
const abuseRSSBudget = 1 << 30

// abuseP99 is the victims' latency bound: 1 s, and 3 s with the race
// detector, which makes the server several times slower.
var abuseP99 = map[bool]time.Duration{false: time.Second, true: 3 * time.Second}[raceEnabled]

// quantiles are the median and 99th percentile of durations.
func quantiles(d []time.Duration) (p50, p99 time.Duration) {
	if len(d) == 0 {
		return 0, 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	at := func(q float64) time.Duration { return s[min(len(s)-1, int(q*float64(len(s))))] }
	return at(0.5).Round(time.Millisecond), at(0.99).Round(time.Millisecond)
}

func firstAddressOf(t *testing.T, base string) string {
	var blk struct {
		Txs []struct {
			Vout []struct {
				Addresses []string `json:"addresses"`
			} `json:"vout"`
		} `json:"txs"`
	}
	getJSON(t, base+"/api/v2/block/1", 200, &blk)
	return blk.Txs[0].Vout[0].Addresses[0]
}

// headerCalls is a batch of n header calls, as one line.
func headerCalls(n int) []byte {
	calls := make([]string, n)
	for i := range calls {
		calls[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"blockchain.block.headers","params":[0,2016]}`, i)
	}
	return []byte("[" + strings.Join(calls, ",") + "]\n")
}

// attackerDialer dials from attacker n of kind's own loopback address
// (Linux routes all of 127/8 to the loopback interface).
func attackerDialer(kind, n int) *net.Dialer {
	return &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 1, byte(kind), byte(1+n%250))}}
}

// electrumNonReader subscribes to headers, then pipelines header batches
// and never reads, reconnecting when dropped.
func electrumNonReader(ctx context.Context, d *net.Dialer, addr string, sent *atomic.Int64) {
	line := append([]byte(`{"jsonrpc":"2.0","id":0,"method":"blockchain.headers.subscribe","params":[]}`+"\n"), headerCalls(3)...)
	for ctx.Err() == nil {
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return
		}
		stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
		for ctx.Err() == nil {
			if _, err := conn.Write(line); err != nil {
				break
			}
			sent.Add(1)
		}
		stop()
		_ = conn.Close()
	}
}

// electrumBatchBomb sends batches of 1,000 header calls and reads the
// answers.
func electrumBatchBomb(ctx context.Context, d *net.Dialer, addr string, sent *atomic.Int64) {
	line := headerCalls(1000)
	for ctx.Err() == nil {
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return
		}
		stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
		r := bufio.NewReaderSize(conn, 1<<20)
		for ctx.Err() == nil {
			if _, err := conn.Write(line); err != nil {
				break
			}
			sent.Add(1)
			if skipLine(r) != nil {
				break
			}
		}
		stop()
		_ = conn.Close()
	}
}

// skipLine reads past the next newline without keeping the line.
func skipLine(r *bufio.Reader) error {
	for {
		_, err := r.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}

// esploraSlowBody opens a POST and sends its body a byte a second.
func esploraSlowBody(ctx context.Context, d *net.Dialer, addr string, sent *atomic.Int64) {
	for ctx.Err() == nil {
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return
		}
		stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
		_, err = conn.Write([]byte("POST /api/tx HTTP/1.1\r\nHost: abuse\r\nContent-Length: 100000\r\n\r\n"))
		sent.Add(1)
		for err == nil && ctx.Err() == nil {
			time.Sleep(time.Second)
			_, err = conn.Write([]byte("0"))
		}
		stop()
		_ = conn.Close()
	}
}

// loopGet asks url again and again, connecting with d.
func loopGet(ctx context.Context, d *net.Dialer, url string, sent *atomic.Int64) {
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: d.DialContext}}
	for ctx.Err() == nil {
		req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
		if err != nil {
			return
		}
		resp, err := hc.Do(req)
		sent.Add(1)
		if err != nil {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// electrumPing connects, negotiates and pings: a well-behaved wallet.
func electrumPing(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"server.version","params":["victim","1.4"]}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"server.ping","params":[]}` + "\n")); err != nil {
		return err
	}
	r := bufio.NewReader(conn)
	for i := 0; i < 2; i++ {
		line, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		if strings.Contains(line, `"error"`) {
			return fmt.Errorf("electrum: %s", line)
		}
	}
	return nil
}

// saveCPUProfile fetches a CPU profile from the child's -prof listener.
func saveCPUProfile(t *testing.T, url, file string) {
	resp, err := http.Get(url)
	if err != nil {
		t.Logf("cpu profile: %v", err)
		return
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil {
		err = os.WriteFile(file, b, 0o644)
	}
	t.Logf("cpu profile of the server: %s (%d bytes, %v)", file, len(b), err)
}

// deadlineOf is ctx's deadline (now if it has none).
func deadlineOf(ctx context.Context) time.Time {
	d, ok := ctx.Deadline()
	if !ok {
		return time.Now()
	}
	return d
}
