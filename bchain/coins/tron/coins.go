package tron

import (
	"github.com/openexplorer/blockbook/bchain"
)

// network is one Tron network under its Blockbook coin name (Blockbook's
// configs/coins/tron.json and tron_testnet_nile.json: coin facts and the
// blockbook_public and blockbook_internal ports).
type network struct {
	shortcut, label, netName string
	testnet                  bool
	public, intern           int
	// netVersion is what java-tron's net_version answers on the network
	// (its p2p version; Blockbook's TronRPC checks it at start).
	netVersion string
	// genesis is block 0's id (public; its last 4 bytes are the
	// network's eth_chainId, 0x2b6653dc and 0xcd8690dc).
	genesis string
}

var networks = map[string]network{
	"Tron": {shortcut: "TRX", label: "Tron", netName: "mainnet", public: 9312, intern: 9212, netVersion: "11111",
		genesis: "00000000000000001ebf88508a03865c71d452e25f4d51194196a1d22b6653dc"},
	"Tron Testnet Nile": {shortcut: "tTRX", label: "Tron Nile", netName: "nile", testnet: true, public: 19190, intern: 19090, netVersion: "201910292",
		genesis: "0000000000000000d698d4192c56cb6be724a558448e2684802de4d6cd8690dc"},
}

// Decimals of TRX: 1 TRX is 1,000,000 sun.
const Decimals = 6

// slip44 is Tron's SLIP-44 coin type.
const slip44 = 195

func init() {
	for name := range networks {
		bchain.Register(name, func(cfg *bchain.Config, env bchain.Env) (*bchain.Backend, error) {
			return NewBackend(name, cfg)
		})
	}
}

// NewBackend assembles the Tron chain type: the chain (blocks, tips),
// the address parser, the pending txids, the account queries the
// account-model service asks (eth.go) and broadcast. There are no fee
// estimates (nil: absent) and no block notifier: the sync worker polls
// the tip, as Blockbook's Tron does without ZeroMQ.
func NewBackend(coinName string, cfg *bchain.Config) (*bchain.Backend, error) {
	n := networks[coinName]
	node, err := NewNode(cfg)
	if err != nil {
		return nil, err
	}
	node.netVersion = n.netVersion
	p := bchain.CoinParams{
		Name: coinName, Shortcut: n.shortcut, Label: n.label, Network: n.netName, Testnet: n.testnet,
		Decimals: Decimals, Slip44: slip44, PublicPort: n.public, InternalPort: n.intern,
	}
	if p.Genesis, err = ParseID(n.genesis); err != nil {
		return nil, err
	}
	if cfg.CoinShortcut != "" {
		p.Shortcut = cfg.CoinShortcut
	}
	if cfg.CoinLabel != "" {
		p.Label = cfg.CoinLabel
	}
	p.APINetwork = p.Shortcut
	if cfg.Network != "" {
		p.APINetwork = cfg.Network
	}
	return &bchain.Backend{Type: bchain.ChainTronType, Params: p, Chain: node, Addresses: AddressParser{}, Mempool: node,
		Eth: node, Broadcast: node}, nil
}
