package electrum

import (
	"crypto/sha256"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// subBytes is what one script hash subscription is documented to cost
// (docs/operations.md), what the subscription caps' defaults are sized
// from; the test fails when subscriptions grow past it.
const subBytes = 600

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

// The server-wide and per-address caps hold across connections.
func TestSubscriptionCaps(t *testing.T) {
	s := newServedOwn(t, Config{MaxSubsPerIP: 3, MaxSubsTotal: 100})
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
