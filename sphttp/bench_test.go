package sphttp_test

import (
	"fmt"
	"io"
	"net/http"
	"syscall"
	"testing"
)

// cpuTime is the process's user and system CPU time in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkTweaks is one /tweaks/:height request end to end (HTTP, the
// block's tweak rows and the spends rows of its outputs from the index)
// on the payment block of the Silent Payments test chain; with
// ?dustLimit the same read with the filter.
func BenchmarkTweaks(b *testing.B) {
	c := testChain(b)
	base := serve(b, c.Main[:c.SP.SpendHeight+1], true)
	for _, route := range []string{"/tweaks/%d", "/tweaks/%d?dustLimit=1000", "/tweak-index/%d", "/bip352/tweaks/%d?filterSpent=1"} {
		path := fmt.Sprintf(route, c.SP.PayHeight)
		b.Run(path, func(b *testing.B) {
			cpu0, n := cpuTime(), 0
			for b.Loop() {
				n++
				resp, err := http.Get(base + path)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("%s: %d", path, resp.StatusCode)
				}
			}
			// CPU of client and server together: the machine is shared.
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(n), "cpu-ns/op")
		})
	}
}
