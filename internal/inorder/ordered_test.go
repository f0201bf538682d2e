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

// After Run has ended with the deliverer holding an item that no worker
// took, a full queue still drops instead of blocking Add.
func TestAddNeverBlocksAfterRun(t *testing.T) {
	const size = 4
	q := New[int, int](size)
	q.Add(0)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() {
		// No workers: the deliverer takes item 0 from order and waits.
		q.Run(ctx, 0, func(context.Context, int) int { return 0 }, func(int) {})
		close(ran)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for len(q.order) != 0 { // the deliverer took item 0; it is still in work
		if time.Now().After(deadline) {
			t.Fatal("the deliverer never took the first item")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-ran
	added := make(chan int)
	go func() {
		n := 0
		for i := 1; i <= 2*size; i++ {
			if q.Add(i) {
				n++
			}
		}
		added <- n
	}()
	select {
	case n := <-added:
		if n != size {
			t.Fatalf("%d added into a queue of %d, want %d", n, size, size)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Add blocked on a full queue after Run ended")
	}
}
