package server

import (
	"context"

	"github.com/openexplorer/blockbook/api"
)

// wsGetContractInfo answers getContractInfo: what the index knows of a
// contract, in the shape of contract/{address}. Blockbook's currency and
// protocols parameters (token rates, ERC4626 data) are accepted and not
// acted on.
func wsGetContractInfo(ctx context.Context, c *wsConn, req *wsRequest) (any, error) {
	var p struct {
		Contract  string   `json:"contract"`
		Currency  string   `json:"currency"`
		Protocols []string `json:"protocols"`
	}
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	if c.s.caps.Contracts == nil {
		return nil, c.s.caps.NotSupported(api.CapContracts)
	}
	return c.s.caps.Contracts.Contract(ctx, p.Contract)
}
