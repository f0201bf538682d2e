package electrum

import (
	"crypto/sha256"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// subBytes is what one subscription is counted as (SubscriptionBytes,
// docs/operations.md), what the subscription caps' defaults are sized
// from; the test fails when subscriptions grow past it.
const subBytes = SubscriptionBytes

// The heap one subscription takes, measured over 20,000 of them on one
// connection: unknown script hashes (the status a wallet's fresh
// addresses have) and unknown outpoints (a wallet's outputs to be).
func TestSubscriptionMemory(t *testing.T) {
	const n = 20_000
	for _, tc := range []struct {
		method string
		params func(i int) string
	}{
		{"blockchain.scripthash.subscribe", func(i int) string {
			return fmt.Sprintf(`["%s"]`, ScriptHash(fmt.Appendf(nil, "script %d", i)))
		}},
		{"blockchain.outpoint.subscribe", func(i int) string {
			return fmt.Sprintf(`["%x",%d]`, sha256.Sum256(fmt.Appendf(nil, "tx %d", i/2)), i%2)
		}},
	} {
		t.Run(tc.method, func(t *testing.T) {
			s := newServedOwn(t, Config{MaxSubs: n})
			c := s.negotiated(t, "1.6")
			heap := func() uint64 {
				runtime.GC()
				runtime.GC()
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				return m.HeapAlloc
			}
			before := heap()
			for b := 0; b < n/1000; b++ {
				calls := make([]string, 1000)
				for i := range calls {
					calls[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"%s","params":%s}`, i, tc.method, tc.params(b*1000+i))
				}
				c.sendLine("[" + strings.Join(calls, ",") + "]")
				if line := c.readLine(); strings.Contains(line, `"error"`) {
					t.Fatalf("subscribe: %.300s", line)
				}
			}
			if got := s.srv.Subscriptions(); got != n {
				t.Fatalf("%d subscriptions, want %d", got, n)
			}
			per := int(heap()-before) / n
			t.Logf("%d subscriptions: %d bytes each", n, per)
			if per > subBytes {
				t.Errorf("a subscription takes %d bytes, more than the %d documented", per, subBytes)
			}
			fails(t, c, codeExcessive, "too many subscriptions", "blockchain.scripthash.subscribe", ScriptHash([]byte("one more")))
			fails(t, c, codeExcessive, "too many subscriptions", "blockchain.outpoint.subscribe", strings.Repeat("ab", 32), 0)
		})
	}
}

// The server-wide and per-address caps hold across connections. A local
// peer (a TLS terminator in front of many wallets) is exempt from the
// per-address caps, as on every listener, unless -listenlimitlocal.
func TestSubscriptionCaps(t *testing.T) {
	s := newServedOwn(t, Config{MaxSubsPerIP: 3, MaxSubsTotal: 100})
	local := s.negotiated(t, "1.4")
	for i := range 5 {
		ok[*string](t, local, "blockchain.scripthash.subscribe", ScriptHash([]byte{100, byte(i)}))
	}
	ok[bool](t, local, "blockchain.scripthash.unsubscribe", ScriptHash([]byte{100, 0}))
	_ = local.c.Close()
	deadline := time.Now().Add(ioGuard)
	for s.srv.Subscriptions() != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	s.srv.hooks.limitLocal.Store(true) // from here the test's loopback clients are counted
	a, b := s.negotiated(t, "1.4"), s.negotiated(t, "1.4")
	for i := range 2 {
		ok[*string](t, a, "blockchain.scripthash.subscribe", ScriptHash([]byte{byte(i)}))
	}
	ok[*string](t, b, "blockchain.scripthash.subscribe", ScriptHash([]byte{2}))
	fails(t, b, codeExcessive, "from your address", "blockchain.scripthash.subscribe", ScriptHash([]byte{3}))
	ok[bool](t, a, "blockchain.scripthash.unsubscribe", ScriptHash([]byte{0}))
	ok[*string](t, b, "blockchain.scripthash.subscribe", ScriptHash([]byte{3}))
	if got := s.srv.Subscriptions(); got != 3 {
		t.Fatalf("%d subscriptions, want 3", got)
	}
}

// The byte caps count SubscriptionBytes a subscription plus a known
// script: past them a subscription is refused, and every byte is given
// back by unsubscribing or leaving.
func TestSubscriptionBytesCap(t *testing.T) {
	s := newServed(t, Config{MaxSubsBytes: 4*SubscriptionBytes + 40})
	c := s.negotiated(t, "1.6")
	known := scripthashOf(t, s.f, s.f.DemoAddress)
	ok[*string](t, c, "blockchain.scripthash.subscribe", known)
	withScript := s.srv.SubscriptionBytes()
	if script := withScript - SubscriptionBytes; script < 20 || script > 40 {
		t.Fatalf("a subscription to a known address counts %d bytes", withScript)
	}
	for i := range 3 {
		ok[*string](t, c, "blockchain.scripthash.subscribe", ScriptHash([]byte{byte(i)}))
	}
	fails(t, c, codeExcessive, "subscriptions on this server are at their memory limit", "blockchain.scripthash.subscribe", ScriptHash([]byte("one more")))
	fails(t, c, codeExcessive, "at their memory limit", "blockchain.outpoint.subscribe", strings.Repeat("ab", 32), 0)
	ok[bool](t, c, "blockchain.scripthash.unsubscribe", known)
	if got := s.srv.SubscriptionBytes(); got != 3*SubscriptionBytes {
		t.Fatalf("%d bytes counted after unsubscribing, want %d", got, 3*SubscriptionBytes)
	}
	ok[map[string]any](t, c, "blockchain.outpoint.subscribe", strings.Repeat("ab", 32), 0)

	p := newServed(t, Config{MaxSubsBytesPerIP: 2 * SubscriptionBytes})
	p.srv.hooks.limitLocal.Store(true) // the test's clients are loopback peers
	a, b := p.negotiated(t, "1.4"), p.negotiated(t, "1.4")
	ok[*string](t, a, "blockchain.scripthash.subscribe", ScriptHash([]byte{1}))
	ok[*string](t, b, "blockchain.scripthash.subscribe", ScriptHash([]byte{2}))
	fails(t, b, codeExcessive, "from your address are at their memory limit", "blockchain.scripthash.subscribe", ScriptHash([]byte{3}))
	_ = a.c.Close()
	_ = b.c.Close()
	deadline := time.Now().Add(ioGuard)
	for p.srv.SubscriptionBytes() != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := p.srv.SubscriptionBytes(); got != 0 {
		t.Fatalf("%d bytes counted after the connections closed", got)
	}
}
