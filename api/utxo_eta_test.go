package api

import "testing"

// The bisection finds the first target whose estimate the fee rate meets.
func TestEtaBlocks(t *testing.T) {
	// Estimates fall with the target: 10,000 sat/kB for 1 block, 1000
	// less per block down to 1000 at 10 blocks and beyond.
	rate := func(b int) int64 { return max(11_000-1000*int64(b), 1000) }
	for _, tc := range []struct {
		perKB int64
		want  int
	}{
		{20_000, 1}, {10_000, 1}, {9_999, 2}, {4_000, 7}, {3_999, 8}, {1_000, 10}, {999, 70},
	} {
		if got := etaBlocks(tc.perKB, rate); got != tc.want {
			t.Errorf("fee rate %d: %d blocks, want %d", tc.perKB, got, tc.want)
		}
	}
}
