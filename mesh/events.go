package mesh

import "context"

// The block event stream: the blocks the index connected and the ones
// reorgs removed, in order (api.LedgerEvents derives it from the index
// alone, the same after a restart and on a replica).

const (
	defaultEventsLimit = 100
	maxEventsLimit     = 1000
)

type eventsBlocksRequest struct {
	netRequest
	Offset *int64 `json:"offset,omitempty"`
	Limit  *int64 `json:"limit,omitempty"`
}

type blockEvent struct {
	Sequence        int64           `json:"sequence"`
	BlockIdentifier BlockIdentifier `json:"block_identifier"`
	Type            string          `json:"type"`
}

type eventsBlocksResponse struct {
	MaxSequence int64        `json:"max_sequence"`
	Events      []blockEvent `json:"events"`
}

// eventsBlocks answers limit events (100 by default, at most 1000) from
// offset, or the last limit ones without an offset, as the standard asks.
func (s *Server) eventsBlocks(ctx context.Context, body []byte) (any, error) {
	var req eventsBlocksRequest
	if err := s.read(body, &req); err != nil {
		return nil, err
	}
	offset, limit := int64(-1), int64(defaultEventsLimit)
	if req.Offset != nil {
		if *req.Offset < 0 {
			return nil, fail(errBadRequest, "offset %d is negative", *req.Offset)
		}
		offset = *req.Offset
	}
	if req.Limit != nil {
		if *req.Limit < 0 {
			return nil, fail(errBadRequest, "limit %d is negative", *req.Limit)
		}
		limit = min(*req.Limit, maxEventsLimit)
	}
	evs, last, err := s.idx.LedgerEvents(ctx, offset, int(limit))
	if err != nil {
		return nil, err
	}
	if last < 0 {
		return nil, fail(errUnavailable, "the index holds no block yet")
	}
	out := &eventsBlocksResponse{MaxSequence: last, Events: make([]blockEvent, len(evs))}
	for i, e := range evs {
		typ := "block_added"
		if e.Removed {
			typ = "block_removed"
		}
		out.Events[i] = blockEvent{Sequence: e.Seq, BlockIdentifier: s.blockID(e.Height, e.Hash), Type: typ}
	}
	return out, nil
}
