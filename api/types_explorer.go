package api

// Answers the HTML explorer needs beyond REST: the recent blocks, the
// mempool's txs, and what a search term names.

// BlockSummary is one block in a list of blocks, from the index alone.
type BlockSummary struct {
	Height  uint32 `json:"height"`
	Hash    string `json:"hash"`
	Time    int64  `json:"time"`
	TxCount int    `json:"txCount"`
	Size    int    `json:"size"`
}

// Blocks is a page of blocks, newest first.
type Blocks struct {
	Paging
	Blocks []BlockSummary `json:"blocks"`
}

// MempoolTx is one pending tx in the mempool list.
type MempoolTx struct {
	Txid      string  `json:"txid"`
	FirstSeen int64   `json:"firstSeen"` // unix seconds
	Value     *Amount `json:"value"`     // sum of the outputs
	Fees      *Amount `json:"fees,omitempty"`
	VSize     int     `json:"vsize"`
	Inputs    int     `json:"inputs"`
	Outputs   int     `json:"outputs"`
}

// MempoolTxs is a page of the mempool, newest first.
type MempoolTxs struct {
	Paging
	Size int         `json:"size"` // txs in the mempool
	Txs  []MempoolTx `json:"txs"`
}

// Kinds of objects a search finds.
const (
	SearchBlock   = "block"
	SearchTx      = "tx"
	SearchAddress = "address"
	SearchXpub    = "xpub"
)

// SearchResult names the object a search term denotes: Kind is one of the
// Search* constants and ID its canonical id (a height for blocks searched
// by height, else the hash, txid, address or xpub).
type SearchResult struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
}
