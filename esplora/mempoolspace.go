package esplora

import (
	"context"
	"net/http"

	"github.com/openexplorer/blockbook/api"
)

// mempool.space's own API lives under /api/v1 beside Esplora's (its
// backend serves both on one port). These routes answer from the
// projected blocks of our mempool (api.ProjectedFeeQueries).

// poolsNotServed answers mining/hashrate/pools/:interval: pools' shares
// need mempool.space's pool list (coinbase tags and addresses).
const poolsNotServed = "Pool hashrates are not served here: we keep no mining pool list"

// routeV1 dispatches /api/v1/...; p[0] is "v1".
func (s *Server) routeV1(ctx context.Context, p []string, n int) (*reply, error) {
	switch {
	case p[1] == "fees" && n == 3:
		return s.routeFees(ctx, p[2])
	case p[1] == "block" && n == 3:
		return s.mpBlock(ctx, p[2])
	case p[1] == "blocks" && n == 4 && p[2] == "tip" && (p[3] == "height" || p[3] == "hash"):
		return s.tip(ctx, p[3] == "height") // mempool.space's backend serves them under /v1 too
	case p[1] == "blocks" && n <= 3:
		return s.mpBlocks(ctx, p[2], n == 3 && p[2] != "")
	case p[1] == "difficulty-adjustment" && n == 2:
		return s.difficultyAdjustment(ctx)
	case p[1] == "mining" && p[2] == "hashrate" && n == 4:
		return s.hashrate(ctx, p[3])
	case p[1] == "mining" && p[2] == "blocks" && p[3] == "timestamp" && n == 5:
		return s.blockAtTime(ctx, p[4])
	case p[1] == "mining" && p[2] == "hashrate" && p[3] == "pools" && n == 5:
		return nil, mpError(http.StatusNotFound, poolsNotServed)
	case p[1] == "tx" && p[3] == "rbf" && n == 4:
		return s.txRbf(ctx, p[2])
	case p[1] == "replacements" && n == 2:
		return s.replacements(ctx, false)
	case p[1] == "fullrbf" && p[2] == "replacements" && n == 3:
		return s.replacements(ctx, true)
	case p[1] == "validate-address" && n == 3:
		return s.validateAddress(p[2])
	case p[1] == "prices" && n == 2:
		return s.prices(ctx)
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
