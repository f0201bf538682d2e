package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/tools/benchproc"
)

// Flags of the whale chain's query list (see main).
var (
	// runs is -runs: the query list is timed this many times, the
	// queries alternating within each run, so that a slow minute of a
	// shared machine falls on every query rather than on one.
	runs int
	// only is -only: time only the queries whose name matches.
	only *regexp.Regexp
	// memProfile is -memprofile: an allocation profile written at the end.
	memProfile string
)

// utxoTarget is the UTXO count of the second UTXO query's address: the
// one issue 46 measured Blockbook against had 411.
const utxoTarget = 411

// query is a named GET; bound, if set, times the query's lower bound
// (utxoBound) as many times as its warm samples.
type query struct {
	name, path string
	bound      func(warm int) ([]time.Duration, error)
}

// timeQueries times each query cold and warm in each of -runs runs, and
// prints each run's figures and then all runs' samples together.
func timeQueries(open opener, queries []query, cold, warm int) error {
	all := make([]result, len(queries))
	for r := range runs {
		fmt.Printf("run %d of %d:\n", r+1, runs)
		for i, q := range queries {
			if only != nil && !only.MatchString(q.name) {
				continue
			}
			res, err := sample(open, q.name, []string{q.path}, cold, warm)
			if err != nil {
				return err
			}
			res.print(q.name)
			if q.bound != nil {
				b, err := q.bound(warm)
				if err != nil {
					return fmt.Errorf("%s: lower bound: %w", q.name, err)
				}
				printBound(q.name, res.warm, b)
				all[i].bound = append(all[i].bound, b...)
			}
			if r > 0 && res.sum != all[i].sum {
				return fmt.Errorf("%s: the answer changed between runs (%s, then %s)", q.name, all[i].sum, res.sum)
			}
			a := &all[i]
			a.cold, a.warm, a.size, a.sum = append(a.cold, res.cold...), append(a.warm, res.warm...), res.size, res.sum
			a.cpu += res.cpu / time.Duration(runs)
			a.allocs += res.allocs / uint64(runs)
			a.allocBytes += res.allocBytes / uint64(runs)
		}
	}
	if runs > 1 {
		fmt.Printf("all %d runs (%d cold and %d warm samples per query; warm costs averaged):\n", runs, runs*cold, runs*warm)
		for i, q := range queries {
			if len(all[i].warm) > 0 {
				all[i].print(q.name)
			}
			if len(all[i].bound) > 0 {
				printBound(q.name, all[i].warm, all[i].bound)
			}
		}
	}
	return writeMemProfile()
}

func writeMemProfile() error {
	if memProfile == "" {
		return nil
	}
	runtime.GC() // up-to-date statistics
	f, err := os.Create(memProfile)
	if err != nil {
		return err
	}
	err = pprof.Lookup("allocs").WriteTo(f, 0)
	return errors.Join(err, f.Close())
}

// closestUtxoCount picks from the unspent outputs' descriptors the one
// whose count is closest to utxoTarget (ties: the smaller descriptor),
// returned with the count in txs.
func closestUtxoCount(unspent map[wire.OutPoint]string) busiest {
	count := map[string]int{}
	for _, d := range unspent {
		count[d]++
	}
	var best busiest
	dist := func(n int) int { return max(n-utxoTarget, utxoTarget-n) }
	for d, n := range count {
		if best.txs == 0 || dist(n) < dist(best.txs) || (dist(n) == dist(best.txs) && d < string(best.desc)) {
			best = busiest{desc: []byte(d), txs: n}
		}
	}
	return best
}

// fetch times one query: a GET of path, or for "POST <path> <json>" a
// POST. A GET's answer is read, not decoded: the decoding would be the
// client's CPU in the warm figures' process CPU time.
func fetch(base, p string) (time.Duration, []byte, error) {
	return fetchInto(base, p, nil)
}

// fetchInto is fetch reading a GET's answer into buf's storage (reset
// first), so that repeated queries allocate no answer-sized buffers in the
// client: the server shares the process, and a client growing an
// answer-sized buffer per query adds its allocations and their GC to the
// server's figures (Blockbook's baselines had the client in another
// process).
func fetchInto(base, p string, buf *bytes.Buffer) (time.Duration, []byte, error) {
	if rest, ok := strings.CutPrefix(p, "POST "); ok {
		path, body, _ := strings.Cut(rest, " ")
		var raw json.RawMessage
		d, _, err := benchproc.TimePost(base+path, []byte(body), &raw)
		return d, raw, err
	}
	start := time.Now()
	resp, err := http.Get(base + p)
	if err != nil {
		return 0, nil, err
	}
	var body []byte
	if buf == nil {
		body, err = io.ReadAll(resp.Body)
	} else {
		buf.Reset()
		_, err = buf.ReadFrom(resp.Body)
		body = buf.Bytes()
	}
	resp.Body.Close()
	d := time.Since(start)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %d %.200s", p, resp.StatusCode, body)
	}
	return d, body, err
}

// timeQuery times GETs (or POSTs, see fetch) of paths (taken in turn),
// cold and warm (see sample), and prints the figures.
func timeQuery(open opener, name string, paths []string, cold, warm int) error {
	r, err := sample(open, name, paths, cold, warm)
	if err != nil {
		return err
	}
	r.print(name)
	return nil
}

// result is one query's samples and its warm costs per query.
type result struct {
	cold, warm []time.Duration
	size       int
	sum        string          // the answers' sha256, to compare builds
	cpu        time.Duration   // process CPU time (user + system) per warm query, the GC's included
	allocs     uint64          // heap allocations per warm query
	allocBytes uint64          // bytes allocated per warm query
	bound      []time.Duration // the query's lower bound's samples (timeQueries)
}

func (r result) print(name string) {
	fmt.Printf("  %-50s cold: median %9s p99 %9s | warm: median %9s p99 %9s | warm CPU %8s, %7d allocs, %9d B per query | %d bytes, sha256 %s\n", name,
		benchproc.Percentile(r.cold, 50), benchproc.Percentile(r.cold, 99), benchproc.Percentile(r.warm, 50), benchproc.Percentile(r.warm, 99),
		r.cpu.Round(time.Microsecond), r.allocs, r.allocBytes, r.size, r.sum)
}

// sample times paths cold, opening the index and a fresh service before
// each query, and warm, on one service after one untimed GET of each path
// (which would be a cold one).
func sample(open opener, name string, paths []string, cold, warm int) (result, error) {
	var r result
	for i := range cold {
		d, srv, err := open()
		if err != nil {
			return r, err
		}
		t, _, err := fetch(srv.URL, paths[i%len(paths)])
		srv.Close()
		d.Close()
		if err != nil {
			return r, fmt.Errorf("%s: %w", name, err)
		}
		r.cold = append(r.cold, t)
	}
	d, srv, err := open()
	if err != nil {
		return r, err
	}
	defer d.Close()
	defer srv.Close()
	h := sha256.New()
	for _, p := range paths {
		_, body, err := fetch(srv.URL, p)
		if err != nil {
			return r, fmt.Errorf("%s: %w", name, err)
		}
		r.size += len(body)
		h.Write(body)
	}
	r.size /= len(paths)
	r.sum = hex.EncodeToString(h.Sum(nil)[:8])
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := processCPU()
	var buf bytes.Buffer
	for i := range warm {
		t, _, err := fetchInto(srv.URL, paths[i%len(paths)], &buf)
		if err != nil {
			return r, fmt.Errorf("%s: %w", name, err)
		}
		r.warm = append(r.warm, t)
	}
	r.cpu = (processCPU() - cpu0) / time.Duration(warm)
	runtime.ReadMemStats(&m1)
	r.allocs = (m1.Mallocs - m0.Mallocs) / uint64(warm)
	r.allocBytes = (m1.TotalAlloc - m0.TotalAlloc) / uint64(warm)
	return r, nil
}

// processCPU is the process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
