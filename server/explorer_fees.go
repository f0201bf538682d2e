package server

import (
	"context"
	"errors"
	"math"
	"math/big"
	"strconv"

	"github.com/openexplorer/blockbook/api"
)

// The start page's fee panel: the mempool's projected blocks as
// mempool.space draws them, the recommended fees and a fee-rate histogram,
// from the projected-blocks engine where it runs (api ProjectedFeeQueries);
// the node's estimates otherwise.

// projectedBlockVSize is the vsize of a full block, the 100% of a projected
// block's fill (mempool.space's: 4M weight units).
const projectedBlockVSize = 1_000_000

// maxShownBlocks bounds the projected blocks drawn; the last one of the
// engine's holds the rest of the mempool.
const maxShownBlocks = 8

type feePanel struct {
	Blocks      []mempoolBlockView
	Recommended *api.RecommendedFees
	Histogram   []histRow
	Estimates   []nodeEstimate // the node's, when there is no projection
	Note        string         // why neither is shown
}

// mempoolBlockView is one projected block: its text and the SVG fill.
type mempoolBlockView struct {
	N                int // 1 is the next block
	Median, Min, Max string
	VSize, TotalFees string
	Txs              int
	FillY, FillH     float64 // of a 100-unit square
	Level            int     // colour class by median fee, 1 (low) to 6
	Rest             bool    // the last one: the rest of the mempool
}

// histRow is one bin of the fee histogram: rates [Lo, Hi) sat/vB.
type histRow struct {
	Lo, Hi string
	VSize  uint64
	W      float64 // bar width in a 100-unit box
}

type nodeEstimate struct {
	Blocks int
	Rate   string
}

// estimateTargets are the confirmation targets asked of the node.
var estimateTargets = []int{1, 3, 6, 144}

// feePanel asks the projection, or the node's estimator without one. An
// unavailable source leaves a note; the page still renders.
func (e *explorer) feePanel(ctx context.Context) (*feePanel, error) {
	p := &feePanel{}
	if pf := e.caps.ProjectedFees; pf != nil {
		blocks, err := pf.MempoolBlocks(ctx)
		if err == nil {
			p.Recommended, err = pf.RecommendedFees(ctx, false)
		}
		var snap api.ProjectedSnapshot
		if err == nil {
			snap, err = pf.Projection(ctx)
		}
		if err == nil {
			p.Blocks, p.Histogram = blockViews(blocks), histRows(snap.FeeHistogram())
			return p, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		e.log.Info("projected fees unavailable; showing the node's estimates", "err", err)
	}
	if e.caps.FeeEstimates == nil {
		p.Note = "This chain gives no fee estimates."
		return p, nil
	}
	est, err := e.caps.FeeEstimates.FeeEstimates(ctx, estimateTargets, api.FeeQuery{})
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		p.Note = "The node's fee estimates are not available now."
		return p, nil
	}
	for i, f := range est {
		p.Estimates = append(p.Estimates, nodeEstimate{Blocks: estimateTargets[i], Rate: e.perUnitRate(f.FeePerUnit)})
	}
	return p, nil
}

// perUnitRate renders the node's fee per unit: sat/vB from sat per 1000
// vbytes on Bitcoin-type chains, Gwei from wei per gas on Ethereum-type
// ones (18 decimals).
func (e *explorer) perUnitRate(perUnit string) string {
	v, ok := new(big.Int).SetString(perUnit, 10)
	if !ok {
		return perUnit
	}
	if e.loadedCoin().Decimals == 18 {
		return formatAmount(v, 9) + " Gwei"
	}
	return formatAmount(v, 3) + " sat/vB"
}

func blockViews(blocks []api.MempoolBlock) []mempoolBlockView {
	var out []mempoolBlockView
	for i, b := range blocks {
		if i == maxShownBlocks {
			break
		}
		fill := math.Min(b.BlockVSize/projectedBlockVSize, 1)
		v := mempoolBlockView{N: i + 1, Median: rate(b.MedianFee), VSize: vbytes(b.BlockVSize),
			TotalFees: groupDigits(int64(b.TotalFees)), Txs: b.NTx,
			FillH: round1(fill * 100), FillY: round1(100 - fill*100), Level: feeLevel(b.MedianFee),
			Rest: i == len(blocks)-1 && b.BlockVSize > projectedBlockVSize}
		if n := len(b.FeeRange); n > 0 {
			v.Min, v.Max = rate(b.FeeRange[0]), rate(b.FeeRange[n-1])
		}
		if b.NTx == 1 && b.BlockVSize > 0 {
			// mempool.space gives a block of one tx zero rates (it takes
			// the tx for a coinbase); the tx's own rate says more.
			r := rate(float64(b.TotalFees) / b.BlockVSize)
			v.Median, v.Min, v.Max, v.Level = r, r, r, feeLevel(float64(b.TotalFees)/b.BlockVSize)
		}
		out = append(out, v)
	}
	return out
}

// feeLevel buckets a fee rate for the block's colour (sat/vB bounds as
// mempool.space's palette roughly steps).
func feeLevel(r float64) int {
	for i, bound := range []float64{2, 5, 10, 20, 50} {
		if r < bound {
			return i + 1
		}
	}
	return 6
}

// histRows turns Electrum's histogram pairs (upper rate bound minus one,
// vsize; highest rate first) into bars.
func histRows(pairs [][2]uint64) []histRow {
	var out []histRow
	maxV := uint64(0)
	for _, p := range pairs {
		maxV = max(maxV, p[1])
	}
	for _, p := range pairs {
		if p[1] == 0 {
			continue
		}
		lo, hi := "0", "∞"
		if p[0] < math.MaxUint64 {
			hi = strconv.FormatUint(p[0]+1, 10)
		}
		if p[0] > 0 {
			lo = strconv.FormatUint(p[0]/2+1, 10)
		}
		out = append(out, histRow{Lo: lo, Hi: hi, VSize: p[1], W: round1(math.Max(float64(p[1])/float64(maxV)*100, 0.5))})
	}
	return out
}

func rate(r float64) string {
	return strconv.FormatFloat(math.Round(r*100)/100, 'f', -1, 64)
}

// vbytes renders a virtual size in kvB or MvB.
func vbytes(v float64) string {
	if v >= 1e6 {
		return strconv.FormatFloat(math.Round(v/1e4)/100, 'f', -1, 64) + " MvB"
	}
	return strconv.FormatFloat(math.Round(v/10)/100, 'f', -1, 64) + " kvB"
}
