package electrum

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/internal/listen"
)

// Loopback and private peers are exempt from MaxCallsPerIP (by the key
// the server counts them under: an address, or an IPv6 /64).
func TestLocalKey(t *testing.T) {
	for ip, local := range map[string]bool{
		"127.0.0.1": true, "10.1.2.3": true, "192.168.0.9": true, "::1": true, "fd00::1": true,
		"203.0.113.5": false, "2001:db8::1": false, "": false,
	} {
		if got := localKey(listen.IPKey(ip)); got != local {
			t.Errorf("%q (key %q): local %v", ip, listen.IPKey(ip), got)
		}
	}
}

// 50 calls of one address waiting behind a limit of 1 all get their
// place in turn, and the address leaves no trace once they end. (That a
// place given back wakes one waiter, not all, is the channel's own
// behaviour: no counter here could tell more than the code's structure.)
func TestSlotsWaitersServedInTurn(t *testing.T) {
	const waiters = 50
	s := newClientSlots(1)
	ip := "203.0.113.7"
	first, ok := s.acquire(context.Background(), ip, 1)
	if !ok {
		t.Fatal("the first call found no place")
	}
	var wg sync.WaitGroup
	for range waiters {
		wg.Go(func() {
			release, ok := s.acquire(context.Background(), ip, 1)
			if !ok {
				t.Error("a waiting call was refused")
				return
			}
			time.Sleep(2 * time.Millisecond) // the others go back to waiting
			release()
		})
	}
	for deadline := time.Now().Add(10 * time.Second); s.waiting(ip) < waiters+1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d calls waiting", s.waiting(ip)-1, waiters)
		}
	}
	first()
	wg.Wait()
	if n := s.waiting(ip); n != 0 {
		t.Errorf("%d users left after every call ended", n)
	}
}

// A call that finds no place before its deadline is refused, and leaves
// no trace: the address's count goes back to the calls holding places.
func TestSlotsDeadline(t *testing.T) {
	s := newClientSlots(2)
	ip := "203.0.113.8"
	var held []func()
	for range 2 {
		r, ok := s.acquire(context.Background(), ip, 1)
		if !ok {
			t.Fatal("no place under the limit")
		}
		held = append(held, r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, ok := s.acquire(ctx, ip, 1); ok {
		t.Fatal("a third call got a place past a limit of 2")
	}
	if n := s.waiting(ip); n != 2 {
		t.Errorf("%d users after a refused call, want 2", n)
	}
	for _, r := range held {
		r()
	}
	if r, ok := s.acquire(context.Background(), "203.0.113.8", 1); !ok {
		t.Error("no place after the others left")
	} else {
		r()
	}
}

// A client past -electrumcallsperminute gets -101 with the seconds to
// wait, each call of a batch counting, and a loopback peer is exempt
// (there was no rate limit at all).
func TestCallRateLimit(t *testing.T) {
	s := newServed(t, Config{CallsPerMinute: 60, CallBurst: 5})
	c := s.negotiated(t, "1.4")        // server.version: exempt, a loopback peer
	s.srv.hooks.limitLocal.Store(true) // from here this client is limited
	batch := make([]string, 8)
	for i := range batch {
		batch[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"server.ping","params":[]}`, 10+i)
	}
	c.sendLine("[" + strings.Join(batch, ",") + "]")
	var answers []answer
	if err := json.Unmarshal([]byte(c.readLine()), &answers); err != nil {
		t.Fatal(err)
	}
	served, limited := 0, 0
	for _, a := range answers {
		switch {
		case a.Error == nil:
			served++
		case a.Error.Code == codeExcessive && strings.Contains(a.Error.Message, "rate limit") && strings.Contains(a.Error.Message, "retry in"):
			limited++
		default:
			t.Errorf("unexpected answer %+v", a.Error)
		}
	}
	if served != 5 || limited != 3 {
		t.Errorf("a batch of 8 past a burst of 5: %d served, %d limited", served, limited)
	}
	s.srv.hooks.limitLocal.Store(false)
	if a := c.call("server.ping"); a.Error != nil {
		t.Errorf("a loopback peer, exempt: %+v", a.Error)
	}
}

// With the process-wide gate full (other fronts' expensive work), a call
// that reads the index answers -102 "server busy" after the gate's short
// wait, while the cheap calls (ping, fee estimate, the tip) answer at
// once; a place given back admits the next expensive call.
func TestGateShedsHeavyCalls(t *testing.T) {
	gate := listen.NewGate(1, 30*time.Millisecond, nil)
	s := newServed(t, Config{Gate: gate})
	c := s.negotiated(t, "1.4")
	leave, ok := gate.Enter(context.Background(), "other")
	if !ok {
		t.Fatal("the gate refused its first place")
	}
	sh := strings.Repeat("00", 32)
	a := c.call("blockchain.scripthash.get_balance", sh)
	if a.Error == nil || a.Error.Code != codeBusy || !strings.Contains(a.Error.Message, "server busy") {
		t.Fatalf("an expensive call with the gate full: %+v", a)
	}
	for _, m := range []string{"server.ping", "blockchain.headers.subscribe"} {
		if a := c.call(m); a.Error != nil {
			t.Errorf("%s with the gate full: %+v", m, a.Error)
		}
	}
	leave()
	if a := c.call("blockchain.scripthash.get_balance", sh); a.Error != nil {
		t.Errorf("an expensive call once the place is free: %+v", a.Error)
	}
}
