package bchain

import (
	"context"
	"encoding/json"
)

// The node capabilities below are small on purpose: a coin plugin implements
// what its node can do, and each consumer asks only for what it uses.

// BlockChain is what every chain type's node offers the sync worker and API.
type BlockChain interface {
	// BestBlock returns the height and hash of the node's active tip.
	BestBlock(ctx context.Context) (uint32, Hash, error)
	// BlockHash returns the hash of the active-chain block at height, or
	// ErrBlockNotFound above the tip.
	BlockHash(ctx context.Context, height uint32) (Hash, error)
	// BlockHeight returns the height of a block the node knows by hash
	// (active chain or not), or ErrBlockNotFound.
	BlockHeight(ctx context.Context, hash Hash) (uint32, error)
	// Block fetches and decodes a block. height is the caller's expectation
	// and is stored into the result.
	Block(ctx context.Context, hash Hash, height uint32) (*Block, error)
	// ChainInfo describes the node and its chain for status pages.
	ChainInfo(ctx context.Context) (*ChainInfo, error)
}

// RawBlockSource returns a block exactly as the node serializes it.
type RawBlockSource interface {
	RawBlock(ctx context.Context, hash Hash) ([]byte, error)
}

// TxSource returns transactions the node knows (mempool or chain).
type TxSource interface {
	// RawTx returns the serialized tx. inBlock, when not zero, is the block
	// the index says holds it, which lets nodes without a tx index find it.
	RawTx(ctx context.Context, txid Hash, inBlock Hash) ([]byte, error)
	// TxSpecific returns the node's own JSON description of the tx.
	TxSpecific(ctx context.Context, txid Hash, inBlock Hash) (json.RawMessage, error)
}

// TxBroadcaster relays a signed transaction to the network.
type TxBroadcaster interface {
	// SendRawTx returns the txid, or an *RPCError carrying the node's reject reason.
	SendRawTx(ctx context.Context, raw []byte) (Hash, error)
}

// FeeEstimator estimates the fee rate for confirmation within blocks blocks.
type FeeEstimator interface {
	// EstimateFee returns a fee rate in base units per 1000 virtual bytes.
	EstimateFee(ctx context.Context, blocks int, conservative bool) (int64, error)
}

// BlockNotifier pushes a signal whenever the node may have a new block. It is
// a hint only: the sync worker also polls, and collapses bursts of signals.
type BlockNotifier interface {
	// Run delivers signals until ctx ends. It reconnects on its own and
	// returns only when ctx is done or it cannot work at all.
	Run(ctx context.Context, signal func()) error
}

// MempoolSource lists the transactions waiting in the node's mempool.
type MempoolSource interface {
	// MempoolTxids returns the txids the node holds in its mempool now.
	MempoolTxids(ctx context.Context) ([]Hash, error)
}

// TxNotifier pushes the txid of each transaction the node accepts into its
// mempool. Like BlockNotifier it is a hint: the mempool also resyncs
// periodically, so a lost notification costs latency, never correctness.
type TxNotifier interface {
	// Run delivers txids until ctx ends, reconnecting on its own.
	Run(ctx context.Context, signal func(txid Hash)) error
}

// AddressParser converts between user-facing addresses and descriptors.
type AddressParser interface {
	// AddrDescFromAddress validates addr for this coin and network.
	AddrDescFromAddress(addr string) (AddrDesc, error)
	// AddressesFromAddrDesc renders a descriptor; searchable tells whether
	// the result is an address a user can look up (API field isAddress).
	AddressesFromAddrDesc(desc AddrDesc) (addrs []string, searchable bool, err error)
}

// UtxoParser decodes Bitcoin-type raw data and classifies output scripts.
type UtxoParser interface {
	AddressParser
	// ParseBlock decodes a raw block; Height is left for the caller to set.
	ParseBlock(raw []byte) (*Block, error)
	// ParseTx decodes one raw transaction.
	ParseTx(raw []byte) (*Tx, error)
	// OutputAddrDesc returns the descriptor an output is indexed under, or
	// nil for outputs that are never indexed (OP_RETURN, empty script).
	OutputAddrDesc(script []byte) AddrDesc
	// OutputAddresses renders an output script for display, including the
	// "OP_RETURN ..." pseudo-address of data outputs.
	OutputAddresses(script []byte) (addrs []string, searchable bool)
}
