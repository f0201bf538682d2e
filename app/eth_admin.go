package app

import (
	"context"
	"sync"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/server"
)

// traceRetrier is /admin/internal-data-errors' refetch: a request wakes
// the sync worker, whose pass ends with the retry of failed traces
// (chainStack.afterSync), so the amend never races a block write.
type traceRetrier struct {
	mu          sync.Mutex
	asked, done uint64 // requests made, and those a finished retry covered
	wake        func() // the sync worker's Wake (nil: no worker, e.g. a replica)
}

var _ server.TraceRetrier = (*traceRetrier)(nil)

func (t *traceRetrier) Request() {
	t.mu.Lock()
	wake := t.wake
	if wake != nil {
		t.asked++
	}
	t.mu.Unlock()
	if wake != nil {
		wake()
	}
}

func (t *traceRetrier) Pending() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.asked > t.done
}

func (t *traceRetrier) setWake(wake func()) {
	t.mu.Lock()
	t.wake = wake
	t.mu.Unlock()
}

// retry runs the retry; once it succeeds it covers the requests made
// before it started (a later one waits for the next; a failure leaves
// them all pending).
func (t *traceRetrier) retry(ctx context.Context, run func(context.Context) error) error {
	t.mu.Lock()
	asked := t.asked
	t.mu.Unlock()
	err := run(ctx)
	if err == nil { // a failed retry leaves the requests pending for the next
		t.mu.Lock()
		t.done = max(t.done, asked)
		t.mu.Unlock()
	}
	return err
}

// contractAdmin is the admin's contract metadata service when the query
// service is Ethereum-type (Tron's included), else nil.
func contractAdmin(e stackEnv, svc api.Service) server.ContractAdmin {
	es, ok := svc.(*api.EthService)
	if !ok {
		return nil
	}
	return api.NewContractAdmin(es, e.d)
}

// traceRetrierOf is the stack's retrier as the admin takes it (a nil
// pointer would be a non-nil interface).
func traceRetrierOf(stack *chainStack) server.TraceRetrier {
	if stack.traces == nil {
		return nil
	}
	return stack.traces
}
