package server

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"sync"

	"github.com/openexplorer/blockbook/api"
)

// Fee range and fill of the blocks in the explorer's lists, from the api's
// block statistics (Bitcoin-type chains; computed once per block and kept).

// defaultBlockWeight is Bitcoin's full block, when the config names none.
const defaultBlockWeight = 4_000_000

// blockList is a page of blocks with their fees where known.
type blockList struct {
	Blocks []blockRow
	Fees   bool // the fee columns are shown
}

type blockRow struct {
	api.BlockSummary
	Fee *blockFee
}

// blockFee is what a list shows of a block's fees: its txs' fee rates
// (lowest, median by weight, highest; sat/vB) and how full it is.
type blockFee struct {
	Min, Median, Max string
	Fill             float64 // percent of the block weight
	FillW            float64 // bar width in a 100-unit box
}

// blockStatsWorkers bounds the blocks whose statistics are read at once.
const blockStatsWorkers = 4

// blockList adds the fee figures to a page of blocks; a block whose
// statistics fail shows without them (the list is still worth showing).
func (e *explorer) blockList(ctx context.Context, b *api.Blocks) blockList {
	out := blockList{Blocks: make([]blockRow, len(b.Blocks))}
	for i := range b.Blocks {
		out.Blocks[i].BlockSummary = b.Blocks[i]
	}
	cs := e.caps.ChainStats
	if cs == nil {
		return out
	}
	out.Fees = true
	var wg sync.WaitGroup
	sem := make(chan struct{}, blockStatsWorkers)
	for i := range out.Blocks {
		row := &out.Blocks[i]
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			st, err := cs.BlockStats(ctx, row.Height)
			if err != nil || st == nil {
				if err != nil && ctx.Err() == nil {
					e.log.Warn("block statistics unavailable", "height", row.Height, "err", err)
				}
				return
			}
			row.Fee = e.blockFee(st)
		}()
	}
	wg.Wait()
	return out
}

func (e *explorer) blockFee(st *api.BlockStats) *blockFee {
	f := &blockFee{}
	if st.Txs > 1 {
		f.Min, f.Median, f.Max = strconv.FormatUint(st.MinFeeRate, 10), strconv.FormatUint(st.FeeRatePercentiles[2], 10), strconv.FormatUint(st.MaxFeeRate, 10)
	}
	fill := float64(st.TotalWeight) / float64(e.maxWeight) * 100
	f.Fill = math.Round(fill*10) / 10
	f.FillW = round1(math.Max(math.Min(fill, 100), 0.5))
	return f
}

// feePlace tells where a Bitcoin-type tx's fee rate stands: among its
// block's txs (the block's percentiles by weight), or for a pending tx the
// projected block it would go in; "" when unknown.
func (e *explorer) feePlace(ctx context.Context, tx *api.Tx) string {
	if tx.EthereumSpecific != nil || tx.Fees == nil || tx.VSize <= 0 || isCoinbase(tx) {
		return ""
	}
	f, _ := new(big.Float).SetInt(amountInt(tx.Fees)).Float64()
	r := f / float64(tx.VSize)
	if tx.BlockHeight >= 0 {
		if e.caps.ChainStats == nil {
			return ""
		}
		st, err := e.caps.ChainStats.BlockStats(ctx, uint32(tx.BlockHeight))
		if err != nil || st == nil || st.Txs < 2 {
			return ""
		}
		p := st.FeeRatePercentiles
		return fmt.Sprintf("its block's txs paid %d–%d sat/vB, median %d (10th to 90th percentile by weight)", p[0], p[4], p[2])
	}
	if e.caps.ProjectedFees == nil {
		return ""
	}
	blocks, err := e.caps.ProjectedFees.MempoolBlocks(ctx)
	if err != nil {
		return ""
	}
	for i, b := range blocks {
		if len(b.FeeRange) > 0 && r >= b.FeeRange[0] || i == len(blocks)-1 {
			if i == 0 {
				return "projected in the next block"
			}
			return fmt.Sprintf("projected in block %d of the mempool (in about %d minutes)", i+1, (i+1)*10)
		}
	}
	return ""
}

// feeDist is a block's fee-rate distribution: its txs' rates at the
// percentiles by weight, with the lowest and highest, as bars.
type feeDist struct {
	Points []feePoint
	Fill   float64
}

type feePoint struct {
	Label string
	Rate  uint64
	X, Y  float64 // the bar in a 280×100 box
	H     float64
}

// blockFeeDist reads the block's statistics; nil without them or fees.
func (e *explorer) blockFeeDist(ctx context.Context, height uint32) *feeDist {
	if e.caps.ChainStats == nil {
		return nil
	}
	st, err := e.caps.ChainStats.BlockStats(ctx, height)
	if err != nil || st == nil || st.Txs < 2 {
		return nil
	}
	p := st.FeeRatePercentiles
	rates := []uint64{st.MinFeeRate, p[0], p[1], p[2], p[3], p[4], st.MaxFeeRate}
	labels := []string{"lowest", "10th", "25th", "median", "75th", "90th", "highest"}
	top := float64(max(st.MaxFeeRate, 1))
	d := &feeDist{Fill: e.blockFee(st).Fill}
	for i, r := range rates {
		h := math.Max(float64(r)/top*90, 1)
		d.Points = append(d.Points, feePoint{Label: labels[i], Rate: r, X: float64(i*40 + 4), Y: round1(100 - h), H: round1(h)})
	}
	return d
}
