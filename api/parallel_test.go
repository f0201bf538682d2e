package api

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
)

func TestEachInParallelCallsEachOnce(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 1000} {
		for _, workers := range []int{1, 2, 7} {
			calls := make([]atomic.Int32, n)
			if err := eachInParallel(context.Background(), n, workers, func(i int) error { calls[i].Add(1); return nil }); err != nil {
				t.Fatal(err)
			}
			for i := range calls {
				if c := calls[i].Load(); c != 1 {
					t.Fatalf("n %d workers %d: fn(%d) called %d times", n, workers, i, c)
				}
			}
		}
	}
}

func TestEachInParallelStopsAtFirstError(t *testing.T) {
	boom := errors.New("boom")
	var calls atomic.Int32
	err := eachInParallel(context.Background(), 10000, 2, func(i int) error {
		calls.Add(1)
		if i == 10 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || calls.Load() > 1000 {
		t.Fatalf("err %v after %d calls", err, calls.Load())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls.Store(0)
	if err := eachInParallel(ctx, 100, 2, func(int) error { calls.Add(1); return nil }); !errors.Is(err, context.Canceled) || calls.Load() != 0 {
		t.Fatalf("cancelled: err %v after %d calls", err, calls.Load())
	}
}
