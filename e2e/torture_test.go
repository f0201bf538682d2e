package e2e

// Shared knobs of the torture campaigns (issue 14). Each campaign is a
// TestTorture<Name> test in its own file: its short version runs in the
// ordinary suite (CI), and `make torture` runs every campaign at full size
// with -torture.full. Each campaign ends with one summary line per run
// (tortureReport), which `make torture` collects for docs/reliability.md.

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

var tortureFull = flag.Bool("torture.full", false, "run the torture campaigns at full size (make torture)")

// tortureSize picks a campaign's size: the flag when set (>0), else the full
// size under -torture.full, else the short size that CI runs.
func tortureSize(flagValue, short, full int) int {
	switch {
	case flagValue > 0:
		return flagValue
	case *tortureFull:
		return full
	default:
		return short
	}
}

// tortureDuration is tortureSize for durations.
func tortureDuration(flagValue, short, full time.Duration) time.Duration {
	switch {
	case flagValue > 0:
		return flagValue
	case *tortureFull:
		return full
	default:
		return short
	}
}

var tortureReportMu sync.Mutex

// tortureReport logs a campaign's summary line and appends it to
// $BLOCKBOOK_ARTIFACTS/torture.txt when that is set, so a full run leaves
// its figures in one file.
func tortureReport(t testing.TB, campaign, format string, args ...any) {
	t.Helper()
	line := fmt.Sprintf("TORTURE %s: %s", campaign, fmt.Sprintf(format, args...))
	t.Log(line)
	dir := os.Getenv("BLOCKBOOK_ARTIFACTS")
	if dir == "" {
		return
	}
	tortureReportMu.Lock()
	defer tortureReportMu.Unlock()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Logf("torture report: %v", err)
		return
	}
	f, err := os.OpenFile(filepath.Join(dir, "torture.txt"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Logf("torture report: %v", err)
		return
	}
	defer func() { _ = f.Close() }()
	_, _ = fmt.Fprintf(f, "%s %s\n", time.Now().UTC().Format(time.RFC3339), line)
}
