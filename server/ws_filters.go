package server

import "context"

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
	return c.s.svc.BlockFilter(ctx, p.ScriptType, p.BlockHash, p.M)
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
	return c.s.svc.BlockFiltersBatch(ctx, p.ScriptType, p.BestKnownBlockHash, p.PageSize, p.M)
}
