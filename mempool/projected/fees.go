package projected

import "math"

// RecommendedFees is mempool.space's fees/recommended and fees/precise
// answer, in sat/vB.
type RecommendedFees struct {
	FastestFee  float64 `json:"fastestFee"`
	HalfHourFee float64 `json:"halfHourFee"`
	HourFee     float64 `json:"hourFee"`
	EconomyFee  float64 `json:"economyFee"`
	MinimumFee  float64 `json:"minimumFee"`
}

// fee-api.ts constants for Bitcoin (not Liquid).
const (
	wholeIncrement   = 1.0
	preciseIncrement = 0.001 // the lowest non-zero minrelaytxfee, 1 sat/kvB
	minFastestFee    = 1.0
	minHalfHourFee   = 0.5
	priorityFactor   = 0.5
)

// Recommend is fees/recommended: whole sat/vB. minFee is the node's
// mempoolminfee in sat/vB (BTC/kvB × 100,000).
func Recommend(blocks []MempoolBlock, minFee float64, p Params) RecommendedFees {
	return recommend(blocks, minFee, wholeIncrement, p.normalized())
}

// RecommendPrecise is fees/precise: 0.001 sat/vB steps, with the offsets
// mempool.space adds to the two fastest rates while not all hashrate mines
// sub-sat/vB txs.
func RecommendPrecise(blocks []MempoolBlock, minFee float64, p Params) RecommendedFees {
	r := recommend(blocks, minFee, preciseIncrement, p.normalized())
	r.FastestFee = math.Max(r.FastestFee+priorityFactor, minFastestFee)
	r.HalfHourFee = math.Max(r.HalfHourFee+priorityFactor/2, minHalfHourFee)
	round := func(v float64) float64 { return jsRound(v*1000) / 1000 }
	return RecommendedFees{
		FastestFee:  round(r.FastestFee),
		HalfHourFee: round(r.HalfHourFee),
		HourFee:     round(r.HourFee),
		EconomyFee:  round(r.EconomyFee),
		MinimumFee:  round(r.MinimumFee),
	}
}

func recommend(blocks []MempoolBlock, minFee, inc float64, p Params) RecommendedFees {
	minimum := math.Max(roundUpTo(minFee, inc), inc)
	if len(blocks) == 0 {
		return RecommendedFees{minimum, minimum, minimum, minimum, minimum}
	}
	at := func(i int) *MempoolBlock {
		if i < len(blocks) {
			return &blocks[i]
		}
		return nil
	}
	// The thresholds are mempool.space's 500,000 and 950,000 vB for a
	// 4,000,000 WU block, scaled to the chain's capacity.
	maxVsize := uint64(p.BlockWeight) / 4
	half, nearlyFull := float64(maxVsize/2), float64(maxVsize*95/100)
	opt := func(b, next *MempoolBlock, prev float64) float64 {
		use := b.MedianFee
		if prev != 0 {
			use = (b.MedianFee + prev) / 2
		}
		if b.BlockVSize <= half || b.MedianFee < minimum {
			return minimum
		}
		if b.BlockVSize <= nearlyFull && next == nil {
			// A lone, partly full block: scale down with its emptiness.
			multiplier := (b.BlockVSize - half) / half
			return math.Max(roundTo(use*multiplier, inc), minimum)
		}
		return math.Max(roundUpTo(use, inc), minimum)
	}
	first := opt(at(0), at(1), 0)
	second, third := minimum, minimum
	if at(1) != nil {
		second = opt(at(1), at(2), first)
	}
	if at(2) != nil {
		third = opt(at(2), at(3), second)
	}
	fastest := math.Max(minimum, first)
	halfHour := math.Max(minimum, second)
	hour := math.Max(minimum, third)
	economy := math.Max(minimum, math.Min(2*minimum, third))
	// Recommendations never decrease with priority.
	fastest = max(fastest, halfHour, hour, economy)
	halfHour = max(halfHour, hour, economy)
	hour = math.Max(hour, economy)
	return RecommendedFees{
		FastestFee:  roundTo(fastest, inc),
		HalfHourFee: roundTo(halfHour, inc),
		HourFee:     roundTo(hour, inc),
		EconomyFee:  roundTo(economy, inc),
		MinimumFee:  roundTo(minimum, inc),
	}
}

func roundUpTo(v, nearest float64) float64 {
	if nearest == 0 {
		return v
	}
	return math.Ceil(v/nearest) * nearest
}

func roundTo(v, nearest float64) float64 {
	if nearest == 0 {
		return v
	}
	return jsRound(v/nearest) * nearest
}

// jsRound is JavaScript's Math.round: halves go up, also for negatives.
func jsRound(v float64) float64 {
	r := math.Floor(v)
	if v-r >= 0.5 {
		r++
	}
	return r
}
