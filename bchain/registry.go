package bchain

import (
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// CoinParams are the per-coin facts the index and API need.
type CoinParams struct {
	Name     string // coin_name, e.g. "Bitcoin"; also stored in the index
	Shortcut string // e.g. "BTC"
	Label    string // e.g. "Bitcoin"
	Network  string // chain network name stored in the index, e.g. "mainnet"
	// APINetwork is what status answers call the network: the config's
	// "network" key, or the shortcut (Blockbook's behaviour).
	APINetwork string
	Testnet    bool
	Decimals   int
	Slip44     uint32
	// Genesis is the hash of block 0, reported as block0Hash.
	Genesis Hash
	// Default ports of the public and internal servers (Blockbook's).
	PublicPort, InternalPort int
	// EthKind is an Ethereum-type network's family (EthKindL1 for every
	// other chain type).
	EthKind EthChainKind
	// MaxBlockWeight is a Bitcoin-type chain's block capacity in weight
	// units (4 × the size limit for chains without segwit): what the
	// mempool's projected blocks fill.
	MaxBlockWeight uint32
	// RetargetBlocks is the number of blocks between difficulty
	// retargets and TargetSpacing the intended seconds between blocks,
	// for a chain that retargets at fixed intervals (Bitcoin's 2016 and
	// 600); 0 for the others.
	RetargetBlocks uint32
	TargetSpacing  int64
	// DuplicateCoinbases are the chain's coinbases whose txid a later
	// coinbase repeated before BIP30 forbade it (Bitcoin mainnet: two).
	DuplicateCoinbases []DuplicateCoinbase
}

// DuplicateCoinbase is a coinbase mined at Height whose txid the coinbase
// of the block at Later repeats. The index keeps one txAddresses row per
// txid (the later block's replaces the earlier's), and the node's UTXO set
// lost the earlier coinbase's outputs when the later one overwrote them:
// they were never spent and never can be. Both txs are the same bytes, so
// their outputs are the same.
type DuplicateCoinbase struct {
	Txid          Hash
	Height, Later uint32
}

// Backend is what a coin plugin assembles from the configuration: the node
// capabilities it supports, each as its own interface. A nil field means the
// capability is absent; consumers check before use.
type Backend struct {
	Type   ChainType
	Params CoinParams

	Chain     BlockChain
	Addresses AddressParser
	RawBlocks RawBlockSource
	Txs       TxSource
	Broadcast TxBroadcaster
	Fees      FeeEstimator
	MinFee    MinFeeSource
	Notifier  BlockNotifier
	// Mempool and TxNotifier follow the node's mempool (TxNotifier may be
	// nil: the mempool then relies on periodic resyncs).
	Mempool    MempoolSource
	TxNotifier TxNotifier

	// Utxo is the Bitcoin-type parser; nil for other chain types.
	Utxo UtxoParser
	// Xpub parses accounts (xpubs, output descriptors); nil for chains
	// without them.
	Xpub XpubParser
	// Eth is the Ethereum-type node's account, token and fee queries; nil
	// for other chain types.
	Eth EthereumChain

	// Close releases connections; may be nil.
	Close func() error
}

// Env carries process-wide dependencies into plugin factories.
type Env struct {
	Log     *slog.Logger
	Metrics prometheus.Registerer // may be nil
}

// Factory builds a backend for one configured coin.
type Factory func(cfg *Config, env Env) (*Backend, error)

var (
	registryMu sync.RWMutex
	registry   = map[string]Factory{}
)

// Register makes a coin available under its Blockbook coin_name. Plugins call
// it from init; registering a name twice is a programming error.
func Register(coinName string, f Factory) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[coinName]; dup {
		panic("bchain: coin registered twice: " + coinName)
	}
	registry[coinName] = f
}

// CoinNames lists registered coin names, sorted.
func CoinNames() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// NewBackend builds the backend for cfg.CoinName.
func NewBackend(cfg *Config, env Env) (*Backend, error) {
	registryMu.RLock()
	f, ok := registry[cfg.CoinName]
	registryMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w: unknown coin_name %q (supported: %s)", ErrConfig, cfg.CoinName, strings.Join(CoinNames(), ", "))
	}
	if env.Log == nil {
		env.Log = slog.Default()
	}
	return f(cfg, env)
}
