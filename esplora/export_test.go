package esplora

import (
	"sync/atomic"

	"github.com/openexplorer/blockbook/api"
)

// countingBudget counts the bytes clients take from the shared budget:
// the bytes a client alone keeps alive while it does not read.
type countingBudget struct {
	wsBudget
	taken atomic.Int64
}

func (b *countingBudget) TryTake(n int64, alone bool) bool {
	ok := b.wsBudget.TryTake(n, alone)
	if ok {
		b.taken.Add(n)
	}
	return ok
}

// CountWSCharges makes s count the bytes its websocket clients take from
// the shared budget (call it before any client connects); the function
// returned reads the count.
func CountWSCharges(s *Server) func() int64 {
	b := &countingBudget{wsBudget: s.ws.queued}
	s.ws.queued = b
	return b.taken.Load
}

// SetProjectedFees replaces s's projected-block queries (a test double).
func SetProjectedFees(s *Server, pf api.ProjectedFeeQueries) { s.caps.ProjectedFees = pf }

// SetTrackingHook makes f run between the choice of a track-mempool-block
// answer and its send.
func SetTrackingHook(s *Server, f func()) { s.ws.trackingHook = f }
