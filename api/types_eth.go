package api

import "encoding/json"

// Wire types of Ethereum-type answers, as blockbook-api.d.ts shapes them.

// MultiTokenValue is one (id, amount) of an ERC1155 transfer or holding.
type MultiTokenValue struct {
	ID    *Amount `json:"id,omitempty"`
	Value *Amount `json:"value,omitempty"`
}

// TokenTransfer is one token movement of a tx. Value is the amount
// (ERC20) or the token id (ERC721, as Blockbook); ERC1155 transfers carry
// MultiTokenValues instead, one per id of a batch.
type TokenTransfer struct {
	Type             string            `json:"type"`
	Standard         string            `json:"standard"`
	From             string            `json:"from"`
	To               string            `json:"to"`
	Contract         string            `json:"contract"`
	Name             string            `json:"name,omitempty"`
	Symbol           string            `json:"symbol,omitempty"`
	Decimals         int               `json:"decimals"`
	Value            *Amount           `json:"value,omitempty"`
	MultiTokenValues []MultiTokenValue `json:"multiTokenValues,omitempty"`
}

// EthereumInternalTransfer is value moved (or a contract created or
// destroyed) by an inner call frame; Type 0 call, 1 create, 2 selfdestruct.
type EthereumInternalTransfer struct {
	Type  int     `json:"type"`
	From  string  `json:"from"`
	To    string  `json:"to"`
	Value *Amount `json:"value"`
}

// EthereumSpecific holds what only Ethereum-type txs have. Status is 1
// success, 0 failure, -1 pending or unknown. GasPrice is the effective gas
// price for mined txs (what the fee was computed with), as in Blockbook.
// The l1* fields are an OP-stack receipt's L1 data fee (Optimism, Base), in
// Blockbook's types: l1Fee and l1GasUsed JSON numbers, l1GasPrice a
// string, l1FeeScalar the node's decimal text; the tx's fees include l1Fee.
// Type is the kind of the tx's top-level call frame from its internal data
// (0 call, left out; 1 create), as Blockbook's: not the envelope type,
// which Blockbook's answers do not carry.
type EthereumSpecific struct {
	Type                 int                        `json:"type,omitempty"`
	CreatedContract      string                     `json:"createdContract,omitempty"`
	Status               int                        `json:"status"`
	Error                string                     `json:"error,omitempty"`
	Nonce                uint64                     `json:"nonce"`
	GasLimit             uint64                     `json:"gasLimit"`
	GasUsed              *uint64                    `json:"gasUsed,omitempty"`
	GasPrice             *Amount                    `json:"gasPrice,omitempty"`
	MaxPriorityFeePerGas *Amount                    `json:"maxPriorityFeePerGas,omitempty"`
	MaxFeePerGas         *Amount                    `json:"maxFeePerGas,omitempty"`
	BaseFeePerGas        *Amount                    `json:"baseFeePerGas,omitempty"`
	L1Fee                json.Number                `json:"l1Fee,omitempty"`
	L1FeeScalar          string                     `json:"l1FeeScalar,omitempty"`
	L1GasPrice           *Amount                    `json:"l1GasPrice,omitempty"`
	L1GasUsed            json.Number                `json:"l1GasUsed,omitempty"`
	Data                 string                     `json:"data,omitempty"`
	ParsedData           *EthereumParsedInputData   `json:"parsedData,omitempty"`
	InternalTransfers    []EthereumInternalTransfer `json:"internalTransfers,omitempty"`
}

// EthereumParsedInputData is a tx's input data decoded by its 4-byte
// selector, as Blockbook's parsedData: the selector (0x hex; "" with the
// name "Transfer" for a tx without data), and when a known signature fits
// the arguments its readable name, its signature and the values.
type EthereumParsedInputData struct {
	MethodID string                     `json:"methodId"`
	Name     string                     `json:"name"`
	Function string                     `json:"function,omitempty"`
	Params   []EthereumParsedInputParam `json:"params,omitempty"`
}

// EthereumParsedInputParam is one decoded argument: its type as the
// signature spells it and its values as text (an array's flattened; none
// for an empty array).
type EthereumParsedInputParam struct {
	Type   string   `json:"type"`
	Values []string `json:"values,omitempty"`
}

// ContractInfo answers contract/{address} and the websocket's
// getContractInfo, and is the contractInfo of a contract's address answer.
// The heights are those the index saw the contract created and
// selfdestructed at; BlockHeight is the index's best height when answered
// (Blockbook's freshness mark).
type ContractInfo struct {
	Type              string `json:"type"`
	Standard          string `json:"standard"`
	Contract          string `json:"contract"`
	Name              string `json:"name"`
	Symbol            string `json:"symbol"`
	Decimals          int    `json:"decimals"`
	CreatedInBlock    uint32 `json:"createdInBlock,omitempty"`
	DestructedInBlock uint32 `json:"destructedInBlock,omitempty"`
	// Rates are a fungible token's current rates (eth_contract_rates.go).
	Rates *ContractInfoRates `json:"rates,omitempty"`
	// Protocols (with protocols=erc4626 on getContractInfo) is the
	// vault's data at BlockHeight.
	Protocols   *ContractInfoProtocols `json:"protocols,omitempty"`
	BlockHeight uint32                 `json:"blockHeight"`
}

// ContractInfoProtocols is Blockbook's protocol data of a contract.
type ContractInfoProtocols struct {
	Erc4626 *Erc4626Token `json:"erc4626,omitempty"`
}

// Erc4626Token is an ERC-4626 vault as Blockbook describes it: its share
// and asset tokens, total assets, and the vault's conversions of one
// whole share and one whole asset unit (all in base units); Error lists
// what could not be read.
type Erc4626Token struct {
	Asset                 *Erc4626TokenMetadata `json:"asset,omitempty"`
	Share                 *Erc4626TokenMetadata `json:"share,omitempty"`
	TotalAssets           *Amount               `json:"totalAssets,omitempty"`
	ConvertToAssets1Share *Amount               `json:"convertToAssets1Share,omitempty"`
	ConvertToShares1Asset *Amount               `json:"convertToShares1Asset,omitempty"`
	PreviewDeposit1Asset  *Amount               `json:"previewDeposit1Asset,omitempty"`
	PreviewRedeem1Share   *Amount               `json:"previewRedeem1Share,omitempty"`
	Error                 string                `json:"error,omitempty"`
}

// Erc4626TokenMetadata names a vault's share or asset token.
type Erc4626TokenMetadata struct {
	Contract string `json:"contract"`
	Name     string `json:"name,omitempty"`
	Symbol   string `json:"symbol,omitempty"`
	Decimals int    `json:"decimals"`
}

// Eip1559Fee is one EIP-1559 fee tier, in wei per gas.
type Eip1559Fee struct {
	MaxFeePerGas         *Amount `json:"maxFeePerGas"`
	MaxPriorityFeePerGas *Amount `json:"maxPriorityFeePerGas"`
}

// Eip1559Fees are the tiers of estimateFee's eip1559 field.
type Eip1559Fees struct {
	BaseFeePerGas *Amount     `json:"baseFeePerGas,omitempty"`
	Low           *Eip1559Fee `json:"low,omitempty"`
	Medium        *Eip1559Fee `json:"medium,omitempty"`
	High          *Eip1559Fee `json:"high,omitempty"`
	Instant       *Eip1559Fee `json:"instant,omitempty"`
}

// FeeQuery is estimateFee's specific parameters.
type FeeQuery struct {
	Conservative bool
	TxSize       int64  // Bitcoin-type: vbytes of the tx to price
	Data         string // Ethereum-type: call data (hex) of the tx to price
	// From, To and Value (wei, decimal or 0x hex) of the Ethereum-type tx
	// to price: with call data, or between two addresses, the gas limit is
	// the node's estimate.
	From, To, Value string
}

// FeeEstimate is one answer of the websocket's estimateFee: per unit
// (Bitcoin-type: per 1000 vbytes; Ethereum-type: wei per gas), per tx
// when the size is known, and the gas limit (Ethereum-type).
type FeeEstimate struct {
	FeePerTx   string       `json:"feePerTx,omitempty"`
	FeePerUnit string       `json:"feePerUnit,omitempty"`
	FeeLimit   string       `json:"feeLimit,omitempty"`
	Eip1559    *Eip1559Fees `json:"eip1559,omitempty"`
}

// StakingPool is an address's part in a staking pool (Blockbook's
// Everstake data), in wei: pending (not yet deposited) and deposited
// balances, the withdrawal requested and the part of it claimable, the
// rewards restaked, the autocompounding balance.
type StakingPool struct {
	Contract                string  `json:"contract"`
	Name                    string  `json:"name"`
	PendingBalance          *Amount `json:"pendingBalance"`
	PendingDepositedBalance *Amount `json:"pendingDepositedBalance"`
	DepositedBalance        *Amount `json:"depositedBalance"`
	WithdrawTotalAmount     *Amount `json:"withdrawTotalAmount"`
	ClaimableAmount         *Amount `json:"claimableAmount"`
	RestakedReward          *Amount `json:"restakedReward"`
	AutocompoundBalance     *Amount `json:"autocompoundBalance"`
}
