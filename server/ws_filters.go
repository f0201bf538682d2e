package server

import (
	"context"

	"github.com/openexplorer/blockbook/api"
)

// Golomb filter methods: the index's per-block filters and the mempool's
// per-tx filters.

func wsGetBlockFilter(ctx context.Context, c *wsConn, req *wsRequest) (any, error) {
	var p struct {
		ScriptType string `json:"scriptType"`
		BlockHash  string `json:"blockHash"`
		M          uint64 `json:"M"`
	}
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	if c.s.caps.BlockFilters == nil {
		return nil, c.s.caps.NotSupported(api.CapBlockFilters)
	}
	return c.s.caps.BlockFilters.BlockFilter(ctx, p.ScriptType, p.BlockHash, p.M)
}

func wsGetBlockFiltersBatch(ctx context.Context, c *wsConn, req *wsRequest) (any, error) {
	var p struct {
		ScriptType         string `json:"scriptType"`
		BestKnownBlockHash string `json:"bestKnownBlockHash"`
		PageSize           int    `json:"pageSize"`
		M                  uint64 `json:"M"`
	}
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	if c.s.caps.BlockFilters == nil {
		return nil, c.s.caps.NotSupported(api.CapBlockFilters)
	}
	return c.s.caps.BlockFilters.BlockFiltersBatch(ctx, p.ScriptType, p.BestKnownBlockHash, p.PageSize, p.M)
}
