package main

import (
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
	r := summarize(samples, 2048, true)
	if len(r.rows) != 2 {
		t.Fatalf("%d rows, want 2:\n%s", len(r.rows), r.text)
	}
	if r.rows[0].probeUs != 120 || r.rows[1].probeUs != 180 {
		t.Fatalf("probe medians %v and %v µs, want 120 and 180", r.rows[0].probeUs, r.rows[1].probeUs)
	}
	if !strings.Contains(r.text, "CPU probe of the last million / the first: 150%") {
		t.Fatalf("report lacks the probe's ratio:\n%s", r.text)
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
