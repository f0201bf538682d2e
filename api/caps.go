package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/openexplorer/blockbook/bchain"
)

// Capabilities are the optional parts of a chain type's query service. A
// chain type implements only what it has; a part that depends on the node
// or the coin's parser at run time (fee estimation, xpubs) is left nil in
// the service value built without it. A nil field is a capability the
// service does not offer: the fronts answer its calls with NotSupported.
type Capabilities struct {
	// Chain names the chain type in the not-supported answers.
	Chain bchain.ChainType

	Accounts       AccountQueries
	Utxos          UtxoQueries
	BlockFilters   BlockFilterQueries
	MempoolFilters MempoolFilterQueries
	RawBlocks      RawBlockQueries
	RawTxs         RawTxQueries
	TxSpecific     TxSpecificQueries
	Contracts      ContractQueries
	RPCCall        ContractCaller
	FeeEstimates   FeeEstimator
	FeeStats       FeeStatsQueries
	// ProjectedFees answers from the mempool's projected blocks
	// (projected_fees.go).
	ProjectedFees ProjectedFeeQueries
	// Replacements answers from the mempool's RBF history
	// (replacements.go).
	Replacements ReplacementQueries
	// Scripts answers by output script what the Electrum and Esplora
	// fronts need (script_caps.go); Bitcoin-type services offer it.
	Scripts ScriptQueries
	// Pushdata searches the pushdata index (pushdata.go); Bitcoin-type
	// services offer it, and answer that the index is off when it is.
	Pushdata PushdataQueries
	// Runes answers rune entries from the Runes index (runes.go);
	// Bitcoin-type services offer it, and answer that the index is off
	// when it is.
	Runes RuneQueries
	// Tweaks answers the Silent Payments tweak page from the tweak index
	// (silentpayments_page.go); Bitcoin-type services offer it, and answer
	// that the index is off when it is.
	Tweaks TweakPageQueries
	// ChainStats answers block statistics and the difficulty epoch
	// (block_stats.go, difficulty.go); Bitcoin-type services offer it.
	ChainStats ChainStatsQueries
}

// AccountQueries answers xpubs and output descriptors (REST xpub/, the
// websocket's getAccountInfo, the explorer's xpub page). A string that is
// neither gives an error for which IsNotAccount is true.
type AccountQueries interface {
	Account(ctx context.Context, descriptor string, q AddressQuery) (*Address, error)
}

// UtxoQueries lists unspent outputs of an address, an xpub or a descriptor.
type UtxoQueries interface {
	Utxos(ctx context.Context, descriptor string, onlyConfirmed bool, gap int) ([]Utxo, error)
}

// BlockFilterQueries serves the index's Golomb block filters to light
// wallets.
type BlockFilterQueries interface {
	BlockFilters(ctx context.Context, scriptType, lastN, from, to string) (*BlockFilters, error)
	BlockFilter(ctx context.Context, scriptType, blockHash string, m uint64) (*BlockFilterResult, error)
	BlockFiltersBatch(ctx context.Context, scriptType, bestKnownBlockHash string, pageSize int, m uint64) (*BlockFiltersBatchResult, error)
}

// MempoolFilterQueries serves the Golomb filters of pending txs.
type MempoolFilterQueries interface {
	MempoolFilters(ctx context.Context, scriptType string, fromTimestamp int64, m uint64) (*MempoolFilters, error)
}

// RawBlockQueries answers rawblock/{id}: the serialized block.
type RawBlockQueries interface {
	RawBlock(ctx context.Context, id string) (*BlockRaw, error)
}

// RawTxQueries answers rawtx/{txid}: the serialized tx in hex.
type RawTxQueries interface {
	RawTx(ctx context.Context, txid string) (string, error)
}

// TxSpecificQueries answers tx-specific/{txid}: the node's own JSON of a tx.
type TxSpecificQueries interface {
	TxSpecific(ctx context.Context, txid string) (json.RawMessage, error)
}

// ContractQueries answers contract/{address} (getContractInfo), and the
// explorer's token pages (eth_tokens.go).
type ContractQueries interface {
	Contract(ctx context.Context, contract string, q ContractQuery) (*ContractInfo, error)
	TokenSupply(ctx context.Context, contract string) (*Amount, error)
	NFT(ctx context.Context, contract, id string) (*NFT, error)
}

// ContractQuery is getContractInfo's options: Blockbook's protocols
// ("erc4626": the vault's data) and currency (of the token's rates).
type ContractQuery struct {
	Currency  string
	Protocols []string
}

// ContractCaller runs a read-only contract call (the websocket's rpcCall).
type ContractCaller interface {
	RPCCall(ctx context.Context, from, to, data string) (*RPCCallResult, error)
}

// FeeEstimator asks the node's fee estimator.
type FeeEstimator interface {
	// EstimateFee answers estimatefee/{blocks} for a target ParseFeeBlocks
	// accepted.
	EstimateFee(ctx context.Context, blocks int, conservative bool) (*Result, error)
	// FeeEstimates answers estimateFee: one estimate per confirmation
	// target (targets the service's CheckFeeTargets accepted).
	FeeEstimates(ctx context.Context, blocks []int, q FeeQuery) ([]FeeEstimate, error)
}

// LongTermFeeEstimator answers the websocket's longTermFeeRate; a fee
// estimator that lacks it (Ethereum-type) makes that method not supported.
type LongTermFeeEstimator interface {
	LongTermFeeRate(ctx context.Context) (*LongTermFeeRate, error)
}

// FeeStatsQueries answers feestats/{height|hash}.
type FeeStatsQueries interface {
	FeeStats(ctx context.Context, height string) (*FeeStats, error)
}

// Capability names one optional part of a service, for NotSupported.
type Capability int

// The capabilities, one per field of Capabilities.
const (
	CapAccounts Capability = iota
	CapUtxos
	CapBlockFilters
	CapMempoolFilters
	CapRawBlocks
	CapRawTxs
	CapTxSpecific
	CapContracts
	CapRPCCall
	CapFeeEstimates
	CapFeeStats
	CapScripts
	CapProjectedFees
	CapPushdata
	CapChainStats
	CapReplacements
	CapRunes
	CapTweaks
)

var capabilityNames = [...]string{
	CapAccounts: "accounts", CapUtxos: "utxos", CapBlockFilters: "block filters", CapMempoolFilters: "mempool filters",
	CapRawBlocks: "raw blocks", CapRawTxs: "raw txs", CapTxSpecific: "tx-specific data", CapContracts: "contracts",
	CapRPCCall: "rpcCall", CapFeeEstimates: "fee estimation", CapFeeStats: "fee stats", CapScripts: "script queries",
	CapProjectedFees: "projected mempool blocks",
	CapPushdata:      "pushdata search",
	CapChainStats:    "chain statistics",
	CapReplacements:  "RBF replacements",
	CapRunes:         "runes",
	CapTweaks:        "silent payments tweaks",
}

func (c Capability) String() string {
	if c >= 0 && int(c) < len(capabilityNames) {
		return capabilityNames[c]
	}
	return "capability " + strconv.Itoa(int(c))
}

// ErrNotSupported is the cause of every NotSupported answer.
var ErrNotSupported = errors.New("not supported")

// notSupportedTexts are the wire texts of missing capabilities, per chain
// type; clients match on them, so they stay exactly as they always were. A
// text naming a chain type is for the type that never has the capability;
// fee estimation and Bitcoin-type accounts depend on the node and parser.
var notSupportedTexts = map[Capability]map[bchain.ChainType]string{
	CapAccounts: {
		bchain.ChainEthereumType: "Xpubs and descriptors are not supported for Ethereum-type coins",
		bchain.ChainBitcoinType:  "XPUB functionality is not supported",
	},
	CapUtxos:          {bchain.ChainEthereumType: "UTXOs are not supported for Ethereum-type coins"},
	CapBlockFilters:   {bchain.ChainEthereumType: "Block filters are not supported for Ethereum-type coins"},
	CapMempoolFilters: {bchain.ChainEthereumType: "Mempool filters are not supported for Ethereum-type coins"},
	CapRawBlocks:      {bchain.ChainEthereumType: "Raw blocks are not supported for Ethereum-type coins"},
	CapRawTxs:         {bchain.ChainEthereumType: "Raw transactions are not supported for Ethereum-type coins"},
	CapTxSpecific:     {bchain.ChainEthereumType: "Node-specific tx data is not supported for Ethereum-type coins"},
	CapFeeStats:       {bchain.ChainEthereumType: "Fee stats are not supported for Ethereum-type coins"},
	CapScripts:        {bchain.ChainEthereumType: "Script hashes are not supported for Ethereum-type coins"},
	CapChainStats:     {bchain.ChainEthereumType: "Block statistics are not supported for Ethereum-type coins"},
	CapProjectedFees: {
		bchain.ChainBitcoinType:  "Projected mempool blocks are not available: this server does not follow the mempool",
		bchain.ChainEthereumType: "Projected mempool blocks are not supported for Ethereum-type coins",
	},
	CapReplacements: {
		bchain.ChainBitcoinType:  "RBF replacements are not available: this server does not follow the mempool",
		bchain.ChainEthereumType: "RBF replacements are not supported for Ethereum-type coins",
	},
	CapContracts: {bchain.ChainBitcoinType: "getContractInfo is not supported on this coin"}, // Blockbook's, REST and websocket
	CapRPCCall:   {bchain.ChainBitcoinType: "rpcCall is not supported for Bitcoin-type coins"},
	CapPushdata:  {bchain.ChainEthereumType: "Pushdata search is not supported for Ethereum-type coins"},
	CapRunes:     {bchain.ChainEthereumType: "Runes are not supported for Ethereum-type coins"},
	CapTweaks:    {bchain.ChainEthereumType: "Silent Payments are not supported for Ethereum-type coins"},
	CapFeeEstimates: {
		bchain.ChainBitcoinType:  "Fee estimation is not supported for this coin",
		bchain.ChainEthereumType: "Fee estimation is not supported for this coin",
	},
}

// NotSupported is the one answer to a call whose capability the service
// lacks: a user error (HTTP 400) with the capability's wire text.
func (c Capabilities) NotSupported(missing Capability) error {
	msg, ok := notSupportedTexts[missing][c.Chain]
	if !ok {
		msg = fmt.Sprintf("%s not supported for this coin", missing)
	}
	cause := fmt.Errorf("%w: %s", ErrNotSupported, missing)
	if missing == CapAccounts {
		// Calls that take an address too fall back to it (IsNotAccount).
		cause = errors.Join(cause, bchain.ErrNotXpub)
	}
	return &Error{Msg: msg, Err: cause}
}

// maxFeeBlocks is the largest confirmation target nodes estimate for.
const maxFeeBlocks = 1008

// ParseFeeBlocks validates the target of estimatefee/{blocks} (checked
// before the estimator is asked for, so a bad target is reported first).
func ParseFeeBlocks(blocks string) (int, error) {
	n, err := strconv.Atoi(blocks)
	if err != nil || n < 1 || n > maxFeeBlocks {
		return 0, userErr("Invalid number of blocks '%s', use 1 to %d", truncate(blocks, 20), maxFeeBlocks)
	}
	return n, nil
}
