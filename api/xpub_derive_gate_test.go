package api

import (
	"context"
	"testing"
	"time"
)

// With the slot taken, a waiter whose account has fewer addresses gets it
// before those that came earlier with more; equal ones go in arrival order;
// a waiter that gives up leaves the queue.
func TestDeriveGateLeastServedFirst(t *testing.T) {
	g := newDeriveGate(1)
	ctx := context.Background()
	if err := g.acquire(ctx, 0); err != nil {
		t.Fatal(err)
	}
	order := make(chan int, 4)
	wait := func(n int) {
		for g.waiters() != n {
			time.Sleep(time.Millisecond) // until the goroutine queued (a failure guard bounds the test)
		}
	}
	for i, done := range []int{5000, 2500, 5000} {
		go func() {
			if err := g.acquire(ctx, done); err == nil {
				order <- done*10 + i
				g.release()
			}
		}()
		wait(i + 1)
	}
	gone, cancel := context.WithCancel(ctx)
	go func() { _ = g.acquire(gone, 1) }()
	wait(4)
	cancel()
	wait(3)
	go func() {
		if err := g.acquire(ctx, 0); err == nil {
			order <- 0
			g.release()
		}
	}()
	wait(4)
	g.release()
	var got []int
	for range 4 {
		select {
		case v := <-order:
			got = append(got, v)
		case <-time.After(20 * time.Second):
			t.Fatalf("waiters stuck after %v", got)
		}
	}
	if want := []int{0, 25001, 50000, 50002}; got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Fatalf("grant order %v, want %v", got, want)
	}
}
