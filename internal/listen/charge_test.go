package listen

import (
	"testing"
	"time"
)

// A post-charge takes the bucket below zero, at most one burst deep: the
// client's next call is refused with the seconds until it has refilled
// to one call's cost; Spend takes a known cost before the call.
func TestLimiterCharge(t *testing.T) {
	now := time.Unix(1000, 0)
	l := NewLimiter(LimitConfig{Rate: 60, Window: time.Minute, Burst: 10}, nil)
	l.now = func() time.Time { return now }
	const ip = "203.0.113.7"
	if ref := l.Spend(ip, 4); ref.Msg != "" {
		t.Fatalf("a call of 4 within a burst of 10: %+v", ref)
	}
	l.Charge(ip, 30)
	// 10 - 4 - 30, floored at one burst below zero: -10 tokens, 11 s
	// (+1) from one call's cost (it would be 25 s unfloored).
	ref := l.Spend(ip, 1)
	if ref.Msg == "" || ref.Retry != 12 {
		t.Fatalf("a call in debt: %+v (want a refusal, retry in 12 s)", ref)
	}
	now = now.Add(11 * time.Second)
	if ref := l.Spend(ip, 1); ref.Msg != "" {
		t.Fatalf("after refilling 11 tokens: %+v", ref)
	}
	if ref := l.Spend(ip, 5); ref.Msg == "" {
		t.Fatal("a call of 5 with 0 tokens was admitted")
	}
	// A client never seen starts from its burst: charged 3, it has 7,
	// 1 s from a call of 8.
	l.Charge("203.0.113.8", 3)
	if ref := l.Spend("203.0.113.8", 8); ref.Msg == "" || ref.Retry != 2 {
		t.Fatalf("a new client charged 3, a call of 8: %+v (want a refusal, retry in 2 s)", ref)
	}
	if ref := l.Spend("203.0.113.8", 7); ref.Msg != "" {
		t.Fatalf("a new client charged 3, a call of 7: %+v", ref)
	}
}
