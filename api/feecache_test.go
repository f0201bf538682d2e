package api

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingEstimator answers rate+calls so far, after release is closed.
type countingEstimator struct {
	calls   atomic.Int64
	release chan struct{}
	fail    atomic.Bool
}

func (e *countingEstimator) EstimateFee(_ context.Context, blocks int, _ bool) (int64, error) {
	n := e.calls.Add(1)
	if e.release != nil {
		<-e.release
	}
	if e.fail.Load() {
		return 0, errors.New("node says no")
	}
	return int64(1000*blocks) + n, nil
}

func TestFeeCacheReusesUntilTipMoves(t *testing.T) {
	est := &countingEstimator{}
	var height atomic.Uint32
	height.Store(100)
	now := time.Unix(1_700_000_000, 0)
	c := newFeeCache(est, height.Load)
	c.now = func() time.Time { return now }
	ctx := context.Background()

	first, _ := c.EstimateFee(ctx, 2, true)
	if again, _ := c.EstimateFee(ctx, 2, true); again != first || est.calls.Load() != 1 {
		t.Fatalf("same height: %d then %d after %d node calls", first, again, est.calls.Load())
	}
	// Another target or mode is another question.
	if _, err := c.EstimateFee(ctx, 2, false); err != nil || est.calls.Load() != 2 {
		t.Fatalf("economical mode shared the conservative answer: %d calls", est.calls.Load())
	}
	height.Store(101)
	if next, _ := c.EstimateFee(ctx, 2, true); next == first || est.calls.Load() != 3 {
		t.Fatalf("a new block did not ask the node again: %d, %d calls", next, est.calls.Load())
	}
	now = now.Add(feeCacheMaxAge + time.Second)
	if _, err := c.EstimateFee(ctx, 2, true); err != nil || est.calls.Load() != 4 {
		t.Fatalf("an estimate older than %v was reused: %d calls", feeCacheMaxAge, est.calls.Load())
	}
	est.fail.Store(true)
	now = now.Add(feeCacheMaxAge + time.Second)
	if _, err := c.EstimateFee(ctx, 2, true); err == nil {
		t.Fatal("the node's error was not passed on")
	}
	est.fail.Store(false)
	if _, err := c.EstimateFee(ctx, 2, true); err != nil || est.calls.Load() != 6 {
		t.Fatalf("an error was kept: %v, %d calls", err, est.calls.Load())
	}
}

// A burst of concurrent requests makes one node call, and a waiter whose
// request ends does not end the call for the others.
func TestFeeCacheJoinsConcurrentCalls(t *testing.T) {
	est := &countingEstimator{release: make(chan struct{})}
	c := newFeeCache(est, func() uint32 { return 7 })
	cancelled, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	results := make([]int64, 50)
	errs := make([]error, 50)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			if i == 0 {
				ctx = cancelled
			}
			results[i], errs[i] = c.EstimateFee(ctx, 6, true)
		}()
	}
	for est.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	time.Sleep(20 * time.Millisecond) // let the cancelled waiter leave, if it waits
	close(est.release)
	wg.Wait()
	if est.calls.Load() != 1 {
		t.Fatalf("%d node calls for one burst", est.calls.Load())
	}
	for i, r := range results {
		if i == 0 && errors.Is(errs[i], context.Canceled) {
			continue // a waiter whose request ended
		}
		if errs[i] != nil || r != 6001 {
			t.Fatalf("caller %d: %d %v", i, r, errs[i])
		}
	}
}
