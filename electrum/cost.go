package electrum

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
)

// Call weights (docs/operations.md, "Cost"): every call costs 1 unit of
// the client's -electrumcallsperminute budget, and more by the work it
// causes, in the public port's spirit (a page of 100 txs there adds 1):
//
//   - 1 per 100 rows read: history entries (get_history, get_mempool,
//     a subscribe or status that reads the history), UTXOs (listunspent);
//   - 1 per 100 headers asked (blockchain.block.headers), charged before
//     the call only (it never reads more than it was asked);
//   - 1 per block of tweaks sent (blockchain.tweaks.subscribe);
//   - or, when more, 1 per 64 KiB of the answer (a large tx).
//
// What is known only after the call is charged then (a post-charge): the
// client's budget may go into debt, so its next calls are refused until
// it has refilled. A wallet's small script hashes cost 1 a call.
const (
	costRowsPerUnit  = 100
	costBytesPerUnit = 64 << 10
)

// preCost is what a call costs before it runs: 1, and for
// blockchain.block.headers 1 per 100 headers asked (unreadable params
// cost 1; the method refuses them).
func preCost(req *request) int {
	if req.Method != "blockchain.block.headers" {
		return 1
	}
	p, err := parseParams(req.Params, methods[req.Method].names, false)
	if err != nil {
		return 1
	}
	count, err := p.nonNegInt(1, "count", 0, true)
	if err != nil {
		return 1
	}
	return 1 + min(count, maxHeaders)/costRowsPerUnit
}

// meter counts one call's work as it runs (the session's worker runs one
// call at a time; the meter is the call's own).
type meter struct {
	rows, blocks int
}

type meterKey struct{}

func withMeter(ctx context.Context) (context.Context, *meter) {
	m := &meter{}
	return context.WithValue(ctx, meterKey{}, m), m
}

// meterRows counts n rows read for the call of ctx (none for the
// server's own work, such as a notification's recheck).
func meterRows(ctx context.Context, n int) {
	if m, ok := ctx.Value(meterKey{}).(*meter); ok {
		m.rows += n
	}
}

// meterBlock counts a block of tweaks sent for the call of ctx.
func meterBlock(ctx context.Context) {
	if m, ok := ctx.Value(meterKey{}).(*meter); ok {
		m.blocks++
	}
}

// cost is the call's whole weight once done, answer bytes included; never
// less than what was charged before it.
func (m *meter) cost(pre, answerBytes int) int {
	work := max(m.rows/costRowsPerUnit+m.blocks, answerBytes/costBytesPerUnit)
	return max(1+work, pre)
}

// callCost counts the units calls weigh, every client's (exempt local
// peers' included), so that an operator sees what wallets cost.
func newCallCost(reg prometheus.Registerer) prometheus.Counter {
	if reg == nil {
		return nil
	}
	c := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "blockbook_electrum_call_cost_total",
		Help: "units of the per-client budget (-electrumcallsperminute) Electrum calls weighed, every client's (exempt local peers' too)",
	})
	reg.MustRegister(c)
	return c
}

// charge takes the rest of a call's weight from ip's budget once it is
// done (ip "": an exempt client, counted in the metric only).
func (ss *session) charge(ip string, pre int, m *meter, answerBytes int) {
	total := m.cost(pre, answerBytes)
	if ss.s.callCost != nil {
		ss.s.callCost.Add(float64(total))
	}
	if ss.s.rate != nil && ip != "" && total > pre {
		ss.s.rate.Charge(ip, total-pre)
	}
}
