package api

import (
	"context"
	"encoding/json"
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
	// Cpfp describes a tx of the projection; false when it holds none.
	Cpfp(txid bchain.Hash) (projected.Cpfp, bool)
}

// MempoolBlock and RecommendedFees are the projection's answers, named here
// for the fronts, which reach the mempool only through api.
type (
	MempoolBlock    = projected.MempoolBlock
	RecommendedFees = projected.RecommendedFees
)

// ProjectedFeeQueries answers fee questions from the projected blocks of
// our own mempool: mempool.space's fees/mempool-blocks, fees/recommended
// and fees/precise, and Electrum's fee histogram.
type ProjectedFeeQueries interface {
	MempoolBlocks(ctx context.Context) ([]projected.MempoolBlock, error)
	RecommendedFees(ctx context.Context, precise bool) (*projected.RecommendedFees, error)
	FeeHistogram(ctx context.Context) ([][2]uint64, error)
	Cpfp(ctx context.Context, txid string) (*CpfpInfo, error)
}

// CpfpInfo is mempool.space's cpfp/:txid. A tx not in the mempool has
// only an empty ancestors list (mempool.space without its database).
type CpfpInfo struct {
	Ancestors []CpfpRelative `json:"ancestors"`
	// BestDescendant is always null, as mempool.space sends it now.
	BestDescendant       json.RawMessage `json:"bestDescendant,omitempty"`
	Descendants          *[]CpfpRelative `json:"descendants,omitempty"`
	EffectiveFeePerVsize *float64        `json:"effectiveFeePerVsize,omitempty"`
	Sigops               *uint32         `json:"sigops,omitempty"`
	Fee                  *uint64         `json:"fee,omitempty"`
	AdjustedVsize        *uint32         `json:"adjustedVsize,omitempty"`
}

// CpfpRelative is an ancestor or descendant in CpfpInfo.
type CpfpRelative struct {
	Txid   string `json:"txid"`
	Weight uint32 `json:"weight"`
	Fee    uint64 `json:"fee"`
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

// Cpfp answers cpfp/:txid: a mempool tx's in-mempool ancestors, the txs
// that go into a block in its package (descendants), and the rate it is
// mined at in the projection.
func (f projectedFees) Cpfp(_ context.Context, txid string) (*CpfpInfo, error) {
	h, err := bchain.ParseHash(txid)
	if err != nil {
		return nil, userErr("Invalid transaction ID")
	}
	if _, err := f.snapshot(); err != nil {
		return nil, err
	}
	c, ok := f.p.Cpfp(h)
	if !ok {
		return &CpfpInfo{Ancestors: []CpfpRelative{}}, nil
	}
	relatives := func(rs []projected.Relative) []CpfpRelative {
		out := make([]CpfpRelative, len(rs))
		for i, r := range rs {
			out[i] = CpfpRelative{Txid: r.Txid.String(), Fee: r.Fee, Weight: r.Weight}
		}
		return out
	}
	descendants := relatives(c.Descendants)
	return &CpfpInfo{
		Ancestors: relatives(c.Ancestors), BestDescendant: json.RawMessage("null"), Descendants: &descendants,
		EffectiveFeePerVsize: &c.EffectiveFeePerVsize, Sigops: &c.Sigops, Fee: &c.Fee, AdjustedVsize: &c.AdjustedVsize,
	}, nil
}
