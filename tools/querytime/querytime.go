// Package querytime times REST queries against an index served in the
// benchmark's own process, cold and warm, in alternating runs: the timing
// harness of cmd/querybench (whale and scale modes) and cmd/routebench.
// It uses only the HTTP route, so that routebench, built over an older
// tree's server, times the same queries the same way for a before/after.
package querytime

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/tools/benchproc"
)

// Opener opens the index and a fresh service over it.
type Opener func() (*db.DB, *httptest.Server, error)

// Query is a named GET (or "POST <path> <json>", see Fetch) of Paths,
// taken in turn. Open, if set, replaces the opener TimeQueries is given;
// Warm, if set, the warm count. Bound, if set, times the query's lower
// bound as many times as its warm samples.
type Query struct {
	Name  string
	Paths []string
	Open  Opener
	Warm  int
	Bound func(warm int) ([]time.Duration, error)
}

// Options are the runs' shape: Runs times the list, the queries
// alternating within each run, so that a slow minute of a shared machine
// falls on every query rather than on one; Only, if set, keeps the
// queries whose name matches.
type Options struct {
	Runs int
	Only *regexp.Regexp
	// Samples, if set, gets every sample as a CSV line: Label, the
	// query's name, "cold" or "warm", microseconds (to pool the samples
	// of several processes, builds alternating).
	Samples io.Writer
	Label   string
}

// TimeQueries times each query cold and warm in each run, and prints each
// run's figures and then all runs' samples together. An answer that
// changes between runs is an error.
func TimeQueries(open Opener, queries []Query, cold, warm int, o Options) error {
	all := make([]Result, len(queries))
	for r := range o.Runs {
		fmt.Printf("run %d of %d:\n", r+1, o.Runs)
		for i, q := range queries {
			if o.Only != nil && !o.Only.MatchString(q.Name) {
				continue
			}
			qo, qw := open, warm
			if q.Open != nil {
				qo = q.Open
			}
			if q.Warm > 0 {
				qw = q.Warm
			}
			res, err := Sample(qo, q.Name, q.Paths, cold, qw)
			if err != nil {
				return err
			}
			res.Print(q.Name)
			if err := o.writeSamples(q.Name, res); err != nil {
				return err
			}
			if q.Bound != nil {
				b, err := q.Bound(qw)
				if err != nil {
					return fmt.Errorf("%s: lower bound: %w", q.Name, err)
				}
				PrintBound(q.Name, res.Warm, b)
				all[i].Bound = append(all[i].Bound, b...)
			}
			if r > 0 && res.Sum != all[i].Sum {
				return fmt.Errorf("%s: the answer changed between runs (%s, then %s)", q.Name, all[i].Sum, res.Sum)
			}
			a := &all[i]
			a.Cold, a.Warm, a.Size, a.Sum = append(a.Cold, res.Cold...), append(a.Warm, res.Warm...), res.Size, res.Sum
			a.CPU += res.CPU / time.Duration(o.Runs)
			a.Allocs += res.Allocs / uint64(o.Runs)
			a.AllocBytes += res.AllocBytes / uint64(o.Runs)
		}
	}
	if o.Runs > 1 {
		fmt.Printf("all %d runs (%d cold samples per query, warm ones as in each run; warm costs averaged):\n", o.Runs, o.Runs*cold)
		for i, q := range queries {
			if len(all[i].Warm) > 0 {
				all[i].Print(q.Name)
			}
			if len(all[i].Bound) > 0 {
				PrintBound(q.Name, all[i].Warm, all[i].Bound)
			}
		}
	}
	return nil
}

func (o Options) writeSamples(name string, r Result) error {
	if o.Samples == nil {
		return nil
	}
	var b []byte
	for _, k := range []struct {
		kind string
		ds   []time.Duration
	}{{"cold", r.Cold}, {"warm", r.Warm}} {
		for _, d := range k.ds {
			b = fmt.Appendf(b, "%s,%q,%s,%.1f\n", o.Label, name, k.kind, float64(d.Nanoseconds())/1e3)
		}
	}
	_, err := o.Samples.Write(b)
	return err
}

// Fetch times one query: a GET of path, or for "POST <path> <json>" a
// POST. A GET's answer is read, not decoded: the decoding would be the
// client's CPU in the warm figures' process CPU time.
func Fetch(base, p string) (time.Duration, []byte, error) {
	return fetchInto(base, p, nil)
}

// fetchInto is Fetch reading a GET's answer into buf's storage (reset
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

// TimeQuery times one query cold and warm (see Sample) and prints it.
func TimeQuery(open Opener, name string, paths []string, cold, warm int) error {
	r, err := Sample(open, name, paths, cold, warm)
	if err != nil {
		return err
	}
	r.Print(name)
	return nil
}

// Result is one query's samples and its warm costs per query.
type Result struct {
	Cold, Warm []time.Duration
	Size       int
	Sum        string          // the answers' sha256, to compare builds
	CPU        time.Duration   // process CPU time (user + system) per warm query, the GC's included
	Allocs     uint64          // heap allocations per warm query
	AllocBytes uint64          // bytes allocated per warm query
	Bound      []time.Duration // the query's lower bound's samples (TimeQueries)
}

// Print prints the result on one line.
func (r Result) Print(name string) {
	fmt.Printf("  %-50s cold: median %9s p99 %9s | warm: median %9s p99 %9s | warm CPU %8s, %7d allocs, %9d B per query | %d bytes, sha256 %s\n", name,
		benchproc.Percentile(r.Cold, 50), benchproc.Percentile(r.Cold, 99), benchproc.Percentile(r.Warm, 50), benchproc.Percentile(r.Warm, 99),
		r.CPU.Round(time.Microsecond), r.Allocs, r.AllocBytes, r.Size, r.Sum)
}

// Sample times paths cold, opening the index and a fresh service before
// each query, and warm, on one service after one untimed GET of each path
// (which would be a cold one).
func Sample(open Opener, name string, paths []string, cold, warm int) (Result, error) {
	var r Result
	for i := range cold {
		d, srv, err := open()
		if err != nil {
			return r, err
		}
		t, _, err := Fetch(srv.URL, paths[i%len(paths)])
		srv.Close()
		d.Close()
		if err != nil {
			return r, fmt.Errorf("%s: %w", name, err)
		}
		r.Cold = append(r.Cold, t)
	}
	d, srv, err := open()
	if err != nil {
		return r, err
	}
	defer d.Close()
	defer srv.Close()
	h := sha256.New()
	for _, p := range paths {
		_, body, err := Fetch(srv.URL, p)
		if err != nil {
			return r, fmt.Errorf("%s: %w", name, err)
		}
		r.Size += len(body)
		h.Write(body)
	}
	r.Size /= len(paths)
	r.Sum = hex.EncodeToString(h.Sum(nil)[:8])
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := processCPU()
	var buf bytes.Buffer
	for i := range warm {
		t, _, err := fetchInto(srv.URL, paths[i%len(paths)], &buf)
		if err != nil {
			return r, fmt.Errorf("%s: %w", name, err)
		}
		r.Warm = append(r.Warm, t)
	}
	r.CPU = (processCPU() - cpu0) / time.Duration(warm)
	runtime.ReadMemStats(&m1)
	r.Allocs = (m1.Mallocs - m0.Mallocs) / uint64(warm)
	r.AllocBytes = (m1.TotalAlloc - m0.TotalAlloc) / uint64(warm)
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

// PrintBound prints a query's bound and the ratio of the query's warm
// median and p99 to the bound's.
func PrintBound(name string, query, bound []time.Duration) {
	ratio := func(p int) string {
		q, b := percentile(query, p), percentile(bound, p)
		if b <= 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", float64(q)/float64(b))
	}
	fmt.Printf("  %-50s lower bound (index reads alone, warm): median %9s p99 %9s | query / bound: median %s, p99 %s\n",
		name, benchproc.Percentile(bound, 50), benchproc.Percentile(bound, 99), ratio(50), ratio(99))
}

// percentile is benchproc.Percentile's sample, unrounded.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[max((len(s)*p+99)/100-1, 0)]
}

// Spec is a query as a file lists it (cmd/querybench -queries writes the
// list it times, cmd/routebench times such a list): a GET of Paths, on a
// service without the xpub cache if NoXpubCache (such a query costs about
// a cold one every time: both commands time it warm as many times as
// cold).
type Spec struct {
	Name        string
	Paths       []string
	NoXpubCache bool `json:",omitempty"`
}

// WriteSpecs writes specs to path as JSON.
func WriteSpecs(path string, specs []Spec) error {
	b, err := json.MarshalIndent(specs, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// ReadSpecs reads a list WriteSpecs wrote.
func ReadSpecs(path string) ([]Spec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var specs []Spec
	if err := json.Unmarshal(b, &specs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, s := range specs {
		if s.Name == "" || len(s.Paths) == 0 {
			return nil, fmt.Errorf("%s: a query without a name or paths", path)
		}
	}
	return specs, nil
}

// Prime runs each query o keeps once, untimed, on one service: what a
// query's first run fills outside the index (a stand-in node's txs) is
// then filled before any timing.
func Prime(open Opener, queries []Query, o Options) error {
	d, srv, err := open()
	if err != nil {
		return err
	}
	defer d.Close()
	defer srv.Close()
	for _, q := range queries {
		if o.Only != nil && !o.Only.MatchString(q.Name) {
			continue
		}
		for _, p := range q.Paths {
			if _, _, err := Fetch(srv.URL, p); err != nil {
				return fmt.Errorf("%s: %w", q.Name, err)
			}
		}
	}
	return nil
}
