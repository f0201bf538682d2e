package app

import (
	"context"
	"errors"
	"testing"
)

// A refetch request is pending until a retry that started after it ends;
// one made during a retry waits for the next.
func TestTraceRetrierPending(t *testing.T) {
	woken := 0
	tr := &traceRetrier{}
	tr.Request()
	if tr.Pending() {
		t.Fatal("pending without a sync worker to run it")
	}
	tr.setWake(func() { woken++ })
	tr.Request()
	if !tr.Pending() || woken != 1 {
		t.Fatalf("after a request: pending %v, woken %d", tr.Pending(), woken)
	}
	_ = tr.retry(context.Background(), func(context.Context) error {
		tr.Request() // during the retry
		return nil
	})
	if !tr.Pending() {
		t.Fatal("a request made during a retry was taken as done")
	}
	_ = tr.retry(context.Background(), func(context.Context) error { return errors.New("node down") })
	if !tr.Pending() {
		t.Fatal("a failed retry was taken as done")
	}
	_ = tr.retry(context.Background(), func(context.Context) error { return nil })
	if tr.Pending() {
		t.Fatal("still pending after a retry that covered it")
	}
}
