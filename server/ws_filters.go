package server

import (
	"context"
	"strconv"

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

// wsGetSilentPaymentTweaks answers a block's Silent Payments tweak page
// (REST /api/v2/sp-tweaks/<height>): {"height", "filterSpent",
// "dustLimit"}.
func wsGetSilentPaymentTweaks(ctx context.Context, c *wsConn, req *wsRequest) (any, error) {
	var p struct {
		Height      *uint32 `json:"height"`
		FilterSpent bool    `json:"filterSpent"`
		DustLimit   uint64  `json:"dustLimit"`
	}
	if err := decodeParams(req.Params, &p); err != nil {
		return nil, err
	}
	if p.Height == nil {
		return nil, &api.Error{Msg: "Missing height"}
	}
	if c.s.caps.Tweaks == nil {
		return nil, c.s.caps.NotSupported(api.CapTweaks)
	}
	return c.s.caps.Tweaks.SilentPaymentTweaks(ctx, strconv.FormatUint(uint64(*p.Height), 10), p.FilterSpent, p.DustLimit)
}
