package main

import (
	"bufio"
	"fmt"
	"math"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/openexplorer/blockbook/internal/promreg"
)

// metrics reads the Prometheus text at url into name -> value (labels
// kept in the name, histogram buckets left out).
func metrics(url string) map[string]float64 {
	out := map[string]float64{}
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return out
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := promreg.WithoutCoin(sc.Text())
		if strings.HasPrefix(line, "#") || strings.Contains(line, "_bucket") {
			continue
		}
		if i := strings.LastIndexByte(line, ' '); i > 0 {
			if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
				out[line[:i]] = v
			}
		}
	}
	return out
}

func writeCSV(path string, samples []sample) error {
	var b strings.Builder
	b.WriteString("elapsed_s,height,txs,rss_bytes,peak_rss_bytes,datadir_bytes,level0_files,pending_compaction_bytes,cpu_user_s,cpu_sys_s," +
		"go_bytes,block_cache_bytes,memtable_bytes,table_reader_bytes,malloc_in_use_bytes,malloc_free_bytes,cpu_probe_us\n")
	for _, s := range samples {
		m := s.mem
		fmt.Fprintf(&b, "%.1f,%d,%d,%d,%d,%d,%d,%d,%.1f,%.1f,%d,%d,%d,%d,%d,%d,%d\n", s.elapsed.Seconds(), s.height, s.txs, s.rss, s.hwm,
			s.dbBytes, s.level0, s.pendingBytes, s.cpuUser, s.cpuS, m.goBytes, m.blockCache, m.memtables, m.tableReaders, m.mallocInUse, m.mallocFree,
			s.probe.Microseconds())
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// millionRow is the sync of one million transactions.
type millionRow struct {
	million      int     // the m-th million (1-based)
	txPerS       float64 // throughput over it
	rssMB, hwmMB float64 // at its end
	dbBytesPerTx float64
	level0       int64
	pendingGB    float64
	cpuS         float64 // CPU seconds (user + system) the million took
	probeUs      float64 // the CPU probe's median over it (0: not sampled)
}

type report struct {
	rows []millionRow
	text string
}

// crossing interpolates the time at which the accepted txs reached n.
func crossing(points []progressPoint, n int64) (time.Duration, bool) {
	prevT, prevN := time.Duration(0), int64(0)
	for _, p := range points {
		if p.txs >= n {
			if p.txs == prevN {
				return p.elapsed, true
			}
			f := float64(n-prevN) / float64(p.txs-prevN)
			return prevT + time.Duration(f*float64(p.elapsed-prevT)), true
		}
		prevT, prevN = p.elapsed, p.txs
	}
	return 0, false
}

// cpuAt interpolates the CPU seconds used by time t between the samples.
func cpuAt(samples []sample, t time.Duration) float64 {
	prevT, prevCPU := time.Duration(0), 0.0
	for _, s := range samples {
		cpu := s.cpuUser + s.cpuS
		if s.elapsed >= t {
			if s.elapsed == prevT {
				return cpu
			}
			f := float64(t-prevT) / float64(s.elapsed-prevT)
			return prevCPU + f*(cpu-prevCPU)
		}
		prevT, prevCPU = s.elapsed, cpu
	}
	return prevCPU
}

// sampleAt is the first sample taken at or after t (the last one if none).
func sampleAt(samples []sample, t time.Duration) sample {
	for _, s := range samples {
		if s.elapsed >= t {
			return s
		}
	}
	return samples[len(samples)-1]
}

// runEnd is how a run ended, as its report's headline says it.
type runEnd string

const (
	endSynced  runEnd = "in sync at the tip"
	endLimit   runEnd = "stopped before the tip (-limit)"
	endRebuilt runEnd = "end not recorded (a report rebuilt from the CSV)"
)

// summarize builds the per-million table and the headline figures. Each
// million is timed by the readings of the tx count (points; the samples
// stand in when there are none), the first from the sync's first txs.
// end says how the run ended, for the headline.
func summarize(samples []sample, points []progressPoint, budgetMB int, end runEnd) report {
	var r report
	var b strings.Builder
	last := samples[len(samples)-1]
	if len(points) == 0 {
		points = progressFromSamples(samples)
	}
	start := syncStart(points)
	prev, prevCPU := start, cpuAt(samples, start)
	for m := 1; ; m++ {
		t, ok := crossing(points, int64(m)*1e6)
		if !ok || t <= prev {
			break
		}
		s, cpu := sampleAt(samples, t), cpuAt(samples, t)
		row := millionRow{million: m, txPerS: 1e6 / (t - prev).Seconds(), rssMB: mb(s.rss), hwmMB: mb(s.hwm),
			dbBytesPerTx: float64(s.dbBytes) / float64(s.txs), level0: s.level0, pendingGB: float64(s.pendingBytes) / 1e9,
			cpuS: cpu - prevCPU, probeUs: probeMedian(samples, prev, t)}
		r.rows = append(r.rows, row)
		prev, prevCPU = t, cpu
	}
	fmt.Fprintf(&b, "%d txs (height %d) in %.0f s, %s; overall %.0f tx/s; peak RSS %.0f MB (budget -syncmemory=%d); datadir %.2f GB (%.0f bytes/tx); CPU %.0f s user + %.0f s sys\n",
		last.txs, last.height, last.elapsed.Seconds(), end, float64(last.txs)/last.elapsed.Seconds(), mb(last.hwm), budgetMB,
		float64(last.dbBytes)/1e9, float64(last.dbBytes)/math.Max(1, float64(last.txs)), last.cpuUser, last.cpuS)
	if start > 0 {
		fmt.Fprintf(&b, "the first million is timed from %.1f s after launch, the last reading before the sync's first txs\n", start.Seconds())
	} else {
		b.WriteString("the first million is timed from launch: the first reading already had txs\n")
	}
	b.WriteString("| million | tx/s | CPU s | RSS MB | peak RSS MB | datadir bytes/tx | L0 files | pending compaction GB | CPU probe µs |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, row := range r.rows {
		fmt.Fprintf(&b, "| %d | %.0f | %.0f | %.0f | %.0f | %.0f | %d | %.2f | %.0f |\n", row.million, row.txPerS, row.cpuS, row.rssMB, row.hwmMB, row.dbBytesPerTx, row.level0, row.pendingGB, row.probeUs)
	}
	if n := len(r.rows); n > 1 {
		first, lastRow := r.rows[0], r.rows[n-1]
		fmt.Fprintf(&b, "throughput of the last million / the first: %.0f%%; CPU seconds of the first million / the last: %.0f%%\n",
			100*lastRow.txPerS/first.txPerS, 100*first.cpuS/lastRow.cpuS)
		if first.probeUs > 0 && lastRow.probeUs > 0 {
			fmt.Fprintf(&b, "CPU probe of the last million / the first: %.0f%% (above 100%%: the machine was slower at the end)\n",
				100*lastRow.probeUs/first.probeUs)
		}
	}
	r.text = b.String()
	return r
}

// probeMedian is the median of the samples' probe costs in (from, to], in
// µs (0: none sampled).
func probeMedian(samples []sample, from, to time.Duration) float64 {
	var in []time.Duration
	for _, s := range samples {
		if s.elapsed > from && s.elapsed <= to && s.probe > 0 {
			in = append(in, s.probe)
		}
	}
	if len(in) == 0 {
		return 0
	}
	slices.Sort(in)
	return float64(in[len(in)/2].Microseconds())
}

// readCSV loads the samples of an earlier run (-report).
func readCSV(path string) ([]sample, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []sample
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Split(line, ",")
		if i == 0 {
			continue
		}
		// Runs before the memory parts were sampled have 10 fields, before
		// the CPU probe 16.
		if len(f) != 10 && len(f) != 16 && len(f) != 17 {
			return nil, fmt.Errorf("%s line %d: %d fields, want 10, 16 or 17", path, i+1, len(f))
		}
		var v [17]float64
		for j := range f {
			if v[j], err = strconv.ParseFloat(f[j], 64); err != nil {
				return nil, fmt.Errorf("%s line %d: %w", path, i+1, err)
			}
		}
		out = append(out, sample{elapsed: time.Duration(v[0] * float64(time.Second)), height: int64(v[1]), txs: int64(v[2]),
			rss: int64(v[3]), hwm: int64(v[4]), dbBytes: int64(v[5]), level0: int64(v[6]), pendingBytes: int64(v[7]),
			cpuUser: v[8], cpuS: v[9], mem: memParts{goBytes: int64(v[10]), blockCache: int64(v[11]), memtables: int64(v[12]),
				tableReaders: int64(v[13]), mallocInUse: int64(v[14]), mallocFree: int64(v[15])},
			probe: time.Duration(v[16]) * time.Microsecond})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no samples", path)
	}
	return out, nil
}
