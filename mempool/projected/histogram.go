package projected

import "math/bits"

// histogramBins is electrs' FeeHistogram::BINS: one bin per power of two of
// the integer fee rate, plus one for rates below 1 sat/vB.
const histogramBins = 65

// FeeHistogram is the Electrum mempool.get_fee_histogram answer as
// romanz/electrs keeps it: bin i (i = leading zeros of the 64-bit integer
// fee rate fee/vsize) sums the vsize of txs paying [2^(63-i), 2^(64-i))
// sat/vB; bin 64 holds rates below 1.
type FeeHistogram struct {
	vsize [histogramBins]uint64
}

func histogramBin(fee, vsize uint64) int {
	if vsize == 0 {
		vsize = 1
	}
	return bits.LeadingZeros64(fee / vsize)
}

func (h *FeeHistogram) add(fee uint64, vsize uint32) {
	h.vsize[histogramBin(fee, uint64(vsize))] += uint64(vsize)
}

func (h *FeeHistogram) remove(fee uint64, vsize uint32) {
	i := histogramBin(fee, uint64(vsize))
	// electrs clamps at zero rather than wrapping.
	h.vsize[i] -= min(h.vsize[i], uint64(vsize))
}

// Pairs returns [fee_rate, vsize] pairs by descending fee rate, where
// fee_rate is the bin's upper bound minus one (2^(64-i) - 1), as electrs
// serialises them: bins above the first non-empty one are left out, empty
// bins below it are kept.
func (h *FeeHistogram) Pairs() [][2]uint64 {
	out := [][2]uint64{}
	for i, v := range h.vsize {
		if len(out) == 0 && v == 0 {
			continue
		}
		rate := uint64(0)
		if i < 64 {
			rate = ^uint64(0) >> i
		}
		out = append(out, [2]uint64{rate, v})
	}
	return out
}
