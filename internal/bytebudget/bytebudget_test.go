package bytebudget

import (
	"sync"
	"testing"
)

// Takes past the limit fail unless the taker holds nothing; gives wake
// waiters; concurrent takers never overshoot.
func TestBudget(t *testing.T) {
	b := New(100)
	if !b.TryTake(60, false) || b.TryTake(50, false) {
		t.Fatal("60 then 50 of 100")
	}
	if !b.TryTake(500, true) {
		t.Fatal("a lone taker is refused")
	}
	w := b.Wait()
	b.Give(560)
	select {
	case <-w:
	default:
		t.Fatal("Give woke no waiter")
	}
	if b.Used() != 0 {
		t.Fatalf("used %d after giving all back", b.Used())
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	taken := 0
	for range 50 {
		wg.Go(func() {
			if b.TryTake(7, false) {
				mu.Lock()
				taken++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if taken != 14 || b.Used() != 98 {
		t.Fatalf("%d takes of 7 from 100, used %d", taken, b.Used())
	}
	var none *Budget
	if !none.TryTake(1<<40, false) || none.Used() != 0 {
		t.Fatal("a nil budget must admit everything")
	}
	none.Give(5)
}
