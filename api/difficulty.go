package api

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/openexplorer/blockbook/db"
)

// DifficultyEpoch is what the difficulty adjustment is computed from, read
// from the index's headers.
type DifficultyEpoch struct {
	TipHeight uint32
	TipTime   int64
	// EpochTime is the time of the current epoch's first block.
	EpochTime int64
	// QuarterTime is the time of the block a quarter epoch minus one below
	// the tip (503 blocks on Bitcoin); HasQuarter is false near genesis.
	QuarterTime int64
	HasQuarter  bool
	// PreviousRetarget is the last retarget's difficulty change in percent
	// (CalcBitsDifference); 0 during the first epoch.
	PreviousRetarget float64
	// RetargetBlocks and TargetSpacing (seconds) are the chain's.
	RetargetBlocks uint32
	TargetSpacing  int64
	// Testnet3 selects the testnet rule of 20-minute minimum-difficulty
	// blocks (mempool.space's "testnet" network).
	Testnet3 bool
}

// DifficultyEpoch reads the tip, the current epoch's first block and the
// previous epoch's first block from the index.
func (s *UtxoService) DifficultyEpoch(context.Context) (*DifficultyEpoch, error) {
	p := s.backend.Params
	if p.RetargetBlocks == 0 || p.TargetSpacing <= 0 {
		return nil, fmt.Errorf("%w: %s has no fixed retarget interval", ErrNotSupported, p.Name)
	}
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	if !v.hasTip {
		return nil, nil
	}
	n, tip := p.RetargetBlocks, v.tip.Height
	e := &DifficultyEpoch{TipHeight: tip, RetargetBlocks: n, TargetSpacing: p.TargetSpacing,
		Testnet3: p.Network == "testnet3"}
	start := tip - tip%n
	metas := map[uint32]*db.BlockMeta{}
	heights := []uint32{tip, start}
	if start >= n {
		heights = append(heights, start-n)
	}
	if q := n/4 - 1; tip >= q {
		heights = append(heights, tip-q)
	}
	for _, h := range heights {
		if metas[h], err = db.ReadBlockMeta(v.snap, h); err != nil {
			return nil, err
		}
		if metas[h] == nil {
			return nil, fmt.Errorf("%w: no block %d below the tip %d", db.ErrCorrupt, h, tip)
		}
	}
	e.TipTime, e.EpochTime = metas[tip].Time, metas[start].Time
	if q := n/4 - 1; tip >= q {
		e.QuarterTime, e.HasQuarter = metas[tip-q].Time, true
	}
	if start >= n {
		// Bits no chain could have leave the change unknown: 0.
		e.PreviousRetarget, _ = CalcBitsDifference(headerBits(metas[start-n].Header), headerBits(metas[start].Header))
	}
	return e, nil
}

// headerBits reads the compact target of a Bitcoin header (0 when short).
func headerBits(h []byte) uint32 {
	if len(h) < 76 {
		return 0
	}
	return binary.LittleEndian.Uint32(h[72:76])
}

var errInvalidBits = errors.New("invalid bits")

// CalcBitsDifference is mempool.space's calcBitsDifference: the difficulty
// change in percent from oldBits to newBits of the next epoch, from the
// compact targets alone, clamped to [-75, 300].
func CalcBitsDifference(oldBits, newBits uint32) (float64, error) {
	for _, b := range []uint32{oldBits, newBits} {
		if b > 0x207fffff || b < 1 || b&0x00800000 != 0 || b&0x007fffff == 0 {
			return 0, fmt.Errorf("%w: %#x", errInvalidBits, b)
		}
	}
	oldExp, newExp := int(oldBits>>24), int(newBits>>24)
	oldNum, newNum := float64(oldBits&0x007fffff), float64(newBits&0x007fffff)
	var r float64
	switch newExp - oldExp {
	case -1:
		r = oldNum*256*100/newNum - 100
	case 0:
		r = oldNum*100/newNum - 100
	case 1:
		r = oldNum*100/(newNum*256) - 100
	default:
		return 0, fmt.Errorf("%w: exponents %d and %d", errInvalidBits, oldExp, newExp)
	}
	return min(300, max(-75, r)), nil
}

// DifficultyAdjustment is mempool.space's answer to difficulty-adjustment
// (times in milliseconds but PreviousTime, which it gives in seconds).
type DifficultyAdjustment struct {
	ProgressPercent       float64
	DifficultyChange      float64
	EstimatedRetargetDate int64
	RemainingBlocks       int64
	RemainingTime         int64
	PreviousRetarget      float64
	PreviousTime          int64
	NextRetargetHeight    int64
	TimeAvg               int64
	AdjustedTimeAvg       int64
	TimeOffset            int64
	ExpectedBlocks        float64
}

// testnetMaxBlockSeconds is testnet3's 20 minutes after which a block may
// have the minimum difficulty.
const testnetMaxBlockSeconds = 1200

// CalcDifficultyAdjustment is mempool.space's calcDifficultyAdjustment at
// time now (Unix seconds), with the chain's interval and spacing in place
// of Bitcoin's 2016 and 600.
func CalcDifficultyAdjustment(e *DifficultyEpoch, now int64) DifficultyAdjustment {
	n, target := float64(e.RetargetBlocks), float64(e.TargetSpacing)
	quarter := float64(e.RetargetBlocks/4 - 1)
	diffSeconds := float64(max(0, now-e.EpochTime))
	inEpoch := float64(e.TipHeight % e.RetargetBlocks)
	remaining := n - inEpoch
	actual := float64(now - e.EpochTime)
	if inEpoch == n-1 {
		actual = float64(e.TipTime - e.EpochTime)
	}
	timeAvgSecs := target
	if inEpoch > 0 {
		timeAvgSecs = diffSeconds / inEpoch
	}
	adjustedSecs := timeAvgSecs
	var change float64
	if e.HasQuarter && e.QuarterTime != 0 && inEpoch < quarter {
		lastEpoch := float64(e.EpochTime-e.QuarterTime) * (1 + e.PreviousRetarget/100)
		span := diffSeconds + lastEpoch
		adjustedSecs = span / quarter
		change = (target/(span/(quarter+1)) - 1) * 100
	} else {
		change = (target/(actual/(inEpoch+1)) - 1) * 100
	}
	change = min(300, max(-75, change))
	var offset int64
	if e.Testnet3 {
		timeAvgSecs = min(timeAvgSecs, testnetMaxBlockSeconds)
		since := now - e.TipTime
		if float64(since)+timeAvgSecs > testnetMaxBlockSeconds {
			offset = -min(since, testnetMaxBlockSeconds) * 1000
		}
	}
	timeAvg, adjusted := int64(math.Floor(timeAvgSecs*1000)), int64(math.Floor(adjustedSecs*1000))
	return DifficultyAdjustment{
		ProgressPercent: inEpoch / n * 100, DifficultyChange: change,
		EstimatedRetargetDate: int64(remaining)*adjusted + now*1000, RemainingBlocks: int64(remaining),
		RemainingTime: int64(remaining) * adjusted, PreviousRetarget: e.PreviousRetarget, PreviousTime: e.EpochTime,
		NextRetargetHeight: int64(e.TipHeight) + int64(remaining), TimeAvg: timeAvg, AdjustedTimeAvg: adjusted,
		TimeOffset: offset, ExpectedBlocks: diffSeconds / target,
	}
}
