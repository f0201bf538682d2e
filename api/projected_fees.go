package api

import (
	"context"
	"fmt"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/mempool/projected"
)

// MempoolProjection is the mempool's projected blocks (mempool.Projection).
type MempoolProjection interface {
	Snapshot() *projected.Snapshot
	// Current is false while the projection does not follow the node's
	// mempool (not loaded yet, resyncs failing).
	Current() bool
}

// ProjectedFeeQueries answers fee questions from the projected blocks of
// our own mempool: mempool.space's fees/mempool-blocks, fees/recommended
// and fees/precise, and Electrum's fee histogram.
type ProjectedFeeQueries interface {
	MempoolBlocks(ctx context.Context) ([]projected.MempoolBlock, error)
	RecommendedFees(ctx context.Context, precise bool) (*projected.RecommendedFees, error)
	FeeHistogram(ctx context.Context) ([][2]uint64, error)
}

// projectedFees is ProjectedFeeQueries over a projection; minFee is the
// node's mempool minimum fee, the recommendations' floor.
type projectedFees struct {
	p      MempoolProjection
	minFee bchain.MinFeeSource
}

var _ ProjectedFeeQueries = projectedFees{}

// snapshot is the latest projection, or an error that fronts answer as
// "the node is not responding" while it does not follow the node.
func (f projectedFees) snapshot() (*projected.Snapshot, error) {
	if !f.p.Current() {
		return nil, fmt.Errorf("the mempool does not follow the node now: %w", bchain.ErrNodeUnavailable)
	}
	return f.p.Snapshot(), nil
}

func (f projectedFees) MempoolBlocks(context.Context) ([]projected.MempoolBlock, error) {
	s, err := f.snapshot()
	if err != nil {
		return nil, err
	}
	return s.MempoolBlocks(), nil
}

func (f projectedFees) RecommendedFees(ctx context.Context, precise bool) (*projected.RecommendedFees, error) {
	s, err := f.snapshot()
	if err != nil {
		return nil, err
	}
	perKvB, err := f.minFee.MempoolMinFee(ctx)
	if err != nil {
		return nil, fmt.Errorf("minimum fee: %w", err)
	}
	minFee := float64(perKvB) / 1000 // sat/vB
	r := s.RecommendedFees(minFee)
	if precise {
		r = s.PreciseFees(minFee)
	}
	return &r, nil
}

func (f projectedFees) FeeHistogram(context.Context) ([][2]uint64, error) {
	s, err := f.snapshot()
	if err != nil {
		return nil, err
	}
	return s.FeeHistogram(), nil
}
