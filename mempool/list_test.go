package mempool

import (
	"context"
	"testing"
)

// Txs lists the whole pool newest first, ties by txid ascending.
func TestTxsNewestFirst(t *testing.T) {
	m := offlineMempool(t, Config{})
	if got := m.Txs(); len(got) != 0 {
		t.Fatalf("empty pool lists %d txs", len(got))
	}
	old := synthTx(1, 100, []synthIn{{op: Outpoint{hashOf(900), 0}}}, "")
	tieA := synthTx(2, 200, []synthIn{{op: Outpoint{hashOf(901), 0}}}, "")
	tieB := synthTx(3, 200, []synthIn{{op: Outpoint{hashOf(902), 0}}}, "")
	m.apply(context.Background(), []*Tx{old, tieB, tieA}, []uint64{1, 2, 3})
	first, second := tieA, tieB
	if string(tieB.Txid[:]) < string(tieA.Txid[:]) {
		first, second = tieB, tieA
	}
	got := m.Txs()
	want := []*Tx{first, second, old}
	if len(got) != len(want) {
		t.Fatalf("Txs lists %d txs, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Txid != want[i].Txid {
			t.Errorf("Txs[%d] = %s (seen %d), want %s (seen %d)", i, got[i].Txid, got[i].FirstSeen, want[i].Txid, want[i].FirstSeen)
		}
	}
}
