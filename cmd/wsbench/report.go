package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// guard bounds every wait for notifications: a failure guard, not a speed
// target.
const guard = 2 * time.Minute

// tracker collects what the client processes report.
type tracker struct {
	mu        sync.Mutex
	changed   chan struct{}
	ready     int
	readyMs   []int64
	conns     int
	mempool   map[string][]int64 // txid → receipt times (unix ns)
	confirmed map[string][]int64
	blocks    map[uint32][]int64
	closed    []string
	fatal     []string
	exited    int
	exitErr   error
}

func newTracker() *tracker {
	return &tracker{changed: make(chan struct{}, 1), mempool: map[string][]int64{},
		confirmed: map[string][]int64{}, blocks: map[uint32][]int64{}}
}

func (t *tracker) line(s string) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return
	}
	t.mu.Lock()
	switch f[0] {
	case "m", "c", "b":
		if len(f) == 4 {
			ns, _ := strconv.ParseInt(f[3], 10, 64)
			switch f[0] {
			case "m":
				t.mempool[f[2]] = append(t.mempool[f[2]], ns)
			case "c":
				t.confirmed[f[2]] = append(t.confirmed[f[2]], ns)
			default:
				h, _ := strconv.ParseUint(f[2], 10, 32)
				t.blocks[uint32(h)] = append(t.blocks[uint32(h)], ns)
			}
		}
	case "ready":
		t.ready++
		if len(f) == 3 {
			n, _ := strconv.Atoi(f[1])
			ms, _ := strconv.ParseInt(f[2], 10, 64)
			t.conns += n
			t.readyMs = append(t.readyMs, ms)
		}
	case "closed":
		t.closed = append(t.closed, s)
	case "fatal":
		t.fatal = append(t.fatal, s)
	}
	t.mu.Unlock()
	t.signal()
}

func (t *tracker) signal() {
	select {
	case t.changed <- struct{}{}:
	default:
	}
}

func (t *tracker) exitedWith(err error) {
	t.mu.Lock()
	t.exited++
	if err != nil && t.exitErr == nil {
		t.exitErr = err
	}
	t.mu.Unlock()
	t.signal()
}

// wait blocks until done (called with t.mu held) reports true, a client
// fails, or the guard expires.
func (t *tracker) wait(what string, done func() bool) error {
	timer := time.NewTimer(guard)
	defer timer.Stop()
	for {
		t.mu.Lock()
		ok := done()
		var bad string
		switch {
		case len(t.fatal) > 0:
			bad = t.fatal[0]
		case len(t.closed) > 0:
			bad = fmt.Sprintf("%d connections closed by the server, first: %s", len(t.closed), t.closed[0])
		case t.exited > 0:
			bad = fmt.Sprintf("a client process exited: %v", t.exitErr)
		}
		t.mu.Unlock()
		if ok {
			return nil
		}
		if bad != "" {
			return fmt.Errorf("waiting for %s: %s", what, bad)
		}
		select {
		case <-t.changed:
		case <-timer.C:
			return fmt.Errorf("%s did not happen within %v (failure guard)", what, guard)
		}
	}
}

func (t *tracker) waitReady(procs int) error {
	return t.wait("all client processes connected and subscribed", func() bool { return t.ready == procs })
}

// waitTxs waits for n address notifications of kind ('m' mempool, 'c'
// confirmed) over txids.
func (t *tracker) waitTxs(txids []string, kind byte, n int) error {
	m := t.mempool
	if kind == 'c' {
		m = t.confirmed
	}
	return t.wait(fmt.Sprintf("%d %c-notifications of %d txs", n, kind, len(txids)), func() bool {
		got := 0
		for _, id := range txids {
			got += len(m[id])
		}
		return got >= n
	})
}

func (t *tracker) waitBlock(h uint32, n int) error {
	return t.wait(fmt.Sprintf("%d notifications of block %d", n, h), func() bool { return len(t.blocks[h]) >= n })
}

// ---- report ---------------------------------------------------------------

type latencies []time.Duration

func (l latencies) pct(p float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	s := slices.Clone(l)
	slices.Sort(s)
	i := int(p*float64(len(s))+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func (l latencies) String() string {
	if len(l) == 0 {
		return "none"
	}
	r := func(d time.Duration) string { return d.Round(10 * time.Microsecond).String() }
	return fmt.Sprintf("median %s, p99 %s, max %s (%d samples)", r(l.pct(0.5)), r(l.pct(0.99)), r(l.pct(1)), len(l))
}

func mb(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/(1<<20)) }

func report(o benchOpts, limit uint64, connected time.Duration, before, with, after [2]int64, res *results, tr *tracker, m map[string]float64) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var mem, conf, blk latencies
	var msgs int
	var busy time.Duration
	var burst []float64 // block notifications per second per block
	for _, ph := range res.phases {
		var last int64
		switch ph.kind {
		case "mempool":
			for _, id := range ph.txids {
				for _, ns := range tr.mempool[id] {
					mem = append(mem, time.Duration(ns-res.txSent[id].UnixNano()))
					last = max(last, ns)
					msgs++
				}
			}
		case "block":
			for _, id := range ph.txids {
				for _, ns := range tr.confirmed[id] {
					conf = append(conf, time.Duration(ns-res.blkAt[ph.height].UnixNano()))
					last = max(last, ns)
					msgs++
				}
			}
			for _, ns := range tr.blocks[ph.height] {
				blk = append(blk, time.Duration(ns-res.blkAt[ph.height].UnixNano()))
				last = max(last, ns)
				msgs++
			}
			if d := time.Duration(last - ph.start.UnixNano()); d > 0 {
				burst = append(burst, float64(len(tr.blocks[ph.height]))/d.Seconds())
			}
		}
		if d := time.Duration(last - ph.start.UnixNano()); d > 0 {
			busy += d
		}
	}
	slices.Sort(burst)
	n := int64(o.conns)
	fmt.Printf("websocket bench: %d connections over loopback from %d client processes (open-file limit %d), each subscribed to new blocks and %d addresses (newBlockTxs=%v, permessage-deflate=%v)\n",
		o.conns, o.procs, limit, addrsPerConn, o.newBlockTxs, o.compress)
	dial := time.Duration(slices.Max(append(tr.readyMs, 1))) * time.Millisecond
	fmt.Printf("  connect + subscribe:        %d connections ready %.2f s after starting the clients; dialing and subscribing took %.2f s in the slowest process (%.0f conn/s overall)\n",
		tr.conns, connected.Seconds(), dial.Seconds(), float64(tr.conns)/dial.Seconds())
	fmt.Printf("  load:                       %d blocks, each after %d payments of %d outputs to subscribed addresses\n", o.blocks, o.txs, o.outputs)
	fmt.Printf("  mempool notifications:      %s, from sendrawtransaction returned to read by the client\n", mem)
	fmt.Printf("  new-block notifications:    %s, from submitblock returned to read by the client\n", blk)
	if o.newBlockTxs {
		fmt.Printf("  confirmation notifications: %s, from submitblock returned\n", conf)
	}
	if busy > 0 {
		fmt.Printf("  delivered:                  %d messages in %.2f s of notification bursts = %.0f messages/s", msgs, busy.Seconds(), float64(msgs)/busy.Seconds())
		if len(burst) > 0 {
			fmt.Printf("; a block to all %d connections at a median %.0f messages/s", o.conns, burst[len(burst)/2])
		}
		fmt.Println()
	}
	fmt.Printf("  server RSS before connections: VmRSS %s, VmHWM %s\n", mb(before[0]), mb(before[1]))
	fmt.Printf("  with %d connections:        VmRSS %s, VmHWM %s\n", o.conns, mb(with[0]), mb(with[1]))
	fmt.Printf("  per connection:             VmRSS %.1f KB, VmHWM %.1f KB ((with - before) / N)\n",
		float64(with[0]-before[0])/float64(n)/1024, float64(with[1]-before[1])/float64(n)/1024)
	fmt.Printf("  after the notifications:    VmRSS %s, VmHWM %s\n", mb(after[0]), mb(after[1]))
	var keys []string
	for k := range m {
		if strings.Contains(k, "notifications_total") || strings.Contains(k, "dropped") || strings.Contains(k, "subscriptions{") || k == "blockbook_websocket_connections" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Printf("  server metric %s = %.0f\n", k, m[k])
	}
}
