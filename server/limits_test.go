package server

import (
	"net/http/httptest"
	"testing"
	"time"
)

func TestRequestCost(t *testing.T) {
	for target, want := range map[string]int{
		"/api/v2/": 1,
		"/api/v2/address/a?details=txs&pageSize=1000": 11,
		"/api/v2/xpub/x":           2,
		"/api/v2/xpub/x?gap=10000": 22,
		"/api/v2/utxo/a":           2,
		"/api/v2/sp-tweaks/840000": 3,
		"/address/a":               2,
	} {
		if got := requestCost(httptest.NewRequest("GET", target, nil)); got != want {
			t.Errorf("%s: cost %d, want %d", target, got, want)
		}
	}
}

func TestMsgRate(t *testing.T) {
	var m msgRate
	now := time.Unix(0, 0)
	for i := 0; i < 10; i++ {
		if !m.allow(now, 10, time.Minute) {
			t.Fatalf("message %d refused", i)
		}
	}
	if m.allow(now, 10, time.Minute) {
		t.Fatal("11th message in the window allowed")
	}
	// Half into the next window half the old count still weighs.
	now = now.Add(90 * time.Second)
	n := 0
	for m.allow(now, 10, time.Minute) {
		n++
	}
	if n != 5 {
		t.Fatalf("allowed %d, want 5", n)
	}
	if !m.allow(now.Add(10*time.Minute), 10, time.Minute) {
		t.Fatal("not allowed after a long pause")
	}
}
