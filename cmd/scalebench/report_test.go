package main

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Each million's row carries the median of the CPU probe over its samples,
// the report compares the last million's with the first's, and the CSV
// keeps the probe for -report.
func TestReportCarriesTheCPUProbe(t *testing.T) {
	sec := func(n int) time.Duration { return time.Duration(n) * time.Second }
	samples := []sample{
		{elapsed: sec(10), txs: 400_000, probe: 100 * time.Microsecond},
		{elapsed: sec(20), txs: 800_000, probe: 300 * time.Microsecond},
		{elapsed: sec(30), txs: 1_000_000, probe: 120 * time.Microsecond},
		{elapsed: sec(40), txs: 1_500_000, probe: 180 * time.Microsecond},
		{elapsed: sec(50), txs: 2_000_000, probe: 180 * time.Microsecond},
	}
	r := summarize(samples, nil, 2048, endSynced)
	if len(r.rows) != 2 {
		t.Fatalf("%d rows, want 2:\n%s", len(r.rows), r.text)
	}
	if r.rows[0].probeUs != 120 || r.rows[1].probeUs != 180 {
		t.Fatalf("probe medians %v and %v µs, want 120 and 180", r.rows[0].probeUs, r.rows[1].probeUs)
	}
	if !strings.Contains(r.text, "CPU probe of the last million / the first: 150%") {
		t.Fatalf("report lacks the probe's ratio:\n%s", r.text)
	}
	// The samples had txs from the first one on: the first million starts
	// at launch.
	if !strings.Contains(r.text, "timed from launch") || !strings.Contains(r.text, "in sync at the tip") {
		t.Fatalf("report does not say where the first million starts or how the run ended:\n%s", r.text)
	}
	path := filepath.Join(t.TempDir(), "run.csv")
	if err := writeCSV(path, samples); err != nil {
		t.Fatal(err)
	}
	back, err := readCSV(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(samples) || back[1].probe != 300*time.Microsecond {
		t.Fatalf("read back %d samples, the second's probe %v", len(back), back[1].probe)
	}
}

// The readings of the tx count, not the coarser samples, time each
// million: the first from the sync's first txs (not blockbook's launch),
// the last up to when the count reached it (not the final sample, taken
// once the last round is flushed and the status is in sync). They are
// kept for -report.
func TestMillionsAreTimedByTheReadings(t *testing.T) {
	sec := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	samples := []sample{
		{elapsed: sec(10), txs: 600_000, cpuUser: 10},
		{elapsed: sec(20), txs: 1_500_000, cpuUser: 30},
		{elapsed: sec(30), txs: 2_000_000, cpuUser: 40},
	}
	points := []progressPoint{
		{sec(0.5), 0}, {sec(2), 0}, {sec(4), 100_000},
		{sec(20), 1_500_000}, {sec(24), 1_900_000}, {sec(25), 2_000_000}, {sec(25.5), 2_000_000},
	}
	r := summarize(samples, points, 2048, endSynced)
	if len(r.rows) != 2 {
		t.Fatalf("%d rows, want 2:\n%s", len(r.rows), r.text)
	}
	// The first million: from 2 s (the last reading with no txs) to the
	// interpolated crossing between 4 s and 20 s.
	first := sec(4) + time.Duration(float64(sec(16))*900_000/1_400_000)
	if want := 1e6 / (first - sec(2)).Seconds(); math.Abs(r.rows[0].txPerS-want) > 1 {
		t.Fatalf("first million at %.0f tx/s, want %.0f", r.rows[0].txPerS, want)
	}
	if want := 1e6 / (sec(25) - first).Seconds(); math.Abs(r.rows[1].txPerS-want) > 1 {
		t.Fatalf("second million at %.0f tx/s, want %.0f (timed to the final sample at 30 s?)", r.rows[1].txPerS, want)
	}
	// CPU seconds are interpolated between the samples: 2 at 2 s, and
	// 10 + 20 × (first − 10 s)/10 s at the first crossing.
	if want := 10 + 20*(first-sec(10)).Seconds()/10 - 2; math.Abs(r.rows[0].cpuS-want) > 0.01 {
		t.Fatalf("first million took %.2f CPU s, want %.2f", r.rows[0].cpuS, want)
	}
	if !strings.Contains(r.text, "timed from 2.0 s after launch") {
		t.Fatalf("report does not say where the first million starts:\n%s", r.text)
	}
	path := filepath.Join(t.TempDir(), "run.csv")
	if err := writeProgressCSV(progressPath(path), points); err != nil {
		t.Fatal(err)
	}
	back, err := readProgressCSV(progressPath(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(points) || back[3] != points[3] {
		t.Fatalf("read back %v, want %v", back, points)
	}
	if none, err := readProgressCSV(filepath.Join(t.TempDir(), "old-progress.csv")); none != nil || err != nil {
		t.Fatalf("a run without readings: %v, %v; want none and no error", none, err)
	}
}
