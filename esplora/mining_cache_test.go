package esplora

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestHashrateCacheOncePerTipAndMinute(t *testing.T) {
	var c hashrateCache
	var calls atomic.Int32
	compute := func() (*reply, error) {
		calls.Add(1)
		time.Sleep(20 * time.Millisecond) // long enough for the callers to overlap
		return &reply{body: []byte("x")}, nil
	}
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if _, err := c.get("all", "tipA", 1, compute); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Fatalf("10 concurrent callers computed %d times, want 1", n)
	}
	steps := []struct {
		interval, tip string
		minute        int64
		want          int32
	}{
		{"all", "tipA", 1, 1}, // cached
		{"1m", "tipA", 1, 2},  // another interval
		{"all", "tipB", 1, 3}, // a new block
		{"all", "tipB", 2, 4}, // a new minute
		{"1m", "tipB", 2, 5},  // the old tip's 1m answer was dropped
		{"1m", "tipB", 2, 5},
	}
	for _, s := range steps {
		if _, err := c.get(s.interval, s.tip, s.minute, compute); err != nil {
			t.Fatal(err)
		}
		if n := calls.Load(); n != s.want {
			t.Fatalf("%s at %s minute %d: %d computations, want %d", s.interval, s.tip, s.minute, n, s.want)
		}
	}
	// Errors are not kept.
	fail := errors.New("node down")
	if _, err := c.get("3m", "tipB", 2, func() (*reply, error) { return nil, fail }); !errors.Is(err, fail) {
		t.Fatalf("error %v, want %v", err, fail)
	}
	if _, err := c.get("3m", "tipB", 2, compute); err != nil || calls.Load() != 6 {
		t.Fatalf("after an error: %v, %d computations, want 6", err, calls.Load())
	}
}
