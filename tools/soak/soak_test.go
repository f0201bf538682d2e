package soak

import (
	"errors"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i))
	}
	for _, c := range []struct{ p, want int }{{50, 50}, {99, 99}, {100, 100}, {1, 1}, {0, 1}} {
		if got := Percentile(d, c.p); got != time.Duration(c.want) {
			t.Errorf("p%d = %d, want %d", c.p, got, c.want)
		}
	}
	if Percentile(nil, 50) != 0 || Percentile(d[:1], 99) != 1 {
		t.Error("percentile of none or one sample")
	}
}

func TestStats(t *testing.T) {
	var s Stats
	s.Done("a", 2*time.Millisecond, false, nil)
	s.Done("a", time.Millisecond, true, errors.New("status 429"))
	s.Done("b", 3*time.Millisecond, false, errors.New("EOF"))
	s.Wrong("balance %d", 5)
	sum := s.Summary()
	if sum.Requests != 3 || sum.TooMany != 1 || sum.Errors != 1 || sum.Wrong != 1 || len(sum.Examples) != 3 ||
		sum.FailuresByOp["a"] != 1 || sum.FailuresByOp["b"] != 1 || sum.P50 != 2*time.Millisecond || sum.Max != 3*time.Millisecond {
		t.Fatalf("%+v", sum)
	}
}

func TestFlat(t *testing.T) {
	rss := func(mb ...int64) *RSS {
		r := &RSS{}
		for _, m := range mb {
			r.samples = append(r.samples, m<<20)
		}
		return r
	}
	// Warm-up growth is ignored; a plateau is flat.
	f, err := rss(10, 50, 100, 101, 100, 102, 101, 100, 101, 102, 100).Flat(0.2, 0.25, 0)
	if err != nil || f.FirstThirdMax != 101<<20 || f.LastMax != 102<<20 || f.Peak != 102<<20 || f.Start != 10<<20 || f.End != 100<<20 {
		t.Fatalf("plateau: %+v %v", f, err)
	}
	// Steady growth is a leak.
	if _, err := rss(100, 110, 120, 130, 140, 150, 160, 170, 180, 190, 200, 210).Flat(0.2, 0.25, 0); err == nil {
		t.Fatal("steady growth passed as flat")
	}
	if _, err := rss(1, 2).Flat(0.2, 0.25, 0); err == nil {
		t.Fatal("two samples gave a verdict")
	}
}
