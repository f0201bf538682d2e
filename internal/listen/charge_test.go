package listen

import (
	"testing"
	"time"
)

// A post-charge takes the bucket below zero, at most one burst deep: the
// client's next call is refused with the seconds until it has refilled
// to one call's cost; SpendCost takes a known cost before the call.
func TestLimiterCharge(t *testing.T) {
	now := time.Unix(1000, 0)
	l := NewLimiter(LimitConfig{Rate: 60, Window: time.Minute, Burst: 10}, nil)
	l.now = func() time.Time { return now }
	const ip = "203.0.113.7"
	if ref := l.SpendCost(ip, 4); ref.Msg != "" {
		t.Fatalf("a call of 4 within a burst of 10: %+v", ref)
	}
	l.Charge(ip, 16)
	if tok := l.Tokens(ip); tok != -10 {
		t.Fatalf("10 - 4 - 16, floored at one burst below zero: %v tokens", tok)
	}
	ref := l.Spend(ip)
	if ref.Msg == "" || ref.Retry != 12 {
		t.Fatalf("a call in debt: %+v (want a refusal, retry in 12 s)", ref)
	}
	now = now.Add(11 * time.Second)
	if ref := l.Spend(ip); ref.Msg != "" {
		t.Fatalf("after refilling 11 tokens: %+v", ref)
	}
	if ref := l.SpendCost(ip, 5); ref.Msg == "" {
		t.Fatal("a call of 5 with 0 tokens was admitted")
	}
	l.Charge("203.0.113.8", 3) // a client never seen starts from its burst
	if tok := l.Tokens("203.0.113.8"); tok != 7 {
		t.Fatalf("a new client charged 3: %v tokens", tok)
	}
}
