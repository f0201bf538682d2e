package listen

import (
	"math"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// How late the process is: how long its runnable goroutines wait to run.
// Under a flood of cheap requests every request, a victim's included,
// waits in the one Go run queue behind the attackers' thousands; that
// wait is the signal for admitting less of a greedy client's work
// (LimitConfig.Late), not the CPU use, which a healthy busy server has
// too.
const (
	latePeriod   = 100 * time.Millisecond
	lateQuantile = 0.9
	// DefaultLateAfter is -listenlateafter's default: a run-queue wait
	// at the 90th percentile that a request feels as lag, far above an
	// idle or merely busy process's microseconds.
	DefaultLateAfter = 100 * time.Millisecond
)

var (
	lateOnce sync.Once
	schedLag atomic.Int64 // nanoseconds, the last period's
)

// LateAfter returns a lateness signal: true while the process's run-queue
// wait (the last 100 ms's 90th percentile of goroutine scheduling
// latency, or the sampler's own lateness if larger) exceeds after. The
// sampler is one goroutine for the process, started at the first call.
// after <= 0: nil (never late).
func LateAfter(after time.Duration) func() bool {
	if after <= 0 {
		return nil
	}
	lateOnce.Do(func() { go sampleSchedLag() })
	return func() bool { return time.Duration(schedLag.Load()) > after }
}

// SchedLag is the last sampled run-queue wait (0 before LateAfter).
func SchedLag() time.Duration { return time.Duration(schedLag.Load()) }

func sampleSchedLag() {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	var prev []uint64
	last := time.Now()
	t := time.NewTicker(latePeriod)
	defer t.Stop()
	for range t.C {
		now := time.Now()
		own := now.Sub(last) - latePeriod // the sampler's own wait to run
		last = now
		metrics.Read(s)
		if s[0].Value.Kind() != metrics.KindFloat64Histogram {
			return // not offered by this runtime: never late
		}
		h := s[0].Value.Float64Histogram()
		lag := max(quantileSince(h, prev, lateQuantile), own)
		prev = append(prev[:0], h.Counts...)
		schedLag.Store(int64(lag))
	}
}

// quantileSince is q's quantile of what h counted since prev (nil: the
// first sample, nothing to compare), at its bucket's lower bound.
func quantileSince(h *metrics.Float64Histogram, prev []uint64, q float64) time.Duration {
	if len(prev) != len(h.Counts) {
		return 0
	}
	var total uint64
	for i, c := range h.Counts {
		total += c - prev[i]
	}
	if total == 0 {
		return 0
	}
	want := uint64(math.Ceil(q * float64(total)))
	var seen uint64
	for i, c := range h.Counts {
		if seen += c - prev[i]; seen >= want {
			lo := h.Buckets[i]
			if math.IsInf(lo, 0) || lo < 0 {
				return 0
			}
			return time.Duration(lo * float64(time.Second))
		}
	}
	return 0
}
