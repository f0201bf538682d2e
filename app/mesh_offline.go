package app

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/mesh"
	"github.com/openexplorer/blockbook/server"
)

// runMeshOffline is -mesh-offline: the Mesh listener alone, serving the
// Construction endpoints that need no node and no index (mesh.NewOffline),
// until ctx ends. It contacts no node and opens no database, so it runs on
// a signing host without either; the public port's limits still apply.
func runMeshOffline(ctx context.Context, e stackEnv) error {
	o := e.o
	if o.Mesh.Addr == "" {
		return fmt.Errorf("%w: -mesh-offline needs -mesh=<host:port>", bchain.ErrConfig)
	}
	if e.backend.Type != bchain.ChainBitcoinType || e.backend.Addresses == nil {
		return fmt.Errorf("%w: -mesh serves Bitcoin-type coins only, not %s", bchain.ErrConfig, e.backend.Type)
	}
	if o.Sync {
		e.log.Warn("-sync has no effect with -mesh-offline: nothing is indexed")
	}
	p := e.backend.Params
	h := mesh.NewOffline(e.backend.Addresses, mesh.Options{
		Blockchain: p.Name, Network: p.Network, Symbol: p.Shortcut, Decimals: p.Decimals,
		MiddlewareVersion: build.Version, Log: e.log,
	})
	var wg sync.WaitGroup
	srvs := &servers{o: o, wg: &wg, log: e.log, tls: e.tls}
	if err := startFront(srvs, o, e, server.NewOverLimits(time.Hour), "mesh", o.Mesh.Addr, h, mesh.RequestCost, nil); err != nil {
		return err
	}
	e.log.Info("serving Mesh offline: no node, no index", "addr", o.Mesh.Addr)
	<-ctx.Done()
	srvs.shutdown()
	wg.Wait()
	return nil
}
