package api

// Wire types of REST /api/v2 and the websocket API. Field names, optionality
// and types follow @trezor/blockchain-link-types' blockbook-api.d.ts (checked
// in CI by compiling the golden responses against it); deviations are listed
// in docs/api.md.

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"time"
)

// Amount is an integer amount in the coin's base unit, a decimal string on
// the wire.
type Amount big.Int

// NewAmount returns an Amount of v base units.
func NewAmount(v uint64) *Amount { return (*Amount)(new(big.Int).SetUint64(v)) }

// MarshalJSON renders the amount as a quoted decimal integer.
func (a *Amount) MarshalJSON() ([]byte, error) {
	if a == nil {
		return []byte(`"0"`), nil
	}
	// One allocation: an answer has thousands.
	return a.appendJSON(make([]byte, 0, 22)), nil
}

// appendJSON appends the quoted decimal integer of a (not nil): what
// MarshalJSON returns and the UTXO list's encoder writes.
func (a *Amount) appendJSON(dst []byte) []byte {
	dst = append(dst, '"')
	if b := (*big.Int)(a); b.IsUint64() {
		dst = strconv.AppendUint(dst, b.Uint64(), 10)
	} else {
		dst = b.Append(dst, 10)
	}
	return append(dst, '"')
}

// UnmarshalJSON accepts the quoted decimal form (clients of this package).
func (a *Amount) UnmarshalJSON(b []byte) error {
	s := string(b)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	if _, ok := (*big.Int)(a).SetString(s, 10); !ok {
		return fmt.Errorf("invalid amount %q", s)
	}
	return nil
}

func (a *Amount) String() string {
	if a == nil {
		return "0"
	}
	return (*big.Int)(a).String()
}

// Vin is a tx input.
type Vin struct {
	Txid      string   `json:"txid,omitempty"`
	Vout      uint32   `json:"vout,omitempty"`
	Sequence  int64    `json:"sequence,omitempty"`
	N         int      `json:"n"`
	Addresses []string `json:"addresses,omitempty"`
	IsAddress bool     `json:"isAddress"`
	IsOwn     bool     `json:"isOwn,omitempty"` // in an address's tx list: spends from that address
	Value     *Amount  `json:"value,omitempty"`
	Hex       string   `json:"hex,omitempty"`
	Coinbase  string   `json:"coinbase,omitempty"`
	// Runes (runes=true): the runes of the output it spends.
	Runes []RuneBalance `json:"runes,omitempty"`
}

// Vout is a tx output.
type Vout struct {
	Value       *Amount  `json:"value,omitempty"`
	N           int      `json:"n"`
	Spent       bool     `json:"spent,omitempty"`
	SpentTxID   string   `json:"spentTxId,omitempty"`
	SpentIndex  int      `json:"spentIndex,omitempty"`
	SpentHeight int      `json:"spentHeight,omitempty"`
	Hex         string   `json:"hex,omitempty"`
	Addresses   []string `json:"addresses"`
	IsAddress   bool     `json:"isAddress"`
	IsOwn       bool     `json:"isOwn,omitempty"` // in an address's tx list: pays that address
	// CoinSpecific is what a Bitcoin-derived coin adds to an output (e.g.
	// a CashTokens token); our extension, absent on Bitcoin.
	CoinSpecific any `json:"coinSpecific,omitempty"`
	// Runes (runes=true, the Runes index on): the runes it received; apart
	// from CoinSpecific, which answers carry unasked.
	Runes []RuneBalance `json:"runes,omitempty"`
}

// Tx is a transaction. Unconfirmed txs have BlockHeight -1.
type Tx struct {
	Txid          string `json:"txid"`
	Version       int32  `json:"version,omitempty"`
	LockTime      uint32 `json:"lockTime,omitempty"`
	Vin           []Vin  `json:"vin"`
	Vout          []Vout `json:"vout"`
	BlockHash     string `json:"blockHash,omitempty"`
	BlockHeight   int64  `json:"blockHeight"`
	Confirmations uint32 `json:"confirmations"`
	// Pending Bitcoin-type txs: when they should confirm (Blockbook's).
	ConfirmationETABlocks  uint32  `json:"confirmationETABlocks,omitempty"`
	ConfirmationETASeconds int64   `json:"confirmationETASeconds,omitempty"`
	BlockTime              int64   `json:"blockTime"`
	Size                   int     `json:"size,omitempty"`
	VSize                  int     `json:"vsize,omitempty"`
	Value                  *Amount `json:"value"`
	ValueIn                *Amount `json:"valueIn,omitempty"`
	Fees                   *Amount `json:"fees,omitempty"`
	Hex                    string  `json:"hex,omitempty"`
	Rbf                    bool    `json:"rbf,omitempty"`
	// RunesBurned (runes=true): the runes the tx burned (a cenotaph, an
	// OP_RETURN edict, no output to take them).
	RunesBurned []RuneBalance `json:"runesBurned,omitempty"`
	// CoinSpecificData is the node's own view of a pending tx (Ethereum-type
	// chains: its tx-specific answer), as Blockbook adds it.
	CoinSpecificData json.RawMessage `json:"coinSpecificData,omitempty"`
	// CoinSpecific is what a Bitcoin-derived coin's parser adds to a tx
	// (e.g. a Dash special tx payload); our extension, absent on Bitcoin.
	CoinSpecific any `json:"coinSpecific,omitempty"`
	// ChainExtraData is a chain's own normalized data of the tx (Tron's).
	ChainExtraData *ChainExtraData `json:"chainExtraData,omitempty"`
	// Ethereum-type chains only.
	TokenTransfers   []TokenTransfer   `json:"tokenTransfers,omitempty"`
	EthereumSpecific *EthereumSpecific `json:"ethereumSpecific,omitempty"`
	AddressAliases   AddressAliasesMap `json:"addressAliases,omitempty"`
}

// Paging describes which slice of a long list an answer holds.
type Paging struct {
	Page        int `json:"page,omitempty"`
	TotalPages  int `json:"totalPages,omitempty"`
	ItemsOnPage int `json:"itemsOnPage,omitempty"`
}

// Address is an address or an account (xpub, descriptor) with its history.
type Address struct {
	Paging
	Address            string  `json:"address"`
	Balance            *Amount `json:"balance"`
	TotalReceived      *Amount `json:"totalReceived,omitempty"`
	TotalSent          *Amount `json:"totalSent,omitempty"`
	UnconfirmedBalance *Amount `json:"unconfirmedBalance"`
	UnconfirmedTxs     int     `json:"unconfirmedTxs"`
	// UnconfirmedSending and UnconfirmedReceiving (Ethereum-type chains)
	// split unconfirmedBalance: what pending txs would take from the
	// address (value plus the most they can cost in fees) and pay to it;
	// left out when zero, as Blockbook.
	UnconfirmedSending   *Amount `json:"unconfirmedSending,omitempty"`
	UnconfirmedReceiving *Amount `json:"unconfirmedReceiving,omitempty"`
	Txs                  int     `json:"txs"`
	// AddrTxCount (accounts only) sums the tx counts of the account's
	// addresses, a tx touching two of them counting twice (Blockbook's).
	AddrTxCount int `json:"addrTxCount,omitempty"`
	// Ethereum-type chains only: txs as sender or recipient, txs with
	// internal transfers, the node's nonce, and the contract's own info
	// when the address is a contract the index knows.
	NonTokenTxs int    `json:"nonTokenTxs,omitempty"`
	InternalTxs int    `json:"internalTxs,omitempty"`
	Nonce       string `json:"nonce,omitempty"`
	// ConfirmedNonce is the nonce as of the latest block (mined txs only),
	// given when asked for (confirmedNonce); Nonce counts pending txs too.
	ConfirmedNonce string        `json:"confirmedNonce,omitempty"`
	ContractInfo   *ContractInfo `json:"contractInfo,omitempty"`
	// Erc20Contract repeats an ERC20 contract's ContractInfo under
	// Blockbook's older (deprecated) name, as Blockbook does.
	Erc20Contract *ContractInfo `json:"erc20Contract,omitempty"`
	Transactions  []*Tx         `json:"transactions,omitempty"`
	Txids         []string      `json:"txids,omitempty"`
	// UsedTokens and Tokens (accounts only): how many derived addresses
	// have txs, and the derived addresses the tokens parameter selects.
	UsedTokens int     `json:"usedTokens,omitempty"`
	Tokens     []Token `json:"tokens,omitempty"`
	// SecondaryValue is the balance in the requested fiat currency
	// (secondary / secondaryCurrency), when rates are known.
	SecondaryValue float64 `json:"secondaryValue,omitempty"`
	// Ethereum-type chains, with secondary: the tokens' values summed, in
	// coins and in the secondary currency, and the balance plus them.
	TokensBaseValue      float64 `json:"tokensBaseValue,omitempty"`
	TokensSecondaryValue float64 `json:"tokensSecondaryValue,omitempty"`
	TotalBaseValue       float64 `json:"totalBaseValue,omitempty"`
	TotalSecondaryValue  float64 `json:"totalSecondaryValue,omitempty"`
	// AddressAliases (Ethereum-type chains, address_aliases): names of the
	// addresses in the listed txs (eth_alias.go).
	AddressAliases AddressAliasesMap `json:"addressAliases,omitempty"`
	// StakingPools (Ethereum-type chains with a staking pool configured):
	// the address's part in each pool, where it has one.
	StakingPools []StakingPool `json:"stakingPools,omitempty"`
	// ChainExtraData is a chain's own data of the account (Tron's
	// resources and staking).
	ChainExtraData *ChainExtraData `json:"chainExtraData,omitempty"`
	// Runes (Bitcoin networks, runes=true, the Runes index on): the
	// address's confirmed rune balances. Only when asked: wallets that
	// read every token entry of a Bitcoin account as a token
	// (@trezor/blockchain-link) would otherwise change their accounts.
	Runes *[]RuneBalance `json:"runes,omitempty"`
	// UnconfirmedRunes (with Runes): what pending txs add to them, per
	// rune, signed as unconfirmedBalance is ("-5": 5 units leave).
	UnconfirmedRunes *[]RuneBalance `json:"unconfirmedRunes,omitempty"`
}

// Utxo is an unspent output.
type Utxo struct {
	Txid          string  `json:"txid"`
	Vout          uint32  `json:"vout"`
	Value         *Amount `json:"value"`
	Height        int64   `json:"height,omitempty"`
	Confirmations uint32  `json:"confirmations"`
	// Address and Path: which derived address of an account holds it.
	Address  string `json:"address,omitempty"`
	Path     string `json:"path,omitempty"`
	LockTime uint32 `json:"lockTime,omitempty"` // pending outputs only, as Blockbook
	Coinbase bool   `json:"coinbase,omitempty"`
	// Runes (runes=true): the output's runes.
	Runes []RuneBalance `json:"runes,omitempty"`
}

// Token is an account's derived address (type XPUBAddress) or, on
// Ethereum-type chains, a token contract an address holds or held; the
// balance fields come with details=tokenBalances and more.
type Token struct {
	Type      string  `json:"type"`
	Standard  string  `json:"standard"`
	Name      string  `json:"name"`
	Path      string  `json:"path,omitempty"`
	Contract  string  `json:"contract,omitempty"`
	Transfers int     `json:"transfers"`
	Symbol    string  `json:"symbol,omitempty"`
	Decimals  int     `json:"decimals"`
	Balance   *Amount `json:"balance,omitempty"`
	// BaseValue and SecondaryValue (ERC20 balances, with secondary): the
	// balance in coins and in the secondary currency, when the token's
	// rate is known (api/fiat_tokens.go).
	BaseValue        float64           `json:"baseValue,omitempty"`
	SecondaryValue   float64           `json:"secondaryValue,omitempty"`
	IDs              []*Amount         `json:"ids,omitempty"`
	MultiTokenValues []MultiTokenValue `json:"multiTokenValues,omitempty"`
	TotalReceived    *Amount           `json:"totalReceived,omitempty"`
	TotalSent        *Amount           `json:"totalSent,omitempty"`
	// Protocols (with protocols=erc4626 on an address) marks an ERC-4626
	// vault's share token: ["erc4626"].
	Protocols []string `json:"protocols,omitempty"`
}

// BlockInfo is a block header as the API shows it.
type BlockInfo struct {
	Hash          string `json:"hash"`
	Prev          string `json:"previousBlockHash,omitempty"`
	Next          string `json:"nextBlockHash,omitempty"`
	Height        uint32 `json:"height"`
	Confirmations int    `json:"confirmations"`
	Size          int    `json:"size"`
	Time          int64  `json:"time,omitempty"`
	// Version is a JSON number on Blockbook's wire (the typings say string).
	Version    json.Number `json:"version"`
	MerkleRoot string      `json:"merkleRoot"`
	Nonce      string      `json:"nonce"`
	Bits       string      `json:"bits"`
	Difficulty string      `json:"difficulty"`
}

// Block is a block with a page of its txs.
type Block struct {
	Paging
	BlockInfo
	TxCount        int               `json:"txCount"`
	Txs            []*Tx             `json:"txs,omitempty"`
	AddressAliases AddressAliasesMap `json:"addressAliases,omitempty"`
}

// BlockRaw is a serialized block.
type BlockRaw struct {
	Hex string `json:"hex"`
}

// BlockIndex answers block-index/{height}.
type BlockIndex struct {
	BlockHash string `json:"blockHash"`
}

// Result wraps single-value answers (sendtx, estimatefee).
type Result struct {
	Result string `json:"result"`
}

// FeeStats summarizes the fees paid in one block.
type FeeStats struct {
	TxCount         int       `json:"txCount"`
	TotalFeesSat    *Amount   `json:"totalFeesSat"`
	AverageFeePerKb int64     `json:"averageFeePerKb"`
	DecilesFeePerKb [11]int64 `json:"decilesFeePerKb"`
}

// BlockbookInfo is this server's part of the status answer.
type BlockbookInfo struct {
	Coin        string `json:"coin"`
	Network     string `json:"network"`
	Host        string `json:"host"`
	Version     string `json:"version"`
	GitCommit   string `json:"gitCommit"`
	BuildTime   string `json:"buildTime"`
	SyncMode    bool   `json:"syncMode"`
	InitialSync bool   `json:"initialSync"`
	InSync      bool   `json:"inSync"`
	// SyncError is why sync is stopped or paused (e.g. "no space left on
	// device"); not in Blockbook, whose status has no such field.
	SyncError       string    `json:"syncError,omitempty"`
	BestHeight      uint32    `json:"bestHeight"`
	LastBlockTime   time.Time `json:"lastBlockTime"`
	InSyncMempool   bool      `json:"inSyncMempool"`
	LastMempoolTime time.Time `json:"lastMempoolTime"`
	MempoolSize     int       `json:"mempoolSize"`
	Decimals        int       `json:"decimals"`
	DbSize          int64     `json:"dbSize"`
	// Fiat rates, as Blockbook names them: configured, and the times of
	// the current and of the newest daily ticker.
	HasFiatRates bool `json:"hasFiatRates,omitempty"`
	// HasTokenFiatRates: token rates are configured (Ethereum-type chains);
	// HistoricalTokenFiatRatesTime is the newest daily ticker with token
	// rates.
	HasTokenFiatRates            bool       `json:"hasTokenFiatRates,omitempty"`
	CurrentFiatRatesTime         *time.Time `json:"currentFiatRatesTime,omitempty"`
	HistoricalFiatRatesTime      *time.Time `json:"historicalFiatRatesTime,omitempty"`
	HistoricalTokenFiatRatesTime *time.Time `json:"historicalTokenFiatRatesTime,omitempty"`
	// SupportedStakingPools (Ethereum-type chains): the configured pools,
	// "<name>/<contract>" (api/eth_staking.go).
	SupportedStakingPools []string `json:"supportedStakingPools,omitempty"`
	About                 string   `json:"about"`
	// Replica is set on a replica (-replica): an API-only process reading
	// the index a primary process writes. Not in Blockbook's answer.
	Replica *ReplicaInfo `json:"replica,omitempty"`
	// SyncProgress is set while the index is behind the node. Not in
	// Blockbook's answer.
	SyncProgress *SyncProgress `json:"syncProgress,omitempty"`
}

// SyncProgress is how far a sync has to go, and how fast it goes.
type SyncProgress struct {
	BlocksLeft int `json:"blocksLeft"`
	// BlocksPerSecond is the connect rate over the last minute.
	BlocksPerSecond float64 `json:"blocksPerSecond"`
	// EtaSeconds is BlocksLeft at that rate; absent while nothing was
	// connected in the last minute.
	EtaSeconds *int64 `json:"etaSeconds,omitempty"`
}

// ReplicaInfo is how far a replica trails its primary.
type ReplicaInfo struct {
	// LastCatchUp is when the replica last read the primary's writes;
	// SecondsSinceCatchUp is the time since then.
	LastCatchUp         time.Time `json:"lastCatchUp"`
	SecondsSinceCatchUp float64   `json:"secondsSinceCatchUp"`
	// BlocksBehindNode is the node's tip height minus the replica's: the
	// primary's sync lag plus the replica's own.
	BlocksBehindNode uint32 `json:"blocksBehindNode"`
	// Error is why the last catch-up failed, if it did.
	Error string `json:"error,omitempty"`
}

// BackendInfo is the node's part of the status answer.
type BackendInfo struct {
	Error           string  `json:"error,omitempty"`
	Chain           string  `json:"chain,omitempty"`
	Blocks          int     `json:"blocks,omitempty"`
	Headers         int     `json:"headers,omitempty"`
	BestBlockHash   string  `json:"bestBlockHash,omitempty"`
	Difficulty      string  `json:"difficulty,omitempty"`
	SizeOnDisk      int64   `json:"sizeOnDisk,omitempty"`
	Version         string  `json:"version,omitempty"`
	Subversion      string  `json:"subversion,omitempty"`
	ProtocolVersion string  `json:"protocolVersion,omitempty"`
	TimeOffset      float64 `json:"timeOffset,omitempty"`
	Warnings        string  `json:"warnings,omitempty"`
	// ConsensusVersion is the consensus client's version (consensusNodeVersion).
	ConsensusVersion string `json:"consensus_version,omitempty"`
	Consensus        any    `json:"consensus,omitempty"`
}

// SystemInfo is the status answer of /api and /api/v2.
type SystemInfo struct {
	Blockbook *BlockbookInfo `json:"blockbook"`
	Backend   *BackendInfo   `json:"backend"`
}
