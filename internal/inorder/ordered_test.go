package inorder

import (
	"bytes"
	"context"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// Jobs rendered in any order (random delays on four workers) are
// delivered in the order queued; a full queue drops and counts.
func TestOrderKept(t *testing.T) {
	const n = 200
	q := New[int, int](n)
	for i := range n {
		if !q.Add(i) {
			t.Fatalf("job %d dropped", i)
		}
	}
	if q.Add(n) || q.Dropped() != 1 {
		t.Fatalf("a full queue took a job (dropped %d)", q.Dropped())
	}
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan int, n)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		q.Run(ctx, 4, func(_ context.Context, j int) int {
			time.Sleep(time.Duration(rand.IntN(300)) * time.Microsecond)
			return j * 10
		}, func(r int) { got <- r })
	}()
	for i := range n {
		select {
		case r := <-got:
			if r != i*10 {
				t.Fatalf("result %d delivered at place %d", r, i)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d results", i)
		}
	}
	if !q.Add(7) {
		t.Fatal("the drained queue refused a job")
	}
	if r := <-got; r != 70 {
		t.Fatalf("then %d", r)
	}
	cancel()
	<-finished
}

// A burst of drops writes one line.
func TestDropLogRateLimited(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	d := &DropLog{Every: time.Hour}
	for range 1000 {
		d.Note(log, "queue full")
	}
	if n := strings.Count(buf.String(), "queue full"); n != 1 {
		t.Fatalf("%d lines for 1000 drops:\n%s", n, buf.String())
	}
}
