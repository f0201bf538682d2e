package projected

import (
	"fmt"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

func TestFeeHistogram(t *testing.T) {
	// electrs' own test case: (fee, vsize).
	e := NewEngine(Bitcoin())
	items := [][2]uint64{{20, 10}, {10, 10}, {60, 10}, {30, 10}, {70, 10}, {50, 10}, {40, 10}, {80, 10}, {1, 100}}
	for i, it := range items {
		e.Add(Tx{Txid: id(i + 1), Fee: it[0], Weight: uint32(4 * it[1])})
	}
	want := "[[15 10] [7 40] [3 20] [1 10] [0 100]]"
	if got := fmt.Sprint(e.Snapshot().FeeHistogram()); got != want {
		t.Fatalf("histogram %s, want %s", got, want)
	}
	// Removing the 8 sat/vB tx; adding a 99 sat/vB one shows the empty bins
	// below the top one.
	e.Remove(id(8))
	e.Add(Tx{Txid: id(100), Fee: 99 * 15, Weight: 4 * 15})
	want = "[[127 15] [63 0] [31 0] [15 0] [7 40] [3 20] [1 10] [0 100]]"
	if got := fmt.Sprint(e.Snapshot().FeeHistogram()); got != want {
		t.Fatalf("histogram %s, want %s", got, want)
	}
	if got := (&FeeHistogram{}).Pairs(); got == nil || len(got) != 0 {
		t.Fatalf("empty histogram %v", got)
	}
}

// TxRates gives every tx once, at its package's rate, with its vsize.
func TestTxRates(t *testing.T) {
	e := NewEngine(Bitcoin())
	e.Add(Tx{Txid: id(1), Fee: 1000, Weight: 4000}, Tx{Txid: id(2), Fee: 41_000, Weight: 4001, Parents: []bchain.Hash{id(1)}},
		Tx{Txid: id(3), Fee: 5000, Weight: 2000})
	got := e.Snapshot().TxRates()
	want := "[{20.99737532808399 1000} {20.99737532808399 1001} {10 500}]" // 42,000 sat over 8,001 WU
	if fmt.Sprint(got) != want {
		t.Errorf("rates %v, want %s", got, want)
	}
}
