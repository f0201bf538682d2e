package api

import (
	"math"
	"math/big"
	"slices"
	"sort"
)

// HashrateHistory is mempool.space's mining/hashrate/:interval, built
// from the headers as its indexer builds its tables: a daily sample of
// getnetworkhashps at each UTC midnight and a row per change of the
// compact target.
type HashrateHistory struct {
	Hashrates         []HashrateSample
	Difficulty        []DifficultyChange
	CurrentHashrate   float64
	CurrentDifficulty float64
}

// HashrateSample is the hash rate (hashes/s) of the day ending at
// Timestamp (Unix seconds): getnetworkhashps over the day's block count
// at its last block.
type HashrateSample struct {
	Timestamp   int64
	AvgHashrate float64
}

// DifficultyChange is a block whose target differs from its parent's;
// Adjustment is the new difficulty over the old, to 6 decimals.
type DifficultyChange struct {
	Time       int64
	Height     int64
	Difficulty float64
	Adjustment float64
}

const day = 86400

// chainWork sums the work of runs of blocks. A block's work depends on
// its compact target only, which changes once per retarget period: each
// target's work is computed once, and the sums reuse one accumulator, so
// a walk of a million headers allocates per target, not per block.
type chainWork struct {
	blocks []MiningBlock
	works  map[uint32]*big.Int
	sum    big.Int
}

func newChainWork(blocks []MiningBlock) *chainWork {
	return &chainWork{blocks: blocks, works: map[uint32]*big.Int{}}
}

func (c *chainWork) work(bits uint32) *big.Int {
	w, ok := c.works[bits]
	if !ok {
		w = BlockWork(bits)
		c.works[bits] = w
	}
	return w
}

// networkHashPs is Bitcoin Core's getnetworkhashps(lookup, height): the
// work of the lookup blocks up to height over the spread of their and
// the block below's times. The lookup is cut at the first block read.
func (c *chainWork) networkHashPs(lookup int64, height uint32) float64 {
	base := c.blocks[0].Height
	if height == 0 || height < base || int(height-base) >= len(c.blocks) {
		return 0
	}
	lookup = min(lookup, int64(height), int64(height-base))
	if lookup <= 0 {
		return 0
	}
	top := int(height - base)
	minT, maxT := c.blocks[top].Time, c.blocks[top].Time
	for i := top - int(lookup); i < top; i++ {
		minT, maxT = min(minT, c.blocks[i].Time), max(maxT, c.blocks[i].Time)
	}
	if minT == maxT {
		return 0
	}
	c.sum.SetInt64(0)
	for i := top - int(lookup) + 1; i <= top; i++ {
		c.sum.Add(&c.sum, c.work(c.blocks[i].Bits))
	}
	return coreDouble(&c.sum) / float64(maxT-minT)
}

// ComputeHashrateHistory computes the history from blocks (consecutive
// heights up to the tip) at now (Unix seconds), keeping the rows from
// since on (0: all). Blocks from genesis add its rows (a sample at its
// time and the first difficulty), as mempool.space's full indexing does.
func ComputeHashrateHistory(blocks []MiningBlock, now, since int64) *HashrateHistory {
	h := &HashrateHistory{Hashrates: []HashrateSample{}, Difficulty: []DifficultyChange{}}
	if len(blocks) == 0 {
		return h
	}
	c := newChainWork(blocks)
	tip := blocks[len(blocks)-1]
	h.CurrentHashrate, h.CurrentDifficulty = c.networkHashPs(1008, tip.Height), CoreDifficulty(tip.Bits)
	var samples []HashrateSample
	var changes []DifficultyChange
	if blocks[0].Height == 0 {
		samples = append(samples, HashrateSample{blocks[0].Time, c.networkHashPs(1, 1)})
		changes = append(changes, DifficultyChange{blocks[0].Time, 0, CoreDifficulty(blocks[0].Bits), 0})
	}
	// Each day [to-86400, to] counts its blocks (both ends included, as
	// SQL's BETWEEN) and takes the highest.
	type dayStats struct {
		count int64
		last  uint32
	}
	days := map[int64]*dayStats{}
	add := func(to int64, b MiningBlock) {
		d := days[to]
		if d == nil {
			d = &dayStats{}
			days[to] = d
		}
		d.count++
		d.last = max(d.last, b.Height)
	}
	for i, b := range blocks {
		to := (b.Time + day - 1) / day * day
		add(to, b)
		if b.Time%day == 0 {
			add(to+day, b)
		}
		if i > 0 && b.Bits != blocks[i-1].Bits {
			d, prev := CoreDifficulty(b.Bits), CoreDifficulty(blocks[i-1].Bits)
			changes = append(changes, DifficultyChange{b.Time, int64(b.Height), d, math.Round(d/prev*1e6) / 1e6})
		}
	}
	oldest := blocks[0].Time
	for to := now / day * day; to > oldest; to -= day {
		s := HashrateSample{Timestamp: to}
		if d := days[to]; d != nil {
			s.AvgHashrate = c.networkHashPs(d.count, d.last)
		}
		samples = append(samples, s)
	}
	h.Hashrates = dailyHashrates(samples, now, since)
	h.Difficulty = dailyChanges(changes, now, since)
	return h
}

// dailyHashrates keeps the samples in [since, now] and averages those of
// one UTC day (mempool.space's WHERE, then GROUP BY timestamp DIV 86400).
func dailyHashrates(samples []HashrateSample, now, since int64) []HashrateSample {
	samples = slices.DeleteFunc(samples, func(s HashrateSample) bool { return s.Timestamp < since || s.Timestamp > now })
	sort.SliceStable(samples, func(i, j int) bool { return samples[i].Timestamp < samples[j].Timestamp })
	out := []HashrateSample{}
	for i := 0; i < len(samples); {
		j, ts, rate := i, 0.0, 0.0
		for ; j < len(samples) && samples[j].Timestamp/day == samples[i].Timestamp/day; j++ {
			ts += float64(samples[j].Timestamp)
			rate += samples[j].AvgHashrate
		}
		n := float64(j - i)
		out = append(out, HashrateSample{int64(math.Round(ts / n)), rate / n})
		i = j
	}
	return out
}

// dailyChanges keeps the changes in [since, now] and averages those of
// one UTC day, in height order.
func dailyChanges(changes []DifficultyChange, now, since int64) []DifficultyChange {
	changes = slices.DeleteFunc(changes, func(c DifficultyChange) bool { return c.Time < since || c.Time > now })
	sort.SliceStable(changes, func(i, j int) bool { return changes[i].Time/day < changes[j].Time/day })
	out := []DifficultyChange{}
	for i := 0; i < len(changes); {
		var t, h, d, a float64
		j := i
		for ; j < len(changes) && changes[j].Time/day == changes[i].Time/day; j++ {
			t, h = t+float64(changes[j].Time), h+float64(changes[j].Height)
			d, a = d+changes[j].Difficulty, a+changes[j].Adjustment
		}
		n := float64(j - i)
		out = append(out, DifficultyChange{int64(math.Round(t / n)), int64(math.Round(h / n)), d / n, a / n})
		i = j
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Height < out[j].Height })
	return out
}
