package projected

import (
	"slices"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// cpfp/:txid: a 1 sat/vB parent lifted by a 50 sat/vB child goes in as
// one package; a second, cheap child of the parent does not join it; a
// lone tx has no relatives.
func TestCpfp(t *testing.T) {
	e := NewEngine(small(8))
	e.Add(tx(1, 100, 1), tx(2, 100, 50, 1), tx(3, 100, 2, 1), tx(4, 100, 10))
	e.Refresh()
	rel := func(ids ...int) []Relative {
		var out []Relative
		for _, i := range ids {
			out = append(out, Relative{Txid: id(i), Weight: 400, Fee: map[int]uint64{1: 100, 2: 5000, 3: 200}[i]})
		}
		return out
	}
	pkgRate := (100.0 + 5000) / 200 // parent and child together
	for _, c := range []struct {
		tx          int
		ancestors   []Relative
		descendants []Relative
		rate        float64
	}{
		{2, rel(1), nil, pkgRate},
		{1, nil, rel(2), pkgRate},
		{3, rel(1), nil, 2},
		{4, nil, nil, 10},
	} {
		got, ok := e.Cpfp(id(c.tx))
		if !ok || !slices.Equal(got.Ancestors, c.ancestors) || !slices.Equal(got.Descendants, c.descendants) || got.EffectiveFeePerVsize != c.rate {
			t.Errorf("tx %d: %+v, %v; want ancestors %v, descendants %v, rate %v", c.tx, got, ok, c.ancestors, c.descendants, c.rate)
		}
		if got.AdjustedVsize != 100 {
			t.Errorf("tx %d: adjusted vsize %d", c.tx, got.AdjustedVsize)
		}
	}
	if _, ok := e.Cpfp(id(9)); ok {
		t.Error("an unknown tx has CPFP data")
	}
	// Added after the projection: its own rate until the next one.
	e.Add(tx(5, 100, 7))
	if got, ok := e.Cpfp(id(5)); !ok || got.EffectiveFeePerVsize != 7 {
		t.Errorf("a tx not projected yet: %+v, %v", got, ok)
	}
}

// A tx's position is its block and the vbytes before its middle there
// (mempool.space's txPosition); BlockTxs lists a block's txs with their
// fees, weights and package rates, in the order the positions count.
func TestPositionsAndBlockTxs(t *testing.T) {
	e := NewEngine(small(8))
	e.Add(tx(1, 100, 1), tx(2, 100, 50, 1), tx(4, 100, 10))
	s := e.Refresh()
	want := map[int]Position{}
	var vsize float64
	for b := range s.Blocks {
		for _, bt := range s.BlockTxs(b) {
			v := float64(bt.Weight) / 4
			for i := 1; i <= 4; i++ {
				if id(i) == bt.Txid {
					want[i] = Position{Block: b, VSize: vsize + v/2}
				}
			}
			vsize += v
		}
		vsize = 0
	}
	if len(want) != 3 {
		t.Fatalf("BlockTxs listed %d of the 3 txs: %v", len(want), layout(s))
	}
	got := s.Positions(map[bchain.Hash]struct{}{id(1): {}, id(2): {}, id(4): {}, id(9): {}})
	for i, p := range want {
		if got[id(i)] != p {
			t.Errorf("tx %d: position %+v, want %+v", i, got[id(i)], p)
		}
	}
	if _, ok := got[id(9)]; ok || len(got) != 3 {
		t.Errorf("positions: %+v", got)
	}
	// The parent and child go in as one package at its rate, parent first.
	b0 := s.BlockTxs(0)
	if len(b0) == 0 || b0[0].Txid != id(1) || b0[0].Fee != 100 || b0[0].Weight != 400 || !near(b0[0].Rate, 25.5) {
		t.Errorf("block 0: %+v", b0)
	}
	if s.BlockTxs(-1) != nil || s.BlockTxs(len(s.Blocks)) != nil {
		t.Error("BlockTxs past the blocks is not nil")
	}
}
