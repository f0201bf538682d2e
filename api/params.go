package api

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/openexplorer/blockbook/bchain"
)

// Details is how much of an account's history an answer includes.
type Details int

const (
	DetailsBasic Details = iota
	DetailsTokens
	DetailsTokenBalances
	DetailsTxids
	DetailsTxsLight
	DetailsTxs
)

// ParseDetails maps the details parameter; like Blockbook, anything unknown
// means the default, txids.
func ParseDetails(s string) Details {
	switch s {
	case "basic":
		return DetailsBasic
	case "tokens":
		return DetailsTokens
	case "tokenBalances":
		return DetailsTokenBalances
	case "txslight":
		return DetailsTxsLight
	case "txs":
		return DetailsTxs
	}
	return DetailsTxids
}

// Filter selects an address's txs by where the address appears.
type Filter struct {
	Inputs, Outputs bool // only txs where it is in an input / output
	Vout            int  // >= 0: only txs paying it at this output index
}

// NoFilter selects every tx.
var NoFilter = Filter{Vout: -1}

// ParseFilter maps the filter parameter: inputs, outputs or an output index.
// Anything else means no filter, as in Blockbook.
func ParseFilter(s string) Filter {
	switch s {
	case "inputs":
		return Filter{Inputs: true, Vout: -1}
	case "outputs":
		return Filter{Outputs: true, Vout: -1}
	}
	if v, err := strconv.ParseUint(s, 10, 31); err == nil {
		return Filter{Vout: int(v)}
	}
	return NoFilter
}

func (f Filter) active() bool { return f.Inputs || f.Outputs || f.Vout >= 0 }

// matches reports whether an address appearing at indexes passes the filter
// (index v >= 0 is output v, v < 0 is input ^v).
func (f Filter) matches(indexes []int32) bool {
	if !f.active() {
		return true
	}
	for _, i := range indexes {
		if f.Inputs && i < 0 || f.Outputs && i >= 0 || f.Vout >= 0 && int(i) == f.Vout {
			return true
		}
	}
	return false
}

// AddressQuery is the parsed query of address and xpub requests.
type AddressQuery struct {
	Page, PageSize int
	// FromHeight and ToHeight bound the block heights of listed txs
	// (inclusive); zero means unbounded.
	FromHeight, ToHeight uint32
	Details              Details
	Filter               Filter
	// Secondary is a fiat currency to value the balance in (lower case).
	Secondary string
	// Accounts only: which derived addresses to list (tokens) and the gap
	// limit (0: the default, 20).
	Tokens Tokens
	Gap    int
	// Contract (Ethereum-type chains) limits the listed txs and tokens to
	// those of one token contract (REST contract, websocket
	// contractFilter); Bitcoin-type chains ignore it, as Blockbook does.
	Contract string
	// ConfirmedNonce (Ethereum-type chains) asks for the nonce as of the
	// latest block besides the pending one (REST and websocket
	// confirmedNonce).
	ConfirmedNonce bool
	// Runes (Bitcoin networks with the Runes index) asks for the
	// address's rune balances; off by default (see Address.Runes).
	Runes bool
	// ListRunes (the explorer's; no REST or websocket parameter) adds to
	// the listed txs the runes of their inputs and outputs, read in the
	// list's view from the rows the list read (runes_list.go).
	ListRunes bool
	// Protocols (Ethereum-type chains) asks for protocol marks on the
	// tokens, Blockbook's protocols ("erc4626"); elsewhere it is refused.
	Protocols []string
}

// Tokens selects the derived addresses an account answer lists.
type Tokens int

const (
	TokensNonzero Tokens = iota // with a balance (REST default)
	TokensUsed                  // with txs
	TokensDerived               // every derived address (websocket default)
)

// ParseTokens maps the tokens parameter; anything else gives def, as in
// Blockbook.
func ParseTokens(s string, def Tokens) Tokens {
	switch s {
	case "nonzero":
		return TokensNonzero
	case "used":
		return TokensUsed
	case "derived":
		return TokensDerived
	}
	return def
}

// ParseAddressQuery reads page, pageSize, from, to, details, filter,
// secondary, and for accounts tokens and gap.
// Numbers that do not parse count as absent and out-of-range values are
// clamped later, matching Blockbook's lenient behaviour.
func ParseAddressQuery(q url.Values) AddressQuery {
	return AddressQuery{
		Page:       ParseInt(q.Get("page")),
		PageSize:   ParseInt(q.Get("pageSize")),
		FromHeight: parseUint32(q.Get("from")),
		ToHeight:   parseUint32(q.Get("to")),
		Details:    ParseDetails(q.Get("details")),
		Filter:     ParseFilter(q.Get("filter")),
		Secondary:  strings.ToLower(strings.TrimSpace(q.Get("secondary"))),
		Tokens:     ParseTokens(q.Get("tokens"), TokensNonzero),
		Gap:        ParseInt(q.Get("gap")),
		Contract:   strings.TrimSpace(q.Get("contract")),
		// As Blockbook: strconv.ParseBool, anything else is false.
		ConfirmedNonce: ParseBool(q.Get("confirmedNonce")),
		Runes:          ParseBool(q.Get("runes")),
		Protocols:      ParseProtocols(q["protocols"]),
	}
}

// ParseProtocols reads Blockbook's protocols parameter: repeated or
// comma-separated names, blanks dropped (nil when none).
func ParseProtocols(values []string) []string {
	var out []string
	for _, v := range values {
		for p := range strings.SplitSeq(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

func ParseBool(s string) bool {
	b, _ := strconv.ParseBool(s)
	return b
}

// ParseInt parses a decimal int; garbage and overflow give 0.
func ParseInt(s string) int {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 32)
	if err != nil {
		return 0
	}
	return int(v)
}

func parseUint32(s string) uint32 {
	v, err := strconv.ParseUint(strings.TrimSpace(s), 10, 32)
	if err != nil {
		return 0
	}
	return uint32(v)
}

// clampPaging returns the page (1-based) and page size to use for a list of
// total items: pageSize defaults to and is capped at maxPageSize, the page is kept
// within 1..last page.
func clampPaging(page, pageSize, total, maxPageSize int) (int, int, int) {
	if pageSize <= 0 || pageSize > maxPageSize {
		pageSize = maxPageSize
	}
	// At least one page, as Blockbook's paging counts an empty list.
	totalPages := max((total+pageSize-1)/pageSize, 1)
	if page > totalPages {
		page = totalPages
	}
	if page < 1 {
		page = 1
	}
	return page, pageSize, totalPages
}

// BlockID is a parsed block height or hash.
type BlockID struct {
	IsHeight bool
	Height   uint32
	Hash     bchain.Hash
}

// ParseBlockID accepts a decimal height or a 64-hex-character hash.
func ParseBlockID(s string) (BlockID, error) {
	if len(s) > 0 && len(s) <= 10 && strings.Trim(s, "0123456789") == "" {
		h, err := strconv.ParseUint(s, 10, 32)
		if err == nil {
			return BlockID{IsHeight: true, Height: uint32(h)}, nil
		}
	}
	hash, err := bchain.ParseHash(strings.ToLower(s))
	if err != nil {
		return BlockID{}, userErr("Invalid block height or hash '%s'", truncate(s, 100))
	}
	return BlockID{Hash: hash}, nil
}

// parseTxid validates a txid parameter.
func parseTxid(s string) (bchain.Hash, error) {
	h, err := bchain.ParseHash(strings.ToLower(s))
	if err != nil {
		return h, userErr("Invalid txid '%s': %v", truncate(s, 100), err)
	}
	return h, nil
}

// truncate keeps error messages short when users send huge parameters.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Bounds on list parameters, shared by REST and the websocket so that one
// request cannot make the server build an answer of unbounded size.
// Blockbook has none of these; docs/api.md lists them as deviations.
const (
	// MaxFiatTimestamps caps the timestamps of one multi-tickers or
	// getFiatRatesForTimestamps request: a year of daily rates for ~27
	// years, far beyond what a wallet's history needs per call.
	MaxFiatTimestamps = 10_000
	// MaxCurrencies caps a list of fiat currencies (fiatcurrency,
	// currencies); the rate provider knows fewer than a hundred.
	MaxCurrencies = 200
)

// CheckListLen refuses a list parameter of n items (what names them) when
// n exceeds limit, with one message for every such bound.
func CheckListLen(what string, n, limit int) error {
	if n > limit {
		return userErr("Too many %s: %d, at most %d per request", what, n, limit)
	}
	return nil
}

// checkFiatTimestamps refuses an empty or too long list of timestamps.
func checkFiatTimestamps(timestamps []int64) error {
	if len(timestamps) == 0 {
		return userErr("No timestamps provided")
	}
	return CheckListLen("timestamps", len(timestamps), MaxFiatTimestamps)
}

// checkCurrencies refuses a too long list of currencies.
func checkCurrencies(currencies []string) error {
	return CheckListLen("currencies", len(currencies), MaxCurrencies)
}

// MaxBlockHeight is the largest height a block can have (heights are
// uint32 in the index, as in Blockbook).
const MaxBlockHeight = int64(^uint32(0))

// CheckBlockHeight refuses a height no block can have; a valid height
// beyond the tip is not an error.
func CheckBlockHeight(h int64) error {
	if h < 0 || h > MaxBlockHeight {
		return userErr("Block height %d is out of range, it must be 0 to %d", h, MaxBlockHeight)
	}
	return nil
}
