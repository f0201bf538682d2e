package api

import "testing"

// Progress shows while the index is behind the node: blocks left, the rate
// rounded to hundredths, and the time left at that rate (none without one).
func TestProgressOf(t *testing.T) {
	p := progressOf(SyncState{BestHeight: 100, BlocksPerSecond: 33.333}, 1100)
	if p == nil || p.BlocksLeft != 1000 || p.BlocksPerSecond != 33.33 || p.EtaSeconds == nil || *p.EtaSeconds != 31 {
		t.Errorf("behind: %+v", p)
	}
	if p := progressOf(SyncState{BestHeight: 100}, 1100); p == nil || p.EtaSeconds != nil {
		t.Errorf("behind with no rate: %+v", p)
	}
	for _, st := range []SyncState{{BestHeight: 1100}, {BestHeight: 1000, InSync: true}} {
		if p := progressOf(st, 1100); p != nil {
			t.Errorf("%+v: progress %+v, want none", st, p)
		}
	}
}
