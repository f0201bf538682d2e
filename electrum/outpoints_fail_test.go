package electrum

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/tools/apitest"
)

// flakyOutpoints answers outpoint statuses from the service, or fails
// them, or (spent) says every output is spent by a pending tx.
type flakyOutpoints struct {
	api.ScriptQueries
	q    api.OutpointQueries
	mode atomic.Int32 // 0 as the service, modeFail, modeSpent
	only bchain.Hash  // the tx whose outputs the modes apply to
	slow time.Duration
	// inFlight and peak count the reads running at once.
	inFlight, peak atomic.Int32
}

const (
	modeFail = iota + 1
	modeSpent
)

func (f *flakyOutpoints) OutpointStatus(ctx context.Context, txid bchain.Hash, vout uint32) (api.OutpointStatus, error) {
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for p := f.peak.Load(); n > p && !f.peak.CompareAndSwap(p, n); p = f.peak.Load() {
	}
	time.Sleep(f.slow)
	st, err := f.q.OutpointStatus(ctx, txid, vout)
	if txid != f.only {
		return st, err
	}
	switch f.mode.Load() {
	case modeFail:
		return api.OutpointStatus{}, errors.New("read failed")
	case modeSpent:
		st.Spent, st.SpenderTxid, st.SpenderHeight = true, txid, 0
	}
	return st, err
}

// unspentOutputs are confirmed outputs no tx spends, of distinct txs.
func unspentOutputs(t *testing.T, f *apitest.Fixture, n int) []wire.OutPoint {
	t.Helper()
	o := newOutpointOracle(f)
	var out []wire.OutPoint
	for h, b := range f.Gen.Blocks() {
		for _, tx := range b.Transactions {
			op := wire.OutPoint{Hash: tx.TxHash(), Index: 0}
			if _, spent := o.spends[op]; h > 0 && !spent && len(out) < n {
				out = append(out, op)
			}
		}
	}
	if len(out) < n {
		t.Fatalf("%d unspent outputs in the fixture", len(out))
	}
	return out
}

// A status read that fails during a recheck does not lose the change:
// the outpoint is rechecked at the next event, though that names
// another tx.
func TestOutpointRecheckAfterReadError(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{Mempool: true})
	ops := unspentOutputs(t, f, 2)
	op, other := ops[0], ops[1]
	flaky := &flakyOutpoints{only: toHash(t, op.Hash)}
	s := serveWrapped(t, f, Config{}, func(sq api.ScriptQueries) api.ScriptQueries {
		flaky.ScriptQueries = sq
		return flaky
	})
	flaky.q = s.svc
	c := s.negotiated(t, "1.6")
	checks := rechecks(s)
	for _, o := range ops {
		c.call("blockchain.outpoint.subscribe", o.Hash.String(), o.Index)
	}
	flaky.mode.Store(modeFail)
	s.srv.OnMempoolSpends(toHash(t, op.Hash), nil) // names op's tx; its read fails
	waitRecheck(t, checks)
	flaky.mode.Store(modeSpent)
	s.srv.OnMempoolSpends(toHash(t, other.Hash), nil) // names the other tx only
	waitRecheck(t, checks)
	c.call("server.ping")
	for _, n := range c.notes {
		if got, st := noteOutpoint(t, n); got == op {
			if !strings.Contains(st, `"spender_height":0`) {
				t.Fatalf("notified %s", st)
			}
			return
		}
	}
	t.Fatalf("the change of %v was never notified (notes %+v)", op, c.notes)
}

// Sessions subscribing at once cannot pass the server's cap: the check
// and the count are one step.
func TestSubscriptionCapUnderConcurrency(t *testing.T) {
	const sessions, limit = 12, 4
	// Slow reads widen the window between a check and its count.
	slow := &flakyOutpoints{slow: 50 * time.Millisecond}
	s := serveWrapped(t, apitest.Shared(t, apitest.Options{Mempool: true}), Config{MaxSubsTotal: limit},
		func(sq api.ScriptQueries) api.ScriptQueries { slow.ScriptQueries = sq; return slow })
	slow.q = s.svc
	ops := unspentOutputs(t, s.f, sessions)
	clients := make([]*client, sessions)
	for i := range clients {
		clients[i] = s.negotiated(t, "1.6")
	}
	var wg sync.WaitGroup
	var admitted atomic.Int32
	for i, c := range clients {
		wg.Go(func() {
			c.id++
			c.sendLine(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"blockchain.outpoint.subscribe","params":["%s",%d]}`,
				c.id, ops[i].Hash, ops[i].Index))
		})
	}
	wg.Wait()
	for _, c := range clients {
		if a := c.answerTo(fmt.Sprint(c.id)); a.Error == nil {
			admitted.Add(1)
		}
	}
	if n := s.srv.Subscriptions(); n > limit || admitted.Load() != limit {
		t.Fatalf("%d subscriptions held, %d admitted (limit %d)", n, admitted.Load(), limit)
	}
}

// One address's connections have at most MaxCallsPerIP calls in progress:
// the others wait for a place and are answered, not refused.
func TestCallsPerClientWait(t *testing.T) {
	const conns, limit = 6, 2
	slow := &flakyOutpoints{slow: 30 * time.Millisecond}
	s := serveWrapped(t, apitest.Shared(t, apitest.Options{Mempool: true}), Config{MaxCallsPerIP: limit},
		func(sq api.ScriptQueries) api.ScriptQueries { slow.ScriptQueries = sq; return slow })
	slow.q = s.svc
	s.srv.hooks.limitLocal.Store(true) // the test's clients are loopback peers
	op := unspentOutputs(t, s.f, 1)[0]
	clients := make([]*client, conns)
	for i := range clients {
		clients[i] = s.negotiated(t, "1.6")
	}
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Go(func() {
			for i := range 3 {
				c.sendLine(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"blockchain.outpoint.get_status","params":["%s",%d]}`,
					100+i, op.Hash, op.Index))
			}
		})
	}
	wg.Wait()
	for _, c := range clients {
		for i := range 3 {
			if a := c.answerTo(fmt.Sprint(100 + i)); a.Error != nil {
				t.Fatalf("a call waiting for a place: %+v", a.Error)
			}
		}
	}
	if p := slow.peak.Load(); p > limit || p < 1 {
		t.Fatalf("%d calls of one address ran at once (limit %d)", p, limit)
	}
}
