// Package gethdev runs an in-process go-ethereum dev chain for tests of the
// Ethereum indexer: the Ethereum counterpart of tools/regtest.
//
// The node is a real geth (node.New + eth.New) on a developer genesis with
// every fork active from block 0, driven by a simulated beacon with period 0:
// a block is sealed only when the test calls Commit, so tests control exactly
// which txs land in which block. It serves HTTP and websocket JSON-RPC on a
// random loopback port with the eth, net, web3, debug and txpool APIs, and
// keeps all state (archive, hash scheme) so debug_traceBlockByHash works on
// any old block.
//
// Things worth knowing when writing tests:
//   - Fork refuses while txs are pending; Commit or drop them first. Txs of
//     the blocks dropped by a reorg return to the pool and are mined again by
//     the next Commit.
//   - Block timestamps are wall-clock seconds, bumped by one when several
//     blocks are sealed within the same second. With Options.GenesisTime in
//     the future every block is one second after its parent instead, the
//     same in every run (block hashes still differ: the beacon draws each
//     block's prevRandao at random).
//   - The dev account starts with 2^256-9 wei.
package gethdev

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"math/big"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core"
	"github.com/ethereum/go-ethereum/core/rawdb"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/eth"
	"github.com/ethereum/go-ethereum/eth/catalyst"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/eth/filters"
	"github.com/ethereum/go-ethereum/eth/tracers"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/log"
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/p2p"
	"github.com/ethereum/go-ethereum/rpc"

	// Registers the native tracers (callTracer, prestateTracer, ...).
	_ "github.com/ethereum/go-ethereum/eth/tracers/native"
)

const (
	// DefaultChainID is the chain id of geth's --dev chain.
	DefaultChainID = 1337
	// DefaultGasLimit is the block gas limit: mainnet-like, far above what
	// token contract deployments and calls need.
	DefaultGasLimit = 30_000_000

	txIndexTimeout = 10 * time.Second

	// LogEnv names an environment variable holding a geth verbosity
	// (0-5, 3 is info) to log the node to stderr; geth is silent otherwise.
	LogEnv = "GETHDEV_VERBOSITY"
)

// Modules are the JSON-RPC namespaces served over HTTP and websocket.
var Modules = []string{"eth", "net", "web3", "debug", "txpool"}

// DevKey is the default key of the funded dev account, fixed so that
// addresses are the same in every run.
var DevKey = mustKey("gethdev/dev")

// DefaultCoinbase receives the priority fees of sealed blocks.
var DefaultCoinbase = crypto.PubkeyToAddress(mustKey("gethdev/coinbase").PublicKey)

// Options configure Start. The zero value is a fresh chain in a temporary
// directory with chain id 1337.
type Options struct {
	// Dir is the data directory; a temporary one, removed by Stop, if empty.
	Dir string
	// ChainID of the chain; DefaultChainID if zero.
	ChainID uint64
	// GasLimit is the block gas limit; DefaultGasLimit if zero.
	GasLimit uint64
	// DevKey is the key of the account funded at genesis; DevKey if nil.
	DevKey *ecdsa.PrivateKey
	// Coinbase receives block fees; DefaultCoinbase if zero.
	Coinbase common.Address
	// Modules overrides the JSON-RPC namespaces served (e.g. without
	// "debug", like a node whose operator did not enable tracing); Modules
	// if nil.
	Modules []string
	// Withdrawals registers geth's dev API (dev_addWithdrawal, used by
	// AddWithdrawal). Geth then seals a block on its own for every new tx
	// or queued withdrawal (its on-demand dev mode), so such a node does
	// not wait for Commit: tests that place txs in blocks must not set it.
	Withdrawals bool
	// GenesisTime is the genesis block's timestamp (0: 1970). The beacon
	// stamps a block with the wall clock, or its parent's time plus one
	// when the clock is not past it: a future GenesisTime gives every
	// block a fixed time (screenshot tests).
	GenesisTime uint64
}

// Node is a running dev chain.
type Node struct {
	HTTPURL  string
	WSURL    string
	ChainID  *big.Int
	DevKey   *ecdsa.PrivateKey
	DevAddr  common.Address
	Coinbase common.Address
	Dir      string

	stack   *node.Node
	eth     *eth.Ethereum
	beacon  *catalyst.SimulatedBeacon
	client  *ethclient.Client
	tempDir bool

	mu      sync.Mutex // serialises Commit and Fork
	stopped bool
}

// Start creates the dev chain and starts its RPC servers. ctx bounds only
// the startup.
func Start(ctx context.Context, opts Options) (n *Node, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n = &Node{Dir: opts.Dir, DevKey: opts.DevKey, Coinbase: opts.Coinbase}
	if n.DevKey == nil {
		n.DevKey = DevKey
	}
	if n.Coinbase == (common.Address{}) {
		n.Coinbase = DefaultCoinbase
	}
	n.DevAddr = crypto.PubkeyToAddress(n.DevKey.PublicKey)
	chainID, gasLimit := opts.ChainID, opts.GasLimit
	if chainID == 0 {
		chainID = DefaultChainID
	}
	if gasLimit == 0 {
		gasLimit = DefaultGasLimit
	}
	n.ChainID = new(big.Int).SetUint64(chainID)
	if v := os.Getenv(LogEnv); v != "" {
		lvl, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("gethdev: %s: %w", LogEnv, err)
		}
		// Process-wide: go-ethereum has a single root logger.
		log.SetDefault(log.NewLogger(log.NewTerminalHandlerWithLevel(os.Stderr, log.FromLegacyLevel(lvl), false)))
	}
	if n.Dir == "" {
		if n.Dir, err = os.MkdirTemp("", "gethdev-"); err != nil {
			return nil, err
		}
		n.tempDir = true
	}
	defer func() {
		if err != nil {
			n.Stop()
			n = nil
		}
	}()

	modules := Modules
	if opts.Modules != nil {
		modules = opts.Modules
	}
	nodeConf := nodeConfig(n.Dir, modules)
	stack, err := node.New(&nodeConf)
	if err != nil {
		return nil, fmt.Errorf("gethdev: node: %w", err)
	}
	n.stack = stack

	ethConf := ethConfig(n.ChainID, gasLimit, n.DevAddr)
	ethConf.Genesis.Timestamp = opts.GenesisTime
	backend, err := eth.New(stack, &ethConf)
	if err != nil {
		return nil, fmt.Errorf("gethdev: eth: %w", err)
	}
	n.eth = backend
	filterSystem := filters.NewFilterSystem(backend.APIBackend, filters.Config{})
	stack.RegisterAPIs([]rpc.API{{Namespace: "eth", Service: filters.NewFilterAPI(filterSystem)}})
	stack.RegisterAPIs(tracers.APIs(backend.APIBackend))
	// Registered after eth.New's APIs, so it overrides eth_sendRawTransaction.
	stack.RegisterAPIs([]rpc.API{{Namespace: "eth", Service: &syncSendAPI{eth: backend, feeCapEt: ethConf.RPCTxFeeCap}}})
	if err := n.startStack(backend, opts.Withdrawals); err != nil {
		return nil, err
	}
	n.HTTPURL = stack.HTTPEndpoint()
	n.WSURL = stack.WSEndpoint()
	n.client = ethclient.NewClient(stack.Attach())
	return n, nil
}

// startStack starts the node and its simulated beacon; with withdrawals,
// the beacon and its dev API come first, as geth --dev registers them.
func (n *Node) startStack(backend *eth.Ethereum, withdrawals bool) (err error) {
	if withdrawals {
		if n.beacon, err = catalyst.NewSimulatedBeacon(0, n.Coinbase, backend); err != nil {
			return fmt.Errorf("gethdev: beacon: %w", err)
		}
		catalyst.RegisterSimulatedBeaconAPIs(n.stack, n.beacon)
	}
	if err := n.stack.Start(); err != nil {
		return fmt.Errorf("gethdev: start: %w", err)
	}
	if n.beacon == nil {
		if n.beacon, err = catalyst.NewSimulatedBeacon(0, n.Coinbase, backend); err != nil {
			return fmt.Errorf("gethdev: beacon: %w", err)
		}
	}
	if err := n.beacon.Start(); err != nil {
		return fmt.Errorf("gethdev: beacon: %w", err)
	}
	return nil
}

// nodeConfig is the node's: loopback HTTP and websocket only, no peers.
func nodeConfig(dir string, modules []string) node.Config {
	c := node.DefaultConfig
	c.Name = "gethdev"
	c.DataDir = dir
	c.IPCPath = "" // no unix socket: temp paths may exceed its length limit
	c.P2P = p2p.Config{MaxPeers: 0, NoDiscovery: true, NoDial: true, ListenAddr: ""}
	// Port 0 for both makes the websocket share the HTTP listener.
	c.HTTPHost, c.HTTPPort = "127.0.0.1", 0
	c.WSHost, c.WSPort = "127.0.0.1", 0
	c.HTTPModules, c.WSModules = modules, modules
	c.HTTPVirtualHosts = []string{"*"}
	c.WSOrigins = []string{"*"}
	c.UseLightweightKDF = true
	return c
}

// ethConfig is the chain's: a dev genesis funding devAddr, archive state.
func ethConfig(chainID *big.Int, gasLimit uint64, devAddr common.Address) ethconfig.Config {
	genesis := core.DeveloperGenesisBlock(gasLimit, &devAddr)
	genesis.Config.ChainID = chainID // Config is a copy, safe to change
	c := ethconfig.Defaults
	c.Genesis = genesis
	c.NetworkId = chainID.Uint64()
	c.SyncMode = ethconfig.FullSync
	// Archive: keep every state so old blocks can be traced. Only the hash
	// scheme supports archive mode.
	c.NoPruning = true
	c.StateScheme = rawdb.HashScheme
	c.Preimages = true // as geth --gcmode archive does
	c.Miner.GasCeil = gasLimit
	// Recommit also caps the time spent filling a block; on a loaded machine
	// the 2s default can cut a block short and leave txs behind.
	c.Miner.Recommit = time.Minute
	c.TxPool.NoLocals = true
	return c
}

// Client is an in-process client of the node (no HTTP round trips); use
// HTTPURL or WSURL to test the network path.
func (n *Node) Client() *ethclient.Client { return n.client }

// Eth gives direct access to the Ethereum service (blockchain, txpool).
func (n *Node) Eth() *eth.Ethereum { return n.eth }

// Commit seals a block with the pending txs (possibly none) on top of the
// current head and returns its hash.
func (n *Node) Commit() (common.Hash, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stopped {
		return common.Hash{}, errors.New("gethdev: stopped")
	}
	before := n.eth.BlockChain().CurrentBlock()
	// SimulatedBeacon.Commit only logs sealing errors; a head that did not
	// advance is how they show.
	hash := n.beacon.Commit()
	head := n.eth.BlockChain().CurrentBlock()
	if hash == before.Hash() || head.Number.Uint64() != before.Number.Uint64()+1 {
		return common.Hash{}, fmt.Errorf("gethdev: sealing block %d failed", before.Number.Uint64()+1)
	}
	if err := n.syncPool(); err != nil {
		return common.Hash{}, err
	}
	return hash, n.waitTxIndex()
}

// syncPool waits for the tx pool to move its state to the new head. The
// head event reaches the pool before the head change returns (the feed is
// synchronous), but the pool resets on its own goroutine: until it is
// done, a tx spending what the new block paid is refused as "insufficient
// funds".
func (n *Node) syncPool() error {
	if err := n.eth.TxPool().Sync(); err != nil {
		return fmt.Errorf("gethdev: tx pool reset: %w", err)
	}
	return nil
}

// waitTxIndex waits for the asynchronous tx indexer to catch up with the
// head: until then eth_getTransactionReceipt and friends answer
// "transaction indexing is in progress" for the newest txs.
func (n *Node) waitTxIndex() error {
	deadline := time.Now().Add(txIndexTimeout)
	for {
		p, err := n.eth.BlockChain().TxIndexProgress()
		if err != nil || p.Done() {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("gethdev: tx indexing not done after %v (%d blocks left)", txIndexTimeout, p.Remaining)
		}
		time.Sleep(time.Millisecond)
	}
}

// Fork rewinds the head to parent, an earlier block; the next Commit builds
// a competing branch on it and becomes the head, so blocks after parent are
// reorganised away. It fails while txs are pending.
func (n *Node) Fork(parent common.Hash) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stopped {
		return errors.New("gethdev: stopped")
	}
	if err := n.beacon.Fork(parent); err != nil {
		return fmt.Errorf("gethdev: fork at %s: %w", parent, err)
	}
	if err := n.syncPool(); err != nil {
		return err
	}
	return n.waitTxIndex()
}

// Head returns the number and hash of the current head block.
func (n *Node) Head() (uint64, common.Hash) {
	h := n.eth.BlockChain().CurrentBlock()
	return h.Number.Uint64(), h.Hash()
}

// Stop shuts the node down and removes a temporary data directory. It may
// be called more than once.
func (n *Node) Stop() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stopped {
		return
	}
	n.stopped = true
	if n.client != nil {
		n.client.Close()
	}
	// Teardown: a failure to stop leaves nothing to do, and Stop has no
	// caller to tell.
	if n.beacon != nil {
		_ = n.beacon.Stop()
	}
	if n.stack != nil {
		_ = n.stack.Close()
	}
	if n.tempDir {
		os.RemoveAll(n.Dir)
	}
}

// mustKey derives a secp256k1 key from a name, so test accounts are stable.
func mustKey(name string) *ecdsa.PrivateKey {
	k, err := crypto.ToECDSA(crypto.Keccak256([]byte(name)))
	if err != nil {
		panic(err)
	}
	return k
}
