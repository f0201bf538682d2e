package projected

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// id makes a txid whose order (last four bytes) is zero, so ties break by
// the first bytes: id(1) < id(2).
func id(i int) bchain.Hash {
	var h bchain.Hash
	binary.BigEndian.PutUint32(h[:4], uint32(i))
	return h
}

// tx makes a tx of vsize vB paying rate sat/vB.
func tx(i int, vsize uint32, rate float64, parents ...int) Tx {
	t := Tx{Txid: id(i), Weight: 4 * vsize, Fee: uint64(math.Round(rate * float64(vsize)))}
	for _, p := range parents {
		t.Parents = append(t.Parents, id(p))
	}
	return t
}

// small is a block of 20,000 WU: packages fit while
// 4,000 + weight + 4 × package vsize < 16,000.
func small(blocks int) Params {
	return Params{BlockWeight: 20_000, Blocks: blocks, ReservedWeight: 4_000, ReservedSigops: 400, MaxSigops: 80_000}
}

// layout renders blocks as their tx numbers.
func layout(s *Snapshot) [][]int {
	var out [][]int
	for _, b := range s.Blocks {
		var ids []int
		for _, h := range b.Txids {
			ids = append(ids, int(binary.BigEndian.Uint32(h[:4])))
		}
		out = append(out, ids)
	}
	return out
}

func rateOf(t *testing.T, s *Snapshot, i int) float64 {
	t.Helper()
	for _, b := range s.Blocks {
		for j, h := range b.Txids {
			if h == id(i) {
				return b.Rates[j]
			}
		}
	}
	t.Fatalf("tx %d in no block", i)
	return 0
}

func eqLayout(t *testing.T, s *Snapshot, want [][]int) {
	t.Helper()
	if got := layout(s); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("blocks %v, want %v", got, want)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func eqFloats(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
	for i := range got {
		if !near(got[i], want[i]) {
			t.Fatalf("%s = %v, want %v", what, got, want)
		}
	}
}
