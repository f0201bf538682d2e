package server

import (
	"context"
	"strings"

	"github.com/openexplorer/blockbook/api"
)

// wsGetContractInfo answers getContractInfo: what the index knows of a
// contract, in the shape of contract/{address}, with protocols erc4626 a
// vault's data, and a fungible token's rates (in currency when asked).
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
	return c.s.caps.Contracts.Contract(ctx, p.Contract, api.ContractQuery{Currency: strings.ToLower(p.Currency), Protocols: p.Protocols})
}
