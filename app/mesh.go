package app

import (
	"flag"
	"fmt"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/mesh"
	"github.com/openexplorer/blockbook/server"
)

// meshOptions are the flags of the Mesh (Rosetta) listener.
type meshOptions struct {
	// Addr is -mesh=<host:port> ("" disables it).
	Addr string
	// Offline is -mesh-offline: serve only the offline Construction
	// endpoints, with no node and no index (mesh_offline.go).
	Offline bool
}

func (m *meshOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&m.Addr, "mesh", "", "serve Coinbase's Mesh (Rosetta) API (data, and construction of P2WPKH spends), JSON over POST, on this binding [address]:port (Bitcoin-type coins; the Data API of Ethereum-type coins; default: off)")
	fs.BoolVar(&m.Offline, "mesh-offline", false, "with -mesh: serve only Mesh's offline Construction endpoints (derive, preprocess, payloads, combine, parse, hash), without contacting the node or opening the index; nothing else runs")
}

// startMesh starts the Mesh listener when -mesh is given; a chain type
// without the ledger queries is a configuration error.
func startMesh(srvs *servers, o *Options, e stackEnv, svc api.Service, over *server.OverLimits) error {
	if o.Mesh.Addr == "" {
		return nil
	}
	p := e.backend.Params
	opts := mesh.Options{
		Blockchain: p.Name, Network: p.Network, Symbol: p.Shortcut, Decimals: p.Decimals,
		MiddlewareVersion: build.Version, Log: e.log,
	}
	var h *mesh.Server
	ledger, ok := svc.(api.LedgerQueries)
	esq, ok2 := svc.(api.EsploraQueries)
	eth, ok3 := svc.(api.EthLedgerQueries)
	switch {
	case e.backend.Type == bchain.ChainBitcoinType && ok && ok2:
		h = mesh.New(svc, ledger, esq, opts)
	case e.backend.Type == bchain.ChainEthereumType && ok3:
		// Only chains whose every balance change has an operation: L1
		// (after the merge) and OP-stack. Others move value with no tx
		// (block rewards, bor's state syncs, Arbitrum's deposits and fee
		// accounts, Avalanche's atomic txs), which would not reconcile.
		if k := p.EthKind; k != bchain.EthKindL1 && k != bchain.EthKindOPStack {
			return fmt.Errorf("%w: -mesh serves Ethereum itself and OP-stack chains, not %s (its balances move outside txs in ways not booked yet)", bchain.ErrConfig, p.Name)
		}
		h = mesh.NewEth(svc, eth, opts) // the Data API only
	default:
		return fmt.Errorf("%w: -mesh serves Bitcoin-type and Ethereum-type coins only, not %s", bchain.ErrConfig, e.backend.Type)
	}
	return startFront(srvs, o, e, over, "mesh", o.Mesh.Addr, h, mesh.RequestCost, nil)
}
