package api

// Wire types of the websocket API (and of REST balancehistory and the fiat
// calls), named and shaped as in blockbook-api.d.ts.

// WsBackendInfo is the node part of getInfo.
type WsBackendInfo struct {
	Version          string `json:"version,omitempty"`
	Subversion       string `json:"subversion,omitempty"`
	ConsensusVersion string `json:"consensus_version,omitempty"`
	Consensus        any    `json:"consensus,omitempty"`
}

// WsInfo answers getInfo.
type WsInfo struct {
	Name       string        `json:"name"`
	Shortcut   string        `json:"shortcut"`
	Network    string        `json:"network"`
	Decimals   int           `json:"decimals"`
	Version    string        `json:"version"`
	BestHeight uint32        `json:"bestHeight"`
	BestHash   string        `json:"bestHash"`
	Block0Hash string        `json:"block0Hash"`
	Testnet    bool          `json:"testnet"`
	Backend    WsBackendInfo `json:"backend"`
}

// LongTermFeeRate answers longTermFeeRate (WsLongTermFeeRateRes): the
// fee rate per 1000 vbytes for a confirmation within Blocks blocks.
type LongTermFeeRate struct {
	FeePerUnit string `json:"feePerUnit"`
	Blocks     uint64 `json:"blocks"`
}

// BalanceHistoryQuery selects the buckets of a balance history.
type BalanceHistoryQuery struct {
	From, To   int64  // unix seconds, inclusive; 0 means unbounded
	GroupBy    uint32 // bucket width in seconds (default 3600)
	Currencies []string
	Gap        int // accounts: the gap limit (default 20)
	// REST marks a query of the REST API, which has its own cap
	// (Limits.MaxHistoryTxsREST).
	REST bool
	// MaxTxs, when set, is a lower cap than the surface's (the explorer's
	// chart, read on every page view).
	MaxTxs int
}

// check refuses list parameters beyond their bounds (currencies).
func (q BalanceHistoryQuery) check() error { return checkCurrencies(q.Currencies) }

// span returns the time range [from, to) and the bucket width with the
// defaults applied.
func (q BalanceHistoryQuery) span() (from, to, groupBy int64) {
	groupBy = int64(q.GroupBy)
	if groupBy == 0 {
		groupBy = DefaultGroupBy
	}
	to = int64(1) << 40
	if q.To > 0 {
		to = q.To
	}
	return max(q.From, 0), to, groupBy
}

// BalanceHistory is one bucket: the txs whose block time falls in
// [Time, Time+groupBy) and what they moved for the address.
type BalanceHistory struct {
	Time       int64              `json:"time"`
	Txs        uint32             `json:"txs"`
	Received   *Amount            `json:"received"`
	Sent       *Amount            `json:"sent"`
	SentToSelf *Amount            `json:"sentToSelf"`
	Rates      map[string]float64 `json:"rates,omitempty"`
}

// MempoolFilters answers getMempoolFilters.
type MempoolFilters struct {
	P         uint8             `json:"P"`
	M         uint64            `json:"M"`
	ZeroedKey bool              `json:"zeroedKey"`
	Entries   map[string]string `json:"entries"`
}

// FiatTicker is a set of rates at one time; -1 marks an unknown rate.
type FiatTicker struct {
	Timestamp int64              `json:"ts,omitempty"`
	Rates     map[string]float64 `json:"rates"`
	Error     string             `json:"error,omitempty"`
	// TokenRates are the tokens' rates in coins, for subscribeFiatRates'
	// tokenRates (not on the wire as such).
	TokenRates map[string]float64 `json:"-"`
}

// FiatTickers answers getFiatRatesForTimestamps and multi-tickers.
type FiatTickers struct {
	Tickers []FiatTicker `json:"tickers"`
}

// AvailableVsCurrencies answers getFiatRatesTickersList and tickers-list.
type AvailableVsCurrencies struct {
	Timestamp  int64    `json:"ts,omitempty"`
	Currencies []string `json:"available_currencies"`
	Error      string   `json:"error,omitempty"`
}
