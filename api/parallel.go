package api

import (
	"context"
	"sync"
	"sync/atomic"
)

// accountReadWorkers is how many goroutines read one account's address
// histories: a cold account of tens of thousands of addresses is a seek
// each, and two keep one request from taking more than two cores.
const accountReadWorkers = 2

// eachInParallel calls fn(i) for every i in [0, n) on up to workers
// goroutines, each taking the next i. It returns the first error; after
// it, or once ctx is done, the remaining calls are skipped.
func eachInParallel(ctx context.Context, n, workers int, fn func(i int) error) error {
	var next atomic.Int64
	var failed atomic.Bool
	var once sync.Once
	var first error
	work := func() {
		for !failed.Load() {
			i := int(next.Add(1) - 1)
			if i >= n {
				return
			}
			err := ctx.Err()
			if err == nil {
				err = fn(i)
			}
			if err != nil {
				once.Do(func() { first = err })
				failed.Store(true)
				return
			}
		}
	}
	var wg sync.WaitGroup
	for range min(workers, n) - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
	return first
}
