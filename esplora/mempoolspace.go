package esplora

import (
	"context"

	"github.com/openexplorer/blockbook/api"
)

// mempool.space's own API lives under /api/v1 beside Esplora's (its
// backend serves both on one port). These routes answer from the
// projected blocks of our mempool (api.ProjectedFeeQueries).

// routeV1 dispatches /api/v1/...; p[0] is "v1".
func (s *Server) routeV1(ctx context.Context, p []string, n int) (*reply, error) {
	if p[1] == "fees" && n == 3 {
		return s.routeFees(ctx, p[2])
	}
	if p[1] == "cpfp" && n == 3 {
		if s.caps.ProjectedFees == nil {
			return nil, notFound(s.caps.NotSupported(api.CapProjectedFees).Error())
		}
		info, err := s.caps.ProjectedFees.Cpfp(ctx, p[2])
		if err != nil {
			return nil, err
		}
		return jsonReply(info)
	}
	return nil, errNoRoute
}

// routeFees answers fees/recommended, fees/precise and
// fees/mempool-blocks.
func (s *Server) routeFees(ctx context.Context, what string) (*reply, error) {
	if what != "recommended" && what != "precise" && what != "mempool-blocks" {
		return nil, errNoRoute
	}
	q := s.caps.ProjectedFees
	if q == nil {
		return nil, notFound(s.caps.NotSupported(api.CapProjectedFees).Error())
	}
	if what == "mempool-blocks" {
		blocks, err := q.MempoolBlocks(ctx)
		if err != nil {
			return nil, err
		}
		return jsonReply(blocks)
	}
	fees, err := q.RecommendedFees(ctx, what == "precise")
	if err != nil {
		return nil, err
	}
	return jsonReply(fees)
}
