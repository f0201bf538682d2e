package electrum

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// pingBatchLine is a batch of n server.ping, ids from first.
func pingBatchLine(first, n int) string {
	calls := make([]string, n)
	for i := range calls {
		calls[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"server.ping","params":[]}`, first+i)
	}
	return "[" + strings.Join(calls, ",") + "]"
}

// While the process is late, a client past its share (the sustained
// -electrumcallsperminute) is refused with -102 even within its burst, a
// cheap ping included, and its session reads nothing for a second after;
// on time again, its burst serves it.
func TestCallShareWhileLate(t *testing.T) {
	var late atomic.Bool
	s := newServed(t, Config{CallsPerMinute: 60, CallBurst: 1000, Late: late.Load})
	c := s.negotiated(t, "1.4")        // server.version: exempt, a loopback peer
	s.srv.hooks.limitLocal.Store(true) // from here this client is counted
	batch := func(first, n int) (served, busy int) {
		c.sendLine(pingBatchLine(first, n))
		var answers []answer
		if err := json.Unmarshal([]byte(c.readLine()), &answers); err != nil {
			t.Fatal(err)
		}
		for _, a := range answers {
			switch {
			case a.Error == nil:
				served++
			case a.Error.Code == codeBusy && strings.Contains(a.Error.Message, "past its share") && strings.Contains(a.Error.Message, "retry in 1 s"):
				busy++
			default:
				t.Errorf("unexpected answer %+v", a.Error)
			}
		}
		return served, busy
	}
	if served, busy := batch(10, 20); served != 20 || busy != 0 {
		t.Fatalf("20 calls within the burst, on time: %d served, %d refused", served, busy)
	}
	late.Store(true)
	start := time.Now() // the pause begins after this batch is answered
	served, busy := batch(40, 20)
	if served != 0 || busy != 20 {
		t.Fatalf("20 calls past the share (1 a second) while late: %d served, %d refused", served, busy)
	}
	// The session reads nothing for refusalPause after a refused call.
	late.Store(false)
	if a := c.call("server.ping"); a.Error != nil {
		t.Errorf("on time again, within the burst: %+v", a.Error)
	}
	if took := time.Since(start); took < refusalPause {
		t.Errorf("the call after a refusal was answered in %v, before the %v pause", took, refusalPause)
	}
	// A local peer (exempt, a proxy) is never refused for a share.
	late.Store(true)
	s.srv.hooks.limitLocal.Store(false)
	other := s.negotiated(t, "1.4")
	if a := other.call("server.ping"); a.Error != nil {
		t.Errorf("an exempt local peer while late: %+v", a.Error)
	}
}
