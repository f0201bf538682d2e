package soak

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/openexplorer/blockbook/tools/benchproc"
)

// RSS samples a process's resident memory at a fixed interval.
type RSS struct {
	mu      sync.Mutex
	samples []int64 // bytes, in time order
	peak    int64   // VmHWM at the last sample
}

// SampleRSS samples pid every interval until ctx ends.
func SampleRSS(ctx context.Context, pid int, every time.Duration) *RSS {
	r := &RSS{}
	go func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			if rss, hwm := benchproc.Mem(pid); rss > 0 {
				r.mu.Lock()
				r.samples = append(r.samples, rss)
				r.peak = hwm
				r.mu.Unlock()
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return r
}

// Flatness is the memory verdict of a run: the samples after the warm-up
// are cut in thirds and the last third's maximum is compared with the
// first third's.
type Flatness struct {
	Samples                int
	Start, Peak, End       int64 // first sample, the peak (VmHWM or a larger sample), last sample
	FirstThirdMax, LastMax int64
	Bound                  int64 // the last third's max may not exceed it
	WarmupSamples          int
}

// Flat is the verdict: the samples after warm-up fraction (0..1) of the
// run, cut in thirds; the last third's max may exceed the first third's
// by at most ratio (e.g. 0.25) plus slack bytes (noise of the runtime's
// heap growth on short runs).
func (r *RSS) Flat(warmup, ratio float64, slack int64) (Flatness, error) {
	r.mu.Lock()
	s := slices.Clone(r.samples)
	peak := r.peak
	r.mu.Unlock()
	f := Flatness{Samples: len(s), Peak: peak}
	if len(s) < 6 {
		return f, fmt.Errorf("only %d memory samples", len(s))
	}
	f.Peak = max(f.Peak, slices.Max(s)) // VmHWM is updated lazily and may trail a sample
	f.Start, f.End = s[0], s[len(s)-1]
	f.WarmupSamples = int(float64(len(s)) * warmup)
	rest := s[f.WarmupSamples:]
	third := len(rest) / 3
	if third == 0 {
		return f, fmt.Errorf("too few samples after warm-up (%d)", len(rest))
	}
	f.FirstThirdMax = slices.Max(rest[:third])
	f.LastMax = slices.Max(rest[len(rest)-third:])
	f.Bound = f.FirstThirdMax + int64(float64(f.FirstThirdMax)*ratio) + slack
	if f.LastMax > f.Bound {
		return f, fmt.Errorf("memory grew: last third's max %d MiB > bound %d MiB (first third's max %d MiB)",
			f.LastMax>>20, f.Bound>>20, f.FirstThirdMax>>20)
	}
	return f, nil
}
