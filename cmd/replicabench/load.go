package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/openexplorer/blockbook/tools/benchproc"
	"github.com/openexplorer/blockbook/tools/chaingen"
	"github.com/openexplorer/blockbook/tools/nginxlb"
	"github.com/openexplorer/blockbook/tools/regtest"
)

// replicaProc is a replica child process.
type replicaProc struct {
	cmd            *exec.Cmd
	public, status string
	done           chan struct{}
}

func (r *replicaProc) pid() int { return r.cmd.Process.Pid }

func (r *replicaProc) stop() {
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(30 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.done
	}
}

// startReplica runs the binary with -replica on the primary's work
// directory (its blockchaincfg.json and index) and waits for its tip.
func startReplica(ctx context.Context, bin, primaryWork, dir string, height uint32) (*replicaProc, error) {
	pub, err := benchproc.FreeAddr()
	if err != nil {
		return nil, err
	}
	internal, err := benchproc.FreeAddr()
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "blockbook.log"))
	if err != nil {
		return nil, err
	}
	r := &replicaProc{public: pub, status: "http://" + pub + "/api/v2", done: make(chan struct{})}
	r.cmd = exec.Command(bin, "-blockchaincfg="+filepath.Join(primaryWork, "blockchaincfg.json"),
		"-datadir="+filepath.Join(primaryWork, "index"), "-replica", "-replicadir="+filepath.Join(dir, "secondary"),
		"-public="+pub, "-internal="+internal)
	r.cmd.Stdout, r.cmd.Stderr = logf, logf
	if err := r.cmd.Start(); err != nil {
		_ = logf.Close()
		return nil, err
	}
	go func() { _ = r.cmd.Wait(); _ = logf.Close(); close(r.done) }()
	deadline := time.Now().Add(2 * time.Minute)
	for !benchproc.Synced("http://"+pub, height, false) {
		select {
		case <-r.done:
			return nil, fmt.Errorf("replica exited (log: %s)", logf.Name())
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			r.stop()
			return nil, fmt.Errorf("replica not at %d (log: %s)", height, logf.Name())
		}
	}
	return r, nil
}

// restMix is the fixed list of REST paths the clients cycle through:
// per address of the ledger (sorted, up to 50) its txids page, its basic
// details and its UTXOs, and per block height its index and page, with
// the status every tenth request.
func restMix(l *chaingen.Ledger, tip uint32) []string {
	addrs := make([]string, 0, len(l.Addresses))
	for a := range l.Addresses {
		addrs = append(addrs, a)
	}
	slices.Sort(addrs)
	addrs = addrs[:min(50, len(addrs))]
	var mix []string
	for i, a := range addrs {
		h := tip - uint32(i*7)%tip
		mix = append(mix, "/api/v2/address/"+a+"?pageSize=20", "/api/v2/address/"+a+"?details=basic", "/api/v2/utxo/"+a,
			fmt.Sprintf("/api/v2/block-index/%d", h), fmt.Sprintf("/api/v2/block/%d?pageSize=20", h))
		if i%2 == 0 {
			mix = append(mix, "/api/v2")
		}
	}
	return mix
}

// load runs conns clients over the mix against base until ctx ends and
// returns the successful requests and the failed ones.
func load(ctx context.Context, base string, conns int, mix []string) (ok, failed int64) {
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var okN, failN atomic.Int64
	var wg sync.WaitGroup
	for c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := c * 7; ctx.Err() == nil; i++ {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+mix[i%len(mix)], nil)
				resp, err := client.Do(req)
				if err != nil {
					if ctx.Err() == nil {
						failN.Add(1)
					}
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					okN.Add(1)
				} else {
					failN.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return okN.Load(), failN.Load()
}

// measure runs the mix through nginx in front of servers and prints
// requests/s and each process's CPU time over the measured period.
func measure(ctx context.Context, o benchOpts, work, name string, servers, mix []string, procs []proc) error {
	lb, err := nginxlb.Start(ctx, mkdir(work, "nginx-"+strings.ReplaceAll(name, " ", "-")), servers, os.Stderr)
	if err != nil {
		return err
	}
	defer lb.Stop()
	warm, cancel := context.WithTimeout(ctx, 3*time.Second)
	load(warm, lb.Base, o.conns, mix)
	cancel()
	all := append(slices.Clone(procs), proc{"nginx", lb.Pid()}, proc{"load generator", 0})
	before, start := sampleAll(all), time.Now()
	run, cancel := context.WithTimeout(ctx, o.duration)
	ok, failed := load(run, lb.Base, o.conns, mix)
	cancel()
	wall := time.Since(start)
	after := sampleAll(all)
	fmt.Printf("\n%s behind nginx (%d servers): %.0f requests/s (%d ok, %d failed in %s, %d clients)\n",
		name, len(servers), float64(ok)/wall.Seconds(), ok, failed, wall.Round(time.Millisecond), o.conns)
	printCPU(all, before, after, wall, ok)
	return nil
}

// printCPU prints each process's CPU time over the run and, given the
// requests answered, the CPU time per request and the requests/s the
// machine's cores would bound the run to if all of them were free for it
// (on a shared machine the measured rate is lower: the cores were not).
func printCPU(all []proc, before, after []cpuSample, wall time.Duration, requests int64) {
	var total time.Duration
	fmt.Printf("  %-15s %9s %9s %8s %11s\n", "process", "user s", "sys s", "cores", "ms/request")
	for i, p := range all {
		u, s := after[i].user-before[i].user, after[i].sys-before[i].sys
		total += u + s
		fmt.Printf("  %-15s %9.2f %9.2f %8.2f %11.3f\n", p.name, u.Seconds(), s.Seconds(), (u+s).Seconds()/wall.Seconds(),
			perRequest(u+s, requests))
	}
	fmt.Printf("  %-15s %28.2f of %d %6.3f\n", "total", total.Seconds()/wall.Seconds(), numCPU(), perRequest(total, requests))
	if requests > 0 && total > 0 {
		fmt.Printf("  CPU bound with %d free cores: %.0f requests/s\n", numCPU(), float64(numCPU())/(total.Seconds()/float64(requests)))
	}
}

func perRequest(d time.Duration, requests int64) float64 {
	if requests == 0 {
		return 0
	}
	return float64(d.Microseconds()) / 1000 / float64(requests)
}

// measureLag submits the remaining blocks and records, while the primary
// syncs them under the REST mix through the balancer (primary and both
// replicas), when each height first appears on the primary and on each
// replica.
//
// Long: the set-up, the pollers and the report of one measurement.
func measureLag(ctx context.Context, o benchOpts, work string, g *chaingen.Generator, base int32, node *regtest.Node,
	primary *benchproc.Process, reps []*replicaProc, mix []string, procs []proc) error {
	servers := []string{primary.Public}
	for _, r := range reps {
		servers = append(servers, r.public)
	}
	lb, err := nginxlb.Start(ctx, mkdir(work, "nginx-lag"), servers, os.Stderr)
	if err != nil {
		return err
	}
	defer lb.Stop()
	urls := []string{"http://" + primary.Public + "/api/v2"}
	for _, r := range reps {
		urls = append(urls, r.status)
	}
	seen := make([]map[uint32]time.Time, len(urls))
	pollCtx, stopPoll := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i, u := range urls {
		seen[i] = map[uint32]time.Time{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			poll(pollCtx, u, seen[i])
		}()
	}
	loadCtx, stopLoad := context.WithCancel(ctx)
	loadDone := make(chan [2]int64, 1)
	go func() { ok, failed := load(loadCtx, lb.Base, o.conns, mix); loadDone <- [2]int64{ok, failed} }()
	all := append(slices.Clone(procs), proc{"nginx", lb.Pid()}, proc{"load generator", 0})
	before, start := sampleAll(all), time.Now()
	if err := chaingen.SubmitBlocks(ctx, node, g.Blocks(), base+1); err != nil {
		stopLoad()
		stopPoll()
		return err
	}
	tip := uint32(g.Height())
	deadline := time.Now().Add(10 * time.Minute)
	for !benchproc.Synced("http://"+reps[0].public, tip, false) || !benchproc.Synced("http://"+reps[1].public, tip, false) {
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	wall := time.Since(start)
	after := sampleAll(all)
	stopLoad()
	counts := <-loadDone
	time.Sleep(100 * time.Millisecond)
	stopPoll()
	wg.Wait()
	fmt.Printf("\nlag while the primary syncs %d blocks (%s, the REST mix through nginx meanwhile: %.0f requests/s, %d failed)\n",
		tip-uint32(base), wall.Round(time.Millisecond), float64(counts[0])/wall.Seconds(), counts[1])
	// The primary's first time at or above each height: a replica's lag
	// at a height it showed is from then (heights the primary passed
	// between two polls count from when it showed a higher one).
	atLeast := map[uint32]time.Time{}
	var earliest time.Time
	for h := tip; h > uint32(base); h-- {
		if t, ok := seen[0][h]; ok && (earliest.IsZero() || t.Before(earliest)) {
			earliest = t
		}
		if !earliest.IsZero() {
			atLeast[h] = earliest
		}
	}
	for i := range reps {
		var lags []time.Duration
		for h, r := range seen[i+1] {
			if p, ok := atLeast[h]; ok && h > uint32(base) {
				lags = append(lags, max(0, r.Sub(p)))
			}
		}
		if len(lags) == 0 {
			fmt.Printf("  replica %d: no new height seen\n", i+1)
			continue
		}
		slices.Sort(lags)
		pct := func(q float64) time.Duration { return lags[int(q*float64(len(lags)-1))].Round(time.Millisecond) }
		fmt.Printf("  replica %d: lag behind the primary at %d heights it showed: p50 %s, p90 %s, p99 %s, max %s\n",
			i+1, len(lags), pct(0.5), pct(0.9), pct(0.99), lags[len(lags)-1].Round(time.Millisecond))
	}
	printCPU(all, before, after, wall, counts[0])
	if !benchproc.Synced("http://"+reps[1].public, tip, false) {
		return errors.New("the replicas did not reach the tip within 10 minutes")
	}
	return nil
}

// poll records when each best height first shows in the status at u.
func poll(ctx context.Context, u string, seen map[uint32]time.Time) {
	client := &http.Client{Timeout: 5 * time.Second}
	for ctx.Err() == nil {
		var h uint32
		if height(client, u, &h) == nil {
			if _, ok := seen[h]; !ok {
				seen[h] = time.Now()
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}
