package bchain

import (
	"context"
	"encoding/json"
	"errors"
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

// MinFeeSource gives the lowest fee rate the node's mempool accepts now
// (the floor of fee recommendations).
type MinFeeSource interface {
	// MempoolMinFee returns base units per 1000 vbytes.
	MempoolMinFee(ctx context.Context) (int64, error)
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

// ShieldedPools is a UtxoParser capability: the coin's txs may move value
// to or from shielded pools (Zcash's), which the index does not record, so
// a tx's inputs minus its outputs is not its fee where the tx itself is not
// at hand. Parsers of coins without shielded pools do not implement it.
type ShieldedPools interface {
	HasShieldedPools() bool
}

// HasShieldedPools reports whether p's coin has shielded pools: whether p
// implements ShieldedPools and says so.
func HasShieldedPools(p UtxoParser) bool {
	sp, ok := p.(ShieldedPools)
	return ok && sp.HasShieldedPools()
}

// XpubScriptType is the output script an account's addresses use.
type XpubScriptType int

// Script types of accounts: BIP44 P2PKH, BIP49 P2SH-P2WPKH, BIP84 P2WPKH and
// BIP86 P2TR (key path only).
const (
	XpubP2PKH XpubScriptType = iota + 1
	XpubP2SHP2WPKH
	XpubP2WPKH
	XpubP2TR
)

// XpubDescriptor is a parsed account: an extended public key (or an output
// descriptor holding one) with the script type and chains to derive.
type XpubDescriptor struct {
	// Descriptor is the string the client sent; answers echo it.
	Descriptor string
	// Xpub is the extended public key inside it.
	Xpub       string
	ScriptType XpubScriptType
	// BasePath is the account's derivation path, e.g. m/84'/1'/0' (or
	// unknown/<child> when the key's depth is not an account's).
	BasePath string
	// Changes are the chains to scan: receive (0) and change (1) unless the
	// descriptor names others.
	Changes []uint32
	// Key is the parser's own decoded form of Xpub, opaque to callers.
	Key any
}

// XpubParser reads accounts (extended public keys and output descriptors)
// and derives their addresses. Chains without accounts have none.
type XpubParser interface {
	// ParseXpub parses s. The error wraps ErrNotXpub when s is not shaped
	// like an account at all (callers may then try it as an address), and
	// ErrInvalidXpub with a message for the user when it is a malformed or
	// refused account (a private key, another network's key, a bad checksum).
	ParseXpub(s string) (*XpubDescriptor, error)
	// DeriveAddrDescs returns the descriptors of the addresses at indexes
	// [from, to) of chain change.
	DeriveAddrDescs(d *XpubDescriptor, change, from, to uint32) ([]AddrDesc, error)
}

var (
	// ErrNotXpub: the string is not shaped like an xpub or a descriptor.
	ErrNotXpub = errors.New("not an xpub or descriptor")
	// ErrInvalidXpub: an xpub or descriptor that cannot be used.
	ErrInvalidXpub = errors.New("invalid xpub or descriptor")
)
