package btc

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"

	"github.com/openexplorer/blockbook/bchain"
)

// network describes one Bitcoin network this plugin serves under a Blockbook
// coin name.
type network struct {
	params         *chaincfg.Params
	shortcut       string
	label          string
	slip44         uint32
	testnet        bool
	public, intern int // default server ports
}

// Coin names and defaults follow Blockbook's bitcoin*.json coin definitions.
var networks = map[string]network{
	"Bitcoin":  {params: &chaincfg.MainNetParams, shortcut: "BTC", label: "Bitcoin", slip44: 0, public: 9130, intern: 9030},
	"Testnet":  {params: &chaincfg.TestNet3Params, shortcut: "TEST", label: "Bitcoin Testnet", slip44: 1, testnet: true, public: 19130, intern: 19030},
	"Testnet4": {params: &chaincfg.TestNet4Params, shortcut: "TEST", label: "Bitcoin Testnet4", slip44: 1, testnet: true, public: 19129, intern: 19029},
	"Signet":   {params: &chaincfg.SigNetParams, shortcut: "sBTC", label: "Bitcoin Signet", slip44: 1, testnet: true, public: 19120, intern: 19020},
	"Regtest":  {params: &chaincfg.RegressionNetParams, shortcut: "rBTC", label: "Bitcoin Regtest", slip44: 1, testnet: true, public: 19121, intern: 19021},
}

func init() {
	for name, n := range networks {
		bchain.Register(name, func(cfg *bchain.Config, env bchain.Env) (*bchain.Backend, error) {
			return newBackend(name, n, cfg, env)
		})
	}
}

// ParamsFor returns the network parameters of a registered coin name.
func ParamsFor(coinName string) (*chaincfg.Params, bool) {
	n, ok := networks[coinName]
	return n.params, ok
}

func newBackend(name string, n network, cfg *bchain.Config, env bchain.Env) (*bchain.Backend, error) {
	if _, err := url.ParseRequestURI(cfg.RPCURL); err != nil {
		return nil, fmt.Errorf("%w: rpc_url %q: %v", bchain.ErrConfig, cfg.RPCURL, err)
	}
	log := env.Log.With("subsystem", "node", "coin", name)
	parser := NewParser(n.params)
	node := &Node{rpc: newRPCClient(cfg.RPCURL, cfg.RPCUser, cfg.RPCPass, cfg.Timeout(), log, env.Metrics), parser: parser, log: log}
	var extra struct {
		// P2PAddress (host:port of the node's peer-to-peer port) makes
		// block downloads use the P2P protocol instead of RPC.
		P2PAddress string `json:"p2p_address"`
	}
	if err := json.Unmarshal(cfg.Raw, &extra); err != nil {
		return nil, fmt.Errorf("%w: %v", bchain.ErrConfig, err)
	}
	if extra.P2PAddress != "" {
		if _, _, err := net.SplitHostPort(extra.P2PAddress); err != nil {
			return nil, fmt.Errorf("%w: p2p_address %q: %v", bchain.ErrConfig, extra.P2PAddress, err)
		}
		node.p2p = newP2PBlocks(extra.P2PAddress, n.params.Net, log)
	}
	p := bchain.CoinParams{
		Name: name, Shortcut: n.shortcut, Label: n.label, Network: n.params.Name,
		Testnet: n.testnet, Decimals: 8, Slip44: n.slip44, Genesis: displayHash(*n.params.GenesisHash),
		PublicPort: n.public, InternalPort: n.intern,
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
		Chain: node, Addresses: parser, RawBlocks: node, Txs: node, Broadcast: node, Fees: node,
		Mempool: node, Utxo: parser,
		Xpub: NewXpubParser(n.params, Magics{P2PKH: cfg.XPubMagic, P2SHP2WPKH: cfg.XPubMagicSegwitP2sh, P2WPKH: cfg.XPubMagicSegwitNative}, p.Slip44),
	}
	if node.p2p != nil {
		b.Close = func() error { node.p2p.close(); return nil }
	}
	notifier, err := pickNotifier(cfg, node)
	if err != nil {
		return nil, err
	}
	b.Notifier = notifier
	if tn := pickTxNotifier(cfg, node); tn != nil {
		b.TxNotifier = tn
	}
	return b, nil
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
