package projected

import (
	"math"
	"slices"
)

// statTx is what the fee statistics read of a tx.
type statTx struct {
	Weight uint32
	Fee    uint64
	// Rate is the effective fee rate; 0 falls back to Fee/(Weight/4), as
	// mempool.space's `effectiveFeePerVsize || fee / (weight / 4)` does.
	Rate float64
}

func (t statTx) rate() float64 {
	if t.Rate != 0 {
		return t.Rate
	}
	return float64(t.Fee) / (float64(t.Weight) / 4)
}

// nthPercentile is mempool.space's getNthPercentile: no interpolation.
func nthPercentile(n int, sorted []float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[int(math.Floor(float64(len(sorted)-1)*(float64(n)/100)))]
}

// effectiveFeeStats is mempool.space's calcEffectiveFeeStatistics for a
// block of capacity blockWeight: txs are in block order.
func effectiveFeeStats(txs []statTx, blockWeight uint32) (medianFee float64, feeRange []float64) {
	if len(txs) <= 1 {
		return 0, []float64{0, 0, 0, 0, 0, 0, 0}
	}
	// mempool.space takes a zero-fee first tx for a coinbase.
	if txs[0].Fee == 0 {
		txs = txs[1:]
	}
	rates := make([]float64, len(txs))
	var total float64
	for i, t := range txs {
		rates[i] = t.rate()
		total += float64(t.Weight)
	}
	// Sorting the tx records stably by rate sorts the rates; weights must
	// follow the same permutation.
	idx := make([]int, len(txs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case rates[a] < rates[b]:
			return -1
		case rates[a] > rates[b]:
			return 1
		}
		return 0
	})
	sorted := make([]float64, len(idx))
	for i, j := range idx {
		sorted[i] = rates[j]
	}

	// The median is the mean rate of the middle 0.25% of the block's
	// weight, the unused space counting as the lowest-rate part.
	bw := float64(blockWeight)
	weightCount := bw - total
	halfWidth := bw / 800
	left := math.Floor(bw/2 - halfWidth)
	right := math.Ceil(bw/2 + halfWidth)
	var medFee, medWeight float64
	for i := 0; i < len(idx) && weightCount < right; i++ {
		w := float64(txs[idx[i]].Weight)
		l, r := weightCount, weightCount+w
		if r > left {
			part := math.Min(r, right) - math.Max(l, left)
			medFee += sorted[i] * (part / 4)
			medWeight += part
		}
		weightCount += w
	}
	if medWeight != 0 {
		medianFee = medFee / (medWeight / 4)
	}

	// Min: the lower of the 1st percentile and the lowest rate among the
	// last 2% of txs in block order; max: the higher of the 99th percentile
	// and the highest rate among the first 2%.
	minFee := math.Inf(1)
	for _, r := range rates[int(math.Ceil(float64(len(txs))*49/50)):] {
		minFee = math.Min(minFee, r)
	}
	minFee = math.Min(nthPercentile(1, sorted), minFee)
	maxFee := 0.0
	for _, r := range rates[:int(float64(len(txs))/50)] {
		maxFee = math.Max(maxFee, r)
	}
	maxFee = math.Max(nthPercentile(99, sorted), maxFee)
	feeRange = []float64{minFee}
	for _, n := range []int{10, 25, 50, 75, 90} {
		feeRange = append(feeRange, nthPercentile(n, sorted))
	}
	return medianFee, append(feeRange, maxFee)
}

// onlineFeeStats is mempool.space's OnlineFeeStatsCalculator, used for the
// last projected block when it is heavier than a block: average rates of
// narrow weight bands at given percentiles, fed txs in block order.
type onlineFeeStats struct {
	maxWeight   float64
	percentiles []float64
	bandWidth   float64
	bandIndex   int
	left, right float64
	inBand      bool
	bandFee     float64
	bandWeight  float64
	minRate     float64
	maxRate     float64
	ranges      []band // most recent band first, as the original unshifts
	totalWeight float64
}

type band struct{ avg, min, max float64 }

func newOnlineFeeStats(maxWeight, bandWidthPercent float64, percentiles []float64) *onlineFeeStats {
	ps := append([]float64{bandWidthPercent / 2}, percentiles...)
	ps = append(ps, 100-bandWidthPercent/2)
	o := &onlineFeeStats{
		maxWeight:   maxWeight,
		percentiles: ps,
		bandWidth:   maxWeight * (bandWidthPercent / 100),
		minRate:     math.Inf(1),
	}
	o.nextBounds()
	return o
}

func (o *onlineFeeStats) nextBounds() {
	if o.bandIndex < len(o.percentiles) {
		o.left = (o.percentiles[o.bandIndex]/100)*o.maxWeight - o.bandWidth/2
		o.right = o.left + o.bandWidth
	} else {
		o.left, o.right = math.Inf(1), math.Inf(1)
	}
}

func (o *onlineFeeStats) add(t statTx) {
	w := float64(t.Weight)
	left, right := o.totalWeight, o.totalWeight+w
	if !o.inBand && right <= o.left {
		o.totalWeight += w
		return
	}
	for left < right {
		if right > o.left {
			o.inBand = true
			r := t.rate()
			part := math.Min(right, o.right) - math.Max(left, o.left)
			o.bandFee += r * part
			o.bandWeight += part
			o.maxRate = math.Max(o.maxRate, r)
			o.minRate = math.Min(o.minRate, r)
		}
		left = math.Min(right, o.right)
		if left >= o.right {
			o.inBand = false
			o.closeBand()
			o.bandIndex++
			o.nextBounds()
		}
	}
	o.totalWeight += w
}

func (o *onlineFeeStats) closeBand() {
	avg := 0.0
	if o.bandWeight != 0 {
		avg = o.bandFee / o.bandWeight
	}
	o.ranges = slices.Insert(o.ranges, 0, band{avg, o.minRate, o.maxRate})
	o.bandFee, o.bandWeight = 0, 0
	o.minRate, o.maxRate = math.Inf(1), 0
}

// raw is getRawFeeStats: the band averages, lowest rates first, and the
// middle band's average as median. Like the original, it is read once.
func (o *onlineFeeStats) raw() (medianFee float64, feeRange []float64) {
	if o.bandWeight > 0 {
		o.closeBand()
	}
	for len(o.ranges) < len(o.percentiles) {
		o.ranges = slices.Insert(o.ranges, 0, band{})
	}
	feeRange = make([]float64, len(o.ranges))
	for i, b := range o.ranges {
		feeRange[i] = b.avg
	}
	return o.ranges[len(o.ranges)/2].avg, feeRange
}
