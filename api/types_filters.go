package api

// Wire types of the block filter calls: REST block-filters and the
// websocket's getBlockFilter and getBlockFiltersBatch, shaped as Blockbook
// answers them (the typings in blockbook-api.d.ts do not describe them).
// Every answer states the parameters the filters were built with, so that a
// client can decode them: P, M = 2^P, and whether the SipHash key is zero.

// BlockFilterEntry is one block of a block-filters answer. Filter is the
// hex-encoded filter, empty when no script of the block qualifies (and for
// heights the index does not hold, whose blockHash is empty too).
type BlockFilterEntry struct {
	BlockHash string `json:"blockHash"`
	Filter    string `json:"filter"`
}

// BlockFilters answers REST /api/v2/block-filters/: the filters keyed by
// block height (a decimal string on the wire).
type BlockFilters struct {
	P            uint8                    `json:"P"`
	M            uint64                   `json:"M"`
	ZeroedKey    bool                     `json:"zeroedKey"`
	BlockFilters map[int]BlockFilterEntry `json:"blockFilters"`
}

// BlockFilterResult answers getBlockFilter.
type BlockFilterResult struct {
	P           uint8  `json:"P"`
	M           uint64 `json:"M"`
	ZeroedKey   bool   `json:"zeroedKey"`
	BlockFilter string `json:"blockFilter"`
}

// BlockFiltersBatchResult answers getBlockFiltersBatch: one
// "height:blockHash:filter" string per block after the client's best known
// block, in height order (filter empty when no script qualifies).
type BlockFiltersBatchResult struct {
	P                 uint8    `json:"P"`
	M                 uint64   `json:"M"`
	ZeroedKey         bool     `json:"zeroedKey"`
	BlockFiltersBatch []string `json:"blockFiltersBatch"`
}
