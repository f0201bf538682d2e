package main

import (
	"crypto/sha256"
	"runtime"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// cpuProbe times a fixed computation (SHA-256 over a buffer that stays in
// the core's cache) once a second, in CPU time of its own thread, so that
// waiting for a core does not count. On a machine whose speed drifts (a
// shared host), a slower probe in one million of the run than in another
// says the machine, not blockbook, changed between them.
type cpuProbe struct {
	mu    sync.Mutex
	at    []time.Duration // since start
	cost  []time.Duration // the computation's thread CPU time
	start time.Time
	stop  chan struct{}
}

func startCPUProbe(start time.Time) *cpuProbe {
	p := &cpuProbe{start: start, stop: make(chan struct{})}
	go p.loop()
	return p
}

func (p *cpuProbe) loop() {
	runtime.LockOSThread()
	buf := make([]byte, 32<<10)
	tickUntil(p.stop, time.Second, func() {
		before, ok := threadCPU()
		for range 32 {
			sum := sha256.Sum256(buf)
			buf[0] = sum[0]
		}
		after, ok2 := threadCPU()
		if !ok || !ok2 {
			return
		}
		p.mu.Lock()
		p.at = append(p.at, time.Since(p.start))
		p.cost = append(p.cost, after-before)
		p.mu.Unlock()
	})
}

// tickUntil calls fn every d until stop is closed.
func tickUntil(stop <-chan struct{}, d time.Duration, fn func()) {
	tick := time.NewTicker(d)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			fn()
		}
	}
}

func (p *cpuProbe) Stop() { close(p.stop) }

// median returns the median cost of the probes in (from, to], 0 if none.
func (p *cpuProbe) median(from, to time.Duration) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	var in []time.Duration
	for i, t := range p.at {
		if t > from && t <= to {
			in = append(in, p.cost[i])
		}
	}
	if len(in) == 0 {
		return 0
	}
	slices.Sort(in)
	return in[len(in)/2]
}

func threadCPU() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
