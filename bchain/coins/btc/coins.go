package btc

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"sync"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/btcsuite/btcd/chainhash/v2"
	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/bchain"
)

// Network is one Bitcoin-type network served under a Blockbook coin name.
// Bitcoin's own networks are registered here; each Bitcoin-derived coin
// package (bchain/coins/ltc, doge, ...) registers its networks with
// Register, overriding only what differs from Bitcoin.
type Network struct {
	Params       *chaincfg.Params
	Shortcut     string
	Label        string
	Slip44       uint32
	Testnet      bool
	Decimals     int // 0 means 8
	PublicPort   int // Blockbook's default public (API) port
	InternalPort int // Blockbook's default internal (metrics) port
	// NewParser builds the coin's parser; nil means Bitcoin's. cfg carries
	// coin-specific keys (e.g. address_format) in cfg.Raw.
	NewParser func(params *chaincfg.Params, cfg *bchain.Config) (bchain.UtxoParser, error)
	// Adjust may replace parts of the backend after it is built (fee
	// estimation, tx-specific answers, RPC dialect differences); nil for none.
	Adjust func(b *bchain.Backend, node *Node, cfg *bchain.Config) error
	// P2P describes the coin's peer-to-peer block downloads.
	P2P P2POptions
	// NoP2P is set for a coin whose blocks cannot come over P2P here: no
	// local node's P2P port is tried for it.
	NoP2P bool
	// MaxBlockWeight is the block capacity in weight units, 4 × the size
	// limit for coins without segwit; 0 means Bitcoin's 4,000,000.
	MaxBlockWeight uint32
	// Retarget is set for a chain whose difficulty changes every
	// Params.TargetTimespan / Params.TargetTimePerBlock blocks (Bitcoin's
	// own networks; a derived coin's params may carry Bitcoin's values
	// without its rule, so it opts in).
	Retarget bool
	// DuplicateCoinbases are the pre-BIP30 coinbases a later coinbase
	// repeated (bchain.DuplicateCoinbase).
	DuplicateCoinbases []bchain.DuplicateCoinbase
}

// P2POptions are what a coin's peer-to-peer protocol changes for the block
// downloads of p2p_address. Zero values mean Bitcoin's.
type P2POptions struct {
	ProtocolVersion uint32 // sent in version; 0 means btcd's
	NoWitness       bool   // getdata asks for plain blocks (coins without SegWit)
	// BlockHash hashes the block message's leading 80-byte header to the
	// block's id (internal byte order); nil means double SHA-256.
	BlockHash func(header []byte) chainhash.Hash
	// BlockInvType overrides the getdata inventory type (0: Bitcoin's).
	BlockInvType wire.InvType
	// Checksum is the 4-byte checksum of a message payload in the frame
	// header; nil means the first bytes of double SHA-256.
	Checksum func(payload []byte) [4]byte
}

// Coin names and defaults follow Blockbook's bitcoin*.json coin definitions.
var bitcoinNetworks = map[string]Network{
	"Bitcoin": {Params: &chaincfg.MainNetParams, Shortcut: "BTC", Label: "Bitcoin", Slip44: 0, PublicPort: 9130, InternalPort: 9030,
		DuplicateCoinbases: bitcoinDuplicateCoinbases},
	"Testnet":  {Params: &chaincfg.TestNet3Params, Shortcut: "TEST", Label: "Bitcoin Testnet", Slip44: 1, Testnet: true, PublicPort: 19130, InternalPort: 19030},
	"Testnet4": {Params: &chaincfg.TestNet4Params, Shortcut: "TEST", Label: "Bitcoin Testnet4", Slip44: 1, Testnet: true, PublicPort: 19129, InternalPort: 19029},
	"Signet":   {Params: &chaincfg.SigNetParams, Shortcut: "sBTC", Label: "Bitcoin Signet", Slip44: 1, Testnet: true, PublicPort: 19120, InternalPort: 19020},
	"Regtest":  {Params: &chaincfg.RegressionNetParams, Shortcut: "rBTC", Label: "Bitcoin Regtest", Slip44: 1, Testnet: true, PublicPort: 19121, InternalPort: 19021},
}

// bitcoinDuplicateCoinbases are mainnet's two repeated coinbase txids
// (Core's BIP30 exceptions are the later blocks 91842 and 91880).
var bitcoinDuplicateCoinbases = []bchain.DuplicateCoinbase{
	{Txid: knownHash("e3bf3d07d4b0375638d5f1db5255fe07ba2c4cb067cd81b84ee974b6585fb468"), Height: 91722, Later: 91880},
	{Txid: knownHash("d5d27987d2a3dfc724e359870c6644b40e497bdc0589a033220fe15429d88599"), Height: 91812, Later: 91842},
}

func knownHash(s string) bchain.Hash {
	h, err := bchain.ParseHash(s)
	if err != nil {
		panic(err)
	}
	return h
}

var (
	networksMu sync.RWMutex
	networks   = map[string]Network{}
)

func init() {
	for name, n := range bitcoinNetworks {
		n.Retarget = true
		Register(name, n)
	}
}

// Register makes a Bitcoin-type network available under a coin name, both
// here (ParamsFor, NetworkFor) and in bchain's coin registry.
func Register(name string, n Network) {
	networksMu.Lock()
	networks[name] = n
	networksMu.Unlock()
	bchain.Register(name, func(cfg *bchain.Config, env bchain.Env) (*bchain.Backend, error) {
		return newBackend(name, n, cfg, env)
	})
}

// NetworkFor returns the registered network of a coin name.
func NetworkFor(coinName string) (Network, bool) {
	networksMu.RLock()
	defer networksMu.RUnlock()
	n, ok := networks[coinName]
	return n, ok
}

// ParamsFor returns the network parameters of a registered coin name.
func ParamsFor(coinName string) (*chaincfg.Params, bool) {
	n, ok := NetworkFor(coinName)
	return n.Params, ok
}

func newBackend(name string, n Network, cfg *bchain.Config, env bchain.Env) (*bchain.Backend, error) {
	if _, err := url.ParseRequestURI(cfg.RPCURL); err != nil {
		return nil, fmt.Errorf("%w: rpc_url %q: %v", bchain.ErrConfig, cfg.RPCURL, err)
	}
	log := env.Log.With("subsystem", "node", "coin", name)
	parser, err := n.parser(cfg)
	if err != nil {
		return nil, err
	}
	node := &Node{rpc: newRPCClient(cfg.RPCURL, cfg.RPCUser, cfg.RPCPass, cfg.Timeout(), log, env.Metrics), parser: parser, log: log}
	if err := configureP2P(node, n, cfg); err != nil {
		return nil, err
	}
	p := bchain.CoinParams{
		Name: name, Shortcut: n.Shortcut, Label: n.Label, Network: n.Params.Name,
		Testnet: n.Testnet, Decimals: n.decimals(), Slip44: n.Slip44, Genesis: displayHash(*n.Params.GenesisHash),
		PublicPort: n.PublicPort, InternalPort: n.InternalPort, MaxBlockWeight: cmp.Or(n.MaxBlockWeight, 4_000_000),
		DuplicateCoinbases: n.DuplicateCoinbases,
	}
	if n.Retarget && n.Params.TargetTimePerBlock > 0 {
		p.RetargetBlocks = uint32(n.Params.TargetTimespan / n.Params.TargetTimePerBlock)
		p.TargetSpacing = int64(n.Params.TargetTimePerBlock / time.Second)
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
		Type: bchain.ChainBitcoinType, Params: p,
		Chain: node, Addresses: parser, RawBlocks: node, Txs: node, Broadcast: node, Fees: node, MinFee: node,
		Mempool: node, Utxo: parser,
		Xpub: NewXpubParser(n.Params, Magics{P2PKH: cfg.XPubMagic, P2SHP2WPKH: cfg.XPubMagicSegwitP2sh, P2WPKH: cfg.XPubMagicSegwitNative}, p.Slip44),
	}
	switch {
	case node.p2p != nil:
		b.Close = func() error { node.p2p.close(); return nil }
	case node.auto != nil:
		b.Close = func() error { node.auto.close(); return nil }
	}
	notifier, err := pickNotifier(cfg, node)
	if err != nil {
		return nil, err
	}
	b.Notifier = notifier
	if tn := pickTxNotifier(cfg, node); tn != nil {
		b.TxNotifier = tn
	}
	if n.Adjust != nil {
		if err := n.Adjust(b, node, cfg); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// configureP2P sets up block downloads over P2P from p2p_address.
func configureP2P(node *Node, n Network, cfg *bchain.Config) error {
	var extra struct {
		// P2PAddress (host:port of the node's peer-to-peer port) makes
		// block downloads use the P2P protocol instead of RPC. Unset, a
		// local node's default P2P port is tried (autoP2P); P2POff
		// keeps every download on RPC.
		P2PAddress string `json:"p2p_address"`
	}
	if err := json.Unmarshal(cfg.Raw, &extra); err != nil {
		return fmt.Errorf("%w: %v", bchain.ErrConfig, err)
	}
	switch extra.P2PAddress {
	case P2POff:
	case "":
		if !n.NoP2P {
			node.auto = newAutoP2P(cfg.RPCURL, n.Params.DefaultPort, n.Params.Net, n.P2P)
		}
	default:
		if _, _, err := net.SplitHostPort(extra.P2PAddress); err != nil {
			return fmt.Errorf("%w: p2p_address %q: %v", bchain.ErrConfig, extra.P2PAddress, err)
		}
		node.p2p = newP2PBlocks(extra.P2PAddress, n.Params.Net, n.P2P, node.log)
	}
	return nil
}

func (n Network) decimals() int {
	if n.Decimals == 0 {
		return 8
	}
	return n.Decimals
}

func (n Network) parser(cfg *bchain.Config) (bchain.UtxoParser, error) {
	if n.NewParser == nil {
		return NewParser(n.Params), nil
	}
	return n.NewParser(n.Params, cfg)
}

// pickNotifier chooses the push channel for new blocks (block_notifications).
func pickNotifier(cfg *bchain.Config, node *Node) (bchain.BlockNotifier, error) {
	zmq := &ZMQNotifier{Endpoint: cfg.MessageQueueBinding}
	btcd := &BtcdNotifier{RPCURL: cfg.RPCURL, User: cfg.RPCUser, Pass: cfg.RPCPass}
	switch cfg.BlockNotifications {
	case "none":
		return nil, nil
	case "zmq":
		if cfg.MessageQueueBinding == "" {
			return nil, fmt.Errorf("%w: block_notifications is zmq but message_queue_binding is empty", bchain.ErrConfig)
		}
		zmq.Log = node.log
		return zmq, nil
	case "btcd":
		btcd.Log = node.log
		return btcd, nil
	}
	if cfg.MessageQueueBinding != "" {
		zmq.Log = node.log
		return zmq, nil
	}
	btcd.Log = node.log
	return &autoNotifier{node: node, btcd: btcd}, nil
}

// autoNotifier waits until the node answers, then uses btcd's websocket
// notifications if the node is btcd; for Core without ZMQ it relies on polling.
type autoNotifier struct {
	node *Node
	btcd *BtcdNotifier
}

func (a *autoNotifier) Run(ctx context.Context, signal func()) error {
	if isBtcd(ctx, a.node, "following the node by polling") {
		return a.btcd.Run(ctx, signal)
	}
	return nil
}

// isBtcd waits until the node answers and reports whether it is btcd. For
// any other node (Core without message_queue_binding) it logs the fallback
// and returns false only when ctx ends, as there is nothing to push.
func isBtcd(ctx context.Context, node *Node, fallback string) bool {
	for {
		d, err := node.Dialect(ctx)
		if err == nil {
			if d == dialectBtcd {
				return true
			}
			node.log.Info("no message_queue_binding configured: " + fallback)
			<-ctx.Done()
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(2 * time.Second):
		}
	}
}
