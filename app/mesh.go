package app

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/mesh"
	"github.com/openexplorer/blockbook/server"
)

// meshOptions are the flags of the Mesh (Rosetta) listener.
type meshOptions struct {
	// Addr is -mesh=<host:port> ("" disables it).
	Addr string
}

func (m *meshOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&m.Addr, "mesh", "", "serve Coinbase's Mesh (Rosetta) Data API, JSON over POST, on this binding [address]:port (Bitcoin-type coins; default: off)")
}

// startMesh starts the Mesh listener when -mesh is given; a chain type
// without the ledger queries is a configuration error.
func startMesh(srvs *servers, o *Options, e stackEnv, svc api.Service, over *server.OverLimits) error {
	if o.Mesh.Addr == "" {
		return nil
	}
	ledger, ok := svc.(api.LedgerQueries)
	esq, ok2 := svc.(api.EsploraQueries)
	if e.backend.Type != bchain.ChainBitcoinType || !ok || !ok2 {
		return fmt.Errorf("%w: -mesh serves Bitcoin-type coins only, not %s", bchain.ErrConfig, e.backend.Type)
	}
	p := e.backend.Params
	var h http.Handler = mesh.New(svc, ledger, esq, mesh.Options{
		Blockchain: p.Name, Network: p.Network, Symbol: p.Shortcut, Decimals: p.Decimals,
		MiddlewareVersion: build.Version, Log: e.log,
	})
	// The public port's per-client budget, with its own buckets and the
	// Mesh request costs.
	lim, err := restLimiter(o, e.env, over, e.reg, "mesh", mesh.RequestCost)
	if err != nil {
		return err
	}
	if lim != nil {
		h = lim.Wrap(h)
	}
	kit := o.Listen.kit(e.tls != nil)
	kit.Log = e.log.With("subsystem", "mesh")
	return srvs.start("mesh", o.Mesh.Addr, &meshServer{srv: kit.Server(h)})
}

// meshServer is the listener's http.Server as servers runs it.
type meshServer struct{ srv *http.Server }

func (s *meshServer) Serve(ln net.Listener) error {
	if err := s.srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		return fmt.Errorf("mesh: %w", err)
	}
	return nil
}

func (s *meshServer) Shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }
