// Package eth is the Ethereum-type node backend: blocks with receipts, token
// transfers and (optionally) internal transactions, account state, fees and
// push notifications, over go-ethereum's JSON-RPC client.
package eth

import (
	"context"
	"fmt"
	"log/slog"
	"math/big"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/openexplorer/blockbook/bchain"
)

func init() {
	for name := range networks {
		bchain.Register(name, func(cfg *bchain.Config, env bchain.Env) (*bchain.Backend, error) {
			return NewBackend(name, cfg, env)
		})
	}
}

// Node talks to one Ethereum execution client.
type Node struct {
	rpc   *rpcClient
	log   *slog.Logger
	coin  string
	net   network
	wsURL string

	traceTimeout string            // trace_timeout, the tracer's own timeout ("": the node's default)
	consensus    *consensusVersion // consensusNodeVersion (nil: not configured)

	traceInternal   bool
	tracingOff      atomic.Pointer[string] // why tracing was switched off at start (nil: it was not)
	eip1559         bool
	noBlockReceipts atomic.Bool  // set once the node refuses eth_getBlockReceipts
	multicall3      atomic.Int32 // multicall3Unknown, multicall3Present or multicall3Absent
	multicall3At    atomic.Int64 // unix nanoseconds of the last absent answer

	mu      sync.Mutex
	chainID *big.Int // learned from the node on first use

	main *Node // the node the liveness probe's copy stands for (nil: this one)
}

// ProbeChain is the node for the liveness probe: the same node over its
// own connections (rpcClient.probeClient), so that no load of user
// requests can make the probe misjudge a healthy node.
func (n *Node) ProbeChain() bchain.BlockChain {
	return &Node{rpc: n.rpc.probeClient(), log: n.log, coin: n.coin, net: n.net, wsURL: n.wsURL,
		traceTimeout: n.traceTimeout, consensus: n.consensus, traceInternal: n.traceInternal, eip1559: n.eip1559, main: n}
}

// AnswerOwed is how long the node has owed the probe's connections an
// answer to what they sent after the time given (bchain.Liveness asks it of
// ProbeChain's node); false on a node that is not the probe's, or whose
// connections do not go through its dialer.
func (n *Node) AnswerOwed(since, now time.Time) (time.Duration, bool) {
	if n.rpc.arrivals == nil {
		return 0, false
	}
	return n.rpc.arrivals.Owed(since, now)
}

// NewNode connects (lazily) to the node of a registered coin.
func NewNode(coinName string, cfg *bchain.Config, log *slog.Logger) (*Node, error) {
	n, ok := networks[coinName]
	if !ok {
		return nil, fmt.Errorf("%w: unknown Ethereum coin %q", bchain.ErrConfig, coinName)
	}
	if log == nil {
		log = slog.Default()
	}
	u, err := url.Parse(cfg.RPCURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%w: rpc_url %q is not a URL", bchain.ErrConfig, cfg.RPCURL)
	}
	switch u.Scheme {
	case "http", "https", "ws", "wss":
	default:
		return nil, fmt.Errorf("%w: rpc_url %q: scheme must be http(s) or ws(s)", bchain.ErrConfig, cfg.RPCURL)
	}
	ws := cfg.RPCURLWS
	if ws == "" && (u.Scheme == "ws" || u.Scheme == "wss") {
		ws = cfg.RPCURL // Blockbook's configs give one ws:// URL for both
	}
	node := &Node{
		rpc: newRPCClient(cfg.RPCURL, cfg.Timeout(), log), log: log, coin: coinName, net: n, wsURL: ws,
		traceInternal: n.archive || cfg.ProcessInternalTransactions, eip1559: cfg.Eip1559Fees,
		traceTimeout: cfg.TraceTimeout, consensus: newConsensusVersion(cfg.ConsensusNodeVersion, log),
	}
	// An explicit processInternalTransactions: false turns tracing off even
	// for Archive coins.
	if v, ok := rawBool(cfg.Raw, "processInternalTransactions"); ok {
		node.traceInternal = v
	}
	return node, nil
}

// NewBackend assembles the capabilities of an Ethereum-type coin.
func NewBackend(coinName string, cfg *bchain.Config, env bchain.Env) (*bchain.Backend, error) {
	if env.Log == nil {
		env.Log = slog.Default()
	}
	log := env.Log.With("subsystem", "node", "coin", coinName)
	node, err := NewNode(coinName, cfg, log)
	if err != nil {
		return nil, err
	}
	n := node.net
	p := bchain.CoinParams{
		Name: coinName, Shortcut: n.shortcut, Label: n.label, Network: n.netName, Testnet: n.testnet,
		Decimals: 18, Slip44: 60, PublicPort: n.public, InternalPort: n.intern, EthKind: n.kind,
	}
	if n.genesis != "" {
		g, _ := bchain.ParseHash(n.genesis)
		p.Genesis = g
	}
	if cfg.CoinShortcut != "" {
		p.Shortcut = cfg.CoinShortcut
	}
	if cfg.CoinLabel != "" {
		p.Label = cfg.CoinLabel
	}
	if cfg.Slip44 != 0 {
		p.Slip44 = cfg.Slip44
	}
	p.APINetwork = p.Shortcut
	if cfg.Network != "" {
		p.APINetwork = cfg.Network
	}
	b := &bchain.Backend{
		Type: bchain.ChainEthereumType, Params: p,
		Chain: withMissingBlockRetry(node, cfg.MissingBlockRetry), Addresses: AddressParser{}, Broadcast: node, Fees: node, Eth: node,
		Close: func() error { node.rpc.close(); return nil },
	}
	mp := NewMempool(node, cfg)
	b.Mempool = mp
	if node.wsURL != "" && cfg.BlockNotifications != "none" {
		b.Notifier = NewBlockNotifier(node, cfg)
		// disableMempoolSync (Blockbook's): no pending-tx subscription;
		// the mempool follows the node by its periodic resyncs alone.
		if !cfg.DisableMempoolSync {
			b.TxNotifier = mp
		}
	}
	return b, nil
}

// signer returns the chain's latest signer, which recovers senders of every
// tx type (and of pre-EIP-155 legacy txs).
func (n *Node) signer(ctx context.Context) (types.Signer, error) {
	id, err := n.ChainID(ctx)
	if err != nil {
		return nil, err
	}
	return types.LatestSignerForChainID(id), nil
}

// ChainID asks the node (eth_chainId) once and checks it runs the coin's
// network: a node on another chain id is refused with ErrChainID.
func (n *Node) ChainID(ctx context.Context) (*big.Int, error) {
	n.mu.Lock()
	id := n.chainID
	n.mu.Unlock()
	if id != nil {
		return new(big.Int).Set(id), nil
	}
	var v hexutil.Big
	if err := n.rpc.call(ctx, &v, "eth_chainId"); err != nil {
		return nil, err
	}
	id = v.ToInt()
	if n.net.chainID != 0 && (!id.IsUint64() || id.Uint64() != n.net.chainID) {
		return nil, fmt.Errorf("%w: %w: the node is on chain id %s, %s is chain id %d", bchain.ErrConfig, ErrChainID, id, n.coin, n.net.chainID)
	}
	n.mu.Lock()
	n.chainID = id
	n.mu.Unlock()
	return new(big.Int).Set(id), nil
}

// BestBlock returns the latest block's height and hash. The chain id is
// checked first (once), so that a node of another network, unreachable
// when the program started, is never indexed.
func (n *Node) BestBlock(ctx context.Context) (uint32, bchain.Hash, error) {
	if _, err := n.ChainID(ctx); err != nil {
		return 0, bchain.Hash{}, err
	}
	h, err := n.header(ctx, "eth_getBlockByNumber", "latest")
	if err != nil {
		return 0, bchain.Hash{}, err
	}
	height, _ := h.height()
	return height, bchain.Hash(h.Hash), nil
}

// BlockHash returns the hash of the canonical block at height.
func (n *Node) BlockHash(ctx context.Context, height uint32) (bchain.Hash, error) {
	h, err := n.header(ctx, "eth_getBlockByNumber", hexutil.Uint64(height))
	if err != nil {
		return bchain.Hash{}, err
	}
	return bchain.Hash(h.Hash), nil
}

// BlockHeight returns the height of a block known by hash.
func (n *Node) BlockHeight(ctx context.Context, hash bchain.Hash) (uint32, error) {
	h, err := n.header(ctx, "eth_getBlockByHash", common.Hash(hash))
	if err != nil {
		return 0, err
	}
	height, _ := h.height()
	return height, nil
}

// ChainInfo describes the node for the status pages, with Blockbook's
// fields: chain "mainnet" or "testnet <chain id>", the tip, its 0x hash
// and difficulty, the client version. Headers is set only while the node
// is syncing (eth_syncing's highest block), which Blockbook does not show.
func (n *Node) ChainInfo(ctx context.Context) (*bchain.ChainInfo, error) {
	id, err := n.ChainID(ctx)
	if err != nil {
		return nil, err
	}
	h, err := n.header(ctx, "eth_getBlockByNumber", "latest")
	if err != nil {
		return nil, err
	}
	height, _ := h.height()
	// Blockbook's rule: "mainnet" on the coin's own main network.
	chain := "mainnet"
	if n.net.testnet || n.net.chainID == 0 || !id.IsUint64() || id.Uint64() != n.net.chainID {
		chain = "testnet " + id.String()
	}
	ci := &bchain.ChainInfo{Chain: chain, Blocks: int(height), BestBlockHash: h.Hash.Hex(), Difficulty: "0", ConsensusVersion: n.consensus.get(ctx)}
	if d, err := hexutil.DecodeBig(h.Difficulty); err == nil {
		ci.Difficulty = d.String()
	}
	src := n
	if n.main != nil {
		src = n.main // the probe's copy reports what the indexer's node learned
	}
	if why := src.tracingOff.Load(); why != nil {
		ci.Warnings = *why
	}
	var version string
	if err := n.rpc.call(ctx, &version, "web3_clientVersion"); err == nil {
		ci.Version = version
	}
	var syncing any
	if err := n.rpc.call(ctx, &syncing, "eth_syncing"); err == nil {
		if m, ok := syncing.(map[string]any); ok {
			if s, ok := m["highestBlock"].(string); ok {
				if v, err := strconv.ParseUint(s, 0, 32); err == nil {
					ci.Headers = int(v)
				}
			}
		}
	}
	return ci, nil
}

// mempoolTimeout is how long an unmined tx stays in the fallback pending set
// (mempoolTxTimeoutHours; Blockbook's default is 48h).
func mempoolTimeout(cfg *bchain.Config) time.Duration {
	if cfg.MempoolTxTimeoutHours > 0 {
		return time.Duration(cfg.MempoolTxTimeoutHours) * time.Hour
	}
	return 48 * time.Hour
}
