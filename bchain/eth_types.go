package bchain

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"math/big"
)

// Ethereum-type (account model) data as the node backend hands it to the
// index. The types avoid go-ethereum's own so that db and api do not depend
// on it; values are *big.Int because wei amounts overflow uint64.

// EthAddress is a 20-byte account or contract address; its AddrDesc is the
// same 20 bytes.
type EthAddress [20]byte

// AddrDesc returns the descriptor the index files the address under.
func (a EthAddress) AddrDesc() AddrDesc { return AddrDesc(append([]byte(nil), a[:]...)) }

// String renders the address as lowercase 0x-prefixed hex (for logs; the
// API renders EIP-55 through the AddressParser).
func (a EthAddress) String() string { return "0x" + hex.EncodeToString(a[:]) }

// EthBlock is the Ethereum part of a Block (Block.Eth). Block.Txs is empty
// for Ethereum-type chains.
type EthBlock struct {
	BaseFee  *big.Int // nil before London
	GasUsed  uint64
	GasLimit uint64
	// Nonce and Difficulty are the header's, in the node's hex (Blockbook
	// shows them as sent: "0x0000000000000000" and "0x0" after the merge).
	Nonce, Difficulty string
	Miner             EthAddress // fee recipient
	Txs               []EthTx
	// Traced tells whether internal transactions were requested for this
	// block (processInternalTransactions).
	Traced bool
	// TraceError is set when tracing was requested but failed after retries
	// (whole block or some txs): the block is still usable, its txs' Internal
	// are nil where missing, and the indexer should record the block and
	// call EthereumChain.InternalData again later.
	TraceError string
	// Contracts is the token metadata of contracts the block names that the
	// index had no row for when it prepared the block (db.EthIndex
	// PrepareBlock, run in the sync worker's fetch step), so that connecting
	// the block asks the node nothing. Node backends leave it nil.
	Contracts map[EthAddress]*EthContractInfo
	// Avalanche is the C-Chain's own header fields; nil on other chains.
	Avalanche *EthAvalancheHeader
	// Withdrawals are the beacon chain's withdrawals the block credits
	// (EIP-4895, from Shanghai); nil before it and on chains without them.
	Withdrawals []EthWithdrawal
}

// EthWithdrawal is a beacon-chain withdrawal: Amount Gwei credited to
// Address with no tx (EIP-4895).
type EthWithdrawal struct {
	Index, Validator uint64
	Address          EthAddress
	Amount           uint64 // Gwei
}

// EthAvalancheHeader holds the header fields Avalanche's C-Chain adds to
// Ethereum's (coreth): the hash of the block's atomic (cross-chain) data,
// the gas that data used and the block's gas cost (Apricot phase 4). The
// last two are nil in blocks from before that phase.
type EthAvalancheHeader struct {
	ExtDataHash    Hash
	ExtDataGasUsed *big.Int
	BlockGasCost   *big.Int
}

// Ethereum transaction types (EIP-2718).
const (
	EthTxLegacy     = 0
	EthTxAccessList = 1 // EIP-2930
	EthTxDynamicFee = 2 // EIP-1559
	EthTxBlob       = 3 // EIP-4844
	EthTxSetCode    = 4 // EIP-7702
)

// EthTx is one transaction with, for mined ones, its receipt, decoded token
// transfers and internal data.
type EthTx struct {
	Hash  Hash
	Type  uint8
	From  EthAddress
	To    *EthAddress // nil for contract creation
	Nonce uint64
	Value *big.Int
	// GasPrice is the legacy gas price, or for 1559-style txs the fee cap
	// (what eth_getTransaction* reports for pending ones).
	GasPrice             *big.Int
	GasLimit             uint64
	MaxFeePerGas         *big.Int // nil for legacy and 2930
	MaxPriorityFeePerGas *big.Int // nil for legacy and 2930
	MaxFeePerBlobGas     *big.Int // type 3 only
	BlobHashes           []Hash   // type 3 only
	Data                 []byte
	// BlockHash and BlockHeight are zero for pending txs; Position is the
	// index in the block.
	BlockHash   Hash
	BlockHeight uint32
	Position    int

	Receipt   *EthReceipt // nil for pending txs
	Transfers []TokenTransfer
	// Internal is nil when tracing is off or failed for this tx.
	Internal *EthInternalData
	// ChainExtra is a chain's own normalized data of the tx (Tron's
	// chainExtraData payload), served as chainExtraData; nil elsewhere.
	ChainExtra json.RawMessage
}

// Receipt status values; Unknown is for pre-Byzantium receipts, which carry
// a state root instead.
const (
	EthStatusFailure = 0
	EthStatusSuccess = 1
	EthStatusUnknown = -1
)

// EthReceipt is the outcome of a mined tx.
type EthReceipt struct {
	Status            int
	GasUsed           uint64
	EffectiveGasPrice *big.Int
	// BlobGasUsed and BlobGasPrice are set for blob txs (type 3), whose
	// sender also pays BlobGasUsed × BlobGasPrice.
	BlobGasUsed     uint64
	BlobGasPrice    *big.Int
	ContractAddress *EthAddress // set for contract creations
	Logs            []EthLog
	// L1 is the L1 data fee of an OP-stack chain's receipt (Optimism,
	// Base); nil elsewhere and on deposit txs.
	L1 *EthL1Fee
}

// EthL1Fee is what an OP-stack receipt adds: the fee the sender paid for
// posting the tx to L1 (charged on top of gas used × price), the L1 gas
// price and gas it was computed from and, before the Ecotone upgrade, the
// fee scalar as the node renders it (a decimal such as "0.684"). Fields the
// node left out are nil or "".
type EthL1Fee struct {
	Fee       *big.Int
	FeeScalar string
	GasPrice  *big.Int
	GasUsed   *big.Int
}

// Fee is what the sender paid: gas used × effective gas price, plus the
// blob fee of blob txs and the L1 fee of OP-stack txs (nil when the price
// is unknown).
func (r *EthReceipt) Fee() *big.Int {
	if r.EffectiveGasPrice == nil {
		return nil
	}
	fee := new(big.Int).Mul(r.EffectiveGasPrice, new(big.Int).SetUint64(r.GasUsed))
	if r.BlobGasPrice != nil {
		fee.Add(fee, new(big.Int).Mul(r.BlobGasPrice, new(big.Int).SetUint64(r.BlobGasUsed)))
	}
	if l1 := r.L1Fee(); l1 != nil {
		fee.Add(fee, l1)
	}
	return fee
}

// L1Fee is the OP-stack L1 data fee, nil when the receipt has none.
func (r *EthReceipt) L1Fee() *big.Int {
	if r.L1 == nil {
		return nil
	}
	return r.L1.Fee
}

// EthLog is one event log.
type EthLog struct {
	Address EthAddress
	Topics  []Hash
	Data    []byte
	Index   uint // log index in the block
}

// TokenStandard is the token interface a transfer or contract follows.
type TokenStandard int

// Token standards; TokenUnknown is for contracts that match none.
const (
	TokenUnknown TokenStandard = iota
	TokenERC20
	TokenERC721
	TokenERC1155
)

func (s TokenStandard) String() string {
	switch s {
	case TokenERC20:
		return "ERC20"
	case TokenERC721:
		return "ERC721"
	case TokenERC1155:
		return "ERC1155"
	}
	return "unknown"
}

// TokenTransfer is one token movement decoded from a log. A TransferBatch
// log yields one entry per (id, value) pair, all with the same LogIndex.
type TokenTransfer struct {
	Standard TokenStandard
	Contract EthAddress
	From     EthAddress
	To       EthAddress
	Value    *big.Int // amount; 1 for ERC721
	TokenID  *big.Int // nil for ERC20
	LogIndex uint
}

// EthInternalType is the kind of a tx or of an internal transfer.
type EthInternalType int

// Internal transfer and tx kinds.
const (
	EthInternalCall EthInternalType = iota
	EthInternalCreate
	EthInternalSelfDestruct
)

func (t EthInternalType) String() string {
	switch t {
	case EthInternalCall:
		return "call"
	case EthInternalCreate:
		return "create"
	case EthInternalSelfDestruct:
		return "selfdestruct"
	}
	return "unknown"
}

// EthInternalTransfer is value moved by a successful inner call frame, a
// contract created by one (Value may be zero), or a selfdestruct.
type EthInternalTransfer struct {
	Type  EthInternalType
	From  EthAddress
	To    EthAddress
	Value *big.Int
}

// EthInternalData is what the call tracer tells about one tx. Value moved in
// frames that reverted or failed, and in their children, is never included.
type EthInternalData struct {
	Type      EthInternalType // call or create: the top-level frame
	Contracts []EthAddress    // contracts created (top level or inner)
	Transfers []EthInternalTransfer
	Error     string // the top-level frame's error, if the tx failed
}

// EthContractInfo is a contract's token metadata; fields the contract does
// not implement are empty (Decimals is 0 then).
type EthContractInfo struct {
	Contract EthAddress
	Standard TokenStandard
	Name     string
	Symbol   string
	Decimals int
}

// EthFeeTier is one EIP-1559 fee suggestion.
type EthFeeTier struct {
	MaxFeePerGas         *big.Int
	MaxPriorityFeePerGas *big.Int
}

// EthFees are EIP-1559 fee suggestions derived from recent blocks.
type EthFees struct {
	BaseFee *big.Int // expected base fee of the next block
	Low     EthFeeTier
	Medium  EthFeeTier
	High    EthFeeTier
	Instant EthFeeTier
}

// EthBlockTag selects the state a query reads: a block height, or
// EthLatest for the node's tip.
type EthBlockTag int64

// EthLatest reads the state at the latest block; EthPending the state
// with the node's pending txs applied (the next nonce an account uses).
const (
	EthLatest  EthBlockTag = -1
	EthPending EthBlockTag = -2
)

// EthereumChain is what an Ethereum-type node offers beyond BlockChain:
// account state, token metadata, fees and pending txs (Backend.Eth).
type EthereumChain interface {
	// ChainID is the node's chain id (eth_chainId).
	ChainID(ctx context.Context) (*big.Int, error)
	// Balance is the wei balance of addr at the given block.
	Balance(ctx context.Context, addr AddrDesc, at EthBlockTag) (*big.Int, error)
	// Nonce is the number of txs sent by addr as of the given block.
	Nonce(ctx context.Context, addr AddrDesc, at EthBlockTag) (uint64, error)
	// ContractInfo reads name, symbol and decimals (string or bytes32
	// returns), tolerating methods the contract lacks.
	ContractInfo(ctx context.Context, contract AddrDesc) (*EthContractInfo, error)
	// TokenBalance is ERC20 balanceOf(addr) at the latest block.
	TokenBalance(ctx context.Context, addr, contract AddrDesc) (*big.Int, error)
	// EIP1559Fees suggests fees from eth_feeHistory and
	// eth_maxPriorityFeePerGas; ErrUnsupported before London.
	EIP1559Fees(ctx context.Context) (*EthFees, error)
	// GasPrice is the legacy gas price suggestion (eth_gasPrice).
	GasPrice(ctx context.Context) (*big.Int, error)
	// Tx returns a tx by hash, pending or mined (then BlockHash is set),
	// without receipt; ErrTxNotFound when the node does not know it.
	Tx(ctx context.Context, hash Hash) (*EthTx, error)
	// InternalData traces a block again (after EthBlock.TraceError): one
	// entry per tx of the block, in block order.
	InternalData(ctx context.Context, block Hash) ([]*EthInternalData, error)
	// Call runs a read-only call at the latest block (eth_call); a revert
	// is an *RPCError.
	Call(ctx context.Context, call EthCall) ([]byte, error)
	// EstimateGas asks how much gas a tx would use (eth_estimateGas); a
	// tx that would revert is an *RPCError.
	EstimateGas(ctx context.Context, call EthCall) (uint64, error)
	// Receipts returns the receipts of mined txs, in order (batched).
	Receipts(ctx context.Context, txs []Hash) ([]*EthReceipt, error)
	// Multicall runs calls as one Multicall3 aggregate3 eth_call at block
	// at, so all read the same state; each may fail on its own.
	// ErrUnsupported when the chain has no Multicall3 at its canonical
	// address.
	Multicall(ctx context.Context, calls []EthMulticall, at EthBlockTag) ([]EthMulticallResult, error)
}

// EthMulticall is one read-only call of a Multicall batch.
type EthMulticall struct {
	Target AddrDesc
	Data   []byte
}

// EthMulticallResult is one call's outcome: Success false when it
// reverted (Data is then the revert data).
type EthMulticallResult struct {
	Success bool
	Data    []byte
}

// EthTxSource is what an Ethereum-type node may offer besides
// EthereumChain: a tx as the node describes it, for the tx-specific and
// raw tx answers.
type EthTxSource interface {
	// TxSpecific is the tx with its receipt in Blockbook's tx-specific
	// shape ({"tx": …, "receipt": …}); ErrTxNotFound when unknown.
	TxSpecific(ctx context.Context, hash Hash) (json.RawMessage, error)
	// RawTx is the tx's signed serialization; ErrTxNotFound when unknown.
	RawTx(ctx context.Context, hash Hash) ([]byte, error)
}

// EthCall is a call or tx to simulate; empty fields are left out.
type EthCall struct {
	From, To AddrDesc
	Value    *big.Int
	Data     []byte
}
