package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// progressEvery is how often the count of accepted txs is read for the
// per-million table. The full samples come every -interval (10 s in
// docs/performance.md), a third of a million's time: interpolating between
// them put up to one interval of the final round's flush (the last sample
// is taken once in sync) into the last million, and blockbook's start-up
// into the first.
const progressEvery = 500 * time.Millisecond

// progressPoint is one reading of blockbook_index_txs_total, the txs the
// sync has accepted.
type progressPoint struct {
	elapsed time.Duration
	txs     int64
}

// progressLog reads the count every progressEvery until stopped.
type progressLog struct {
	mu     sync.Mutex
	points []progressPoint
	stop   chan struct{}
	done   chan struct{}
}

func followProgress(metricsURL string, start time.Time) *progressLog {
	p := &progressLog{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		tickUntil(p.stop, progressEvery, func() {
			v, ok := metrics(metricsURL)["blockbook_index_txs_total"]
			if !ok {
				return // not serving yet
			}
			p.mu.Lock()
			p.points = append(p.points, progressPoint{elapsed: time.Since(start), txs: int64(v)})
			p.mu.Unlock()
		})
	}()
	return p
}

// Stop ends the readings and returns them.
func (p *progressLog) Stop() []progressPoint {
	close(p.stop)
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.points
}

// progressFromSamples stands in for the readings of a run that had none
// (its CSV predates them).
func progressFromSamples(samples []sample) []progressPoint {
	out := make([]progressPoint, len(samples))
	for i, s := range samples {
		out[i] = progressPoint{elapsed: s.elapsed, txs: s.txs}
	}
	return out
}

// syncStart is when the sync accepted its first txs: the last reading
// with none (0 when the first reading already had some). The first
// million is timed from there, not from blockbook's launch.
func syncStart(points []progressPoint) time.Duration {
	var t time.Duration
	for _, p := range points {
		if p.txs > 0 {
			break
		}
		t = p.elapsed
	}
	return t
}

// progressPath is where the readings of the run whose samples go to
// csvPath are written.
func progressPath(csvPath string) string {
	return strings.TrimSuffix(csvPath, ".csv") + "-progress.csv"
}

func writeProgressCSV(path string, points []progressPoint) error {
	var b strings.Builder
	b.WriteString("elapsed_s,txs\n")
	for _, p := range points {
		fmt.Fprintf(&b, "%.3f,%d\n", p.elapsed.Seconds(), p.txs)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// readProgressCSV loads an earlier run's readings; a run without them has
// none (nil, no error).
func readProgressCSV(path string) ([]progressPoint, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []progressPoint
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if i == 0 {
			continue
		}
		f := strings.Split(line, ",")
		if len(f) != 2 {
			return nil, fmt.Errorf("%s line %d: %d fields, want 2", path, i+1, len(f))
		}
		sec, err1 := strconv.ParseFloat(f[0], 64)
		txs, err2 := strconv.ParseInt(f[1], 10, 64)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, i+1, err)
		}
		out = append(out, progressPoint{elapsed: time.Duration(sec * float64(time.Second)), txs: txs})
	}
	return out, nil
}
