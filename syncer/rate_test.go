package syncer

import (
	"math"
	"testing"
	"time"
)

// The rate is blocks per second over the last minute, from samples kept
// about a second apart; it falls to 0 when blocks stop coming and starts
// again after a reorg lowers the tip.
func TestSyncRate(t *testing.T) {
	var r syncRate
	t0 := time.Unix(1_700_000_000, 0)
	for i := range 600 { // 10 blocks a second for a minute, 100 ms apart
		r.add(t0.Add(time.Duration(i)*100*time.Millisecond), uint32(1000+i))
	}
	now := t0.Add(60 * time.Second)
	if got := r.perSecond(now); math.Abs(got-10) > 0.3 {
		t.Errorf("rate %.2f, want about 10", got)
	}
	if len(r.samples) > 62 {
		t.Errorf("%d samples kept for a minute", len(r.samples))
	}
	if got := r.perSecond(now.Add(2 * rateWindow)); got != 0 {
		t.Errorf("rate two minutes after the last block: %.2f, want 0", got)
	}
	r.add(now, 900) // a rollback
	r.add(now.Add(5*time.Second), 950)
	if got := r.perSecond(now.Add(5 * time.Second)); math.Abs(got-10) > 0.01 {
		t.Errorf("rate after a rollback: %.2f, want 10", got)
	}
	var empty syncRate
	if got := empty.perSecond(now); got != 0 {
		t.Errorf("no samples: %.2f", got)
	}
}
