package db

import (
	"fmt"
	"testing"
)

// The filter never forgets a key, lets few absent keys through at its
// capacity, still rules out most of them at 2.5 times its capacity, and
// retires (passing everything) past three times its capacity.
func TestWrittenFilter(t *testing.T) {
	f := newWrittenFilter(64 << 10)
	capacity := f.limit / filterRetireAt
	for i := range capacity {
		f.add(fmt.Sprintf("in-%d", i))
	}
	for i := range capacity {
		if !f.mayHave(fmt.Sprintf("in-%d", i)) {
			t.Fatalf("key %d added and not found", i)
		}
	}
	const probes = 100000
	fp := 0
	for i := range probes {
		if f.mayHave(fmt.Sprintf("out-%d", i)) {
			fp++
		}
	}
	if rate := float64(fp) / probes; rate > 0.03 {
		t.Errorf("false positive rate %.4f at capacity (%d keys in %d bytes)", rate, capacity, f.bytes())
	} else {
		t.Logf("false positive rate %.4f at capacity", rate)
	}
	// Adding the same keys again, as every flush does for the addresses
	// its round touched, does not fill the filter.
	for range 3 {
		for i := range capacity {
			f.add(fmt.Sprintf("in-%d", i))
		}
	}
	if f.bytes() == 0 || f.n > capacity {
		t.Fatalf("keys added again counted: %d counted for %d keys (retired: %v)", f.n, capacity, f.retired())
	}
	for i := capacity; i < capacity*5/2; i++ {
		f.add(fmt.Sprintf("in-%d", i))
	}
	fp = 0
	for i := range probes {
		if f.mayHave(fmt.Sprintf("out-%d", i)) {
			fp++
		}
	}
	if rate := float64(fp) / probes; f.retired() || rate > 0.35 {
		t.Errorf("at 2.5 times its capacity: retired %v, false positive rate %.4f", f.retired(), rate)
	}
	// New keys fill it; those that set no new bit (false positives) do not
	// count, so it takes more than the limit.
	for i := capacity; f.bytes() > 0 && i < 2*f.limit; i++ {
		f.add(fmt.Sprintf("in-%d", i))
	}
	if f.bytes() != 0 || !f.mayHave("never added") {
		t.Errorf("past its limit the filter keeps %d bytes and mayHave(absent) is %v", f.bytes(), f.mayHave("never added"))
	}
}
