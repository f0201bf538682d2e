package fiat

import (
	"slices"
	"testing"
	"time"
)

// A 429 on one request holds every request until its window passes: a
// request started inside another's window waits for the window's end
// before it is sent, instead of being refused on its own.
func TestThrottleWindowShared(t *testing.T) {
	s := provider(t)
	d := openDB(t, t.TempDir())
	defer d.Close()
	td := newTestDownloader(t, d, s, nil)
	td.cg.gate.extend(td.now().Add(40 * time.Second)) // another request's 429
	if _, err := td.updateCurrent(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(td.sleeps, []time.Duration{40 * time.Second}) {
		t.Errorf("waits %v, want the open window's 40 s once before the first request", td.sleeps)
	}
	if n := td.requests("supported_vs_currencies", "throttled") + td.requests("simple/price", "throttled"); n != 0 {
		t.Errorf("%v requests were sent into the window", n)
	}

	// A window passed is not waited again, a longer one is waited whole.
	td.sleeps = nil
	s.Throttle(1, "5")
	td.cg.gate.extend(td.now().Add(20 * time.Second))
	if _, err := td.updateCurrent(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(td.sleeps, []time.Duration{20 * time.Second, 5 * time.Second}) {
		t.Errorf("waits %v, want the window's 20 s, then the 429's own 5 s", td.sleeps)
	}
}

// While the window is open and a current-rates request waits for it, the
// history's requests step aside (they poll), so the current rates go
// first when it ends.
func TestThrottleWindowCurrentFirst(t *testing.T) {
	s := provider(t)
	d := openDB(t, t.TempDir())
	defer d.Close()
	td := newTestDownloader(t, d, s, nil)
	td.cg.gate.extend(td.now().Add(3 * time.Second))
	done := td.cg.gate.enter() // a current-rates request in flight
	if _, err := td.cg.wait(lowPriority(t.Context()), time.Time{}); err != nil {
		t.Fatal(err)
	}
	done()
	if !slices.Equal(td.sleeps, []time.Duration{time.Second, time.Second, time.Second}) {
		t.Errorf("a history request waited %v, want 1 s polls until the window ends", td.sleeps)
	}
	// With no current-rates request waiting, it waits the window at once.
	td.sleeps = nil
	td.cg.gate.extend(td.now().Add(3 * time.Second))
	if _, err := td.cg.wait(lowPriority(t.Context()), time.Time{}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(td.sleeps, []time.Duration{3 * time.Second}) {
		t.Errorf("waits %v, want 3 s", td.sleeps)
	}
}

// Another request's 429 that extends the window just after this request
// saw it pass must still hold this request's retry: the retry waits for
// the window it did not wait for, instead of going out back to back.
func TestThrottleWindowExtendedAfterCheck(t *testing.T) {
	s := provider(t)
	d := openDB(t, t.TempDir())
	defer d.Close()
	td := newTestDownloader(t, d, s, nil)
	start := td.now()
	first := start.Add(10 * time.Second)
	td.cg.gate.extend(first)
	clock := td.cg.now
	extended := false
	td.cg.now = func() time.Time {
		now := clock()
		if !extended && !now.Before(first) {
			// Between the check that the window passed and the request.
			extended = true
			td.cg.gate.extend(now.Add(60 * time.Second))
		}
		return now
	}
	s.Throttle(1, "5")
	if _, err := td.cg.supportedVsCurrencies(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(td.sleeps, []time.Duration{10 * time.Second, 60 * time.Second}) {
		t.Errorf("waits %v, want the first window's 10 s, then the other 429's 60 s before the retry", td.sleeps)
	}
}
