package app

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/internal/listen"
	"github.com/openexplorer/blockbook/mempool"
	"github.com/openexplorer/blockbook/server"
	"github.com/openexplorer/blockbook/syncer"
)

// chainStack is what a chain type contributes to the program: its index
// code, its mempool follower and its query service. Everything else (the
// store, the sync worker, the servers, fiat rates) is shared.
type chainStack struct {
	index syncer.Index
	// blockFilters are the index's Golomb filter parameters (zero: none).
	blockFilters db.FilterParams
	// afterSync runs on the sync worker after each pass (nil: nothing).
	afterSync func(ctx context.Context) error
	// traces retries failed traces on request (/admin; nil: none).
	traces *traceRetrier
	// configure adds the chain type's parts to the query configuration
	// (its mempool, filter parameters).
	configure func(cfg *api.Config)
	// newService builds the query service.
	newService func(d *db.DB, sync api.SyncStatus, cfg api.Config) api.Service
	// onBlock tells the mempool about a block event (nil: no mempool).
	onBlock func(ev syncer.BlockEvent)
	// runMempool follows the node's mempool and announces new txs until
	// ctx ends (nil: no mempool); it runs after newService. inSync tells
	// whether the index has reached the node's tip once (nil: no sync
	// worker, nothing to wait for).
	runMempool func(ctx context.Context, wg *sync.WaitGroup, ws *server.Websocket, inSync func() bool)
	// mempool is the Bitcoin-type mempool (nil: none), for other fronts'
	// notifications (electrum.go).
	mempool *mempool.Mempool
	// projection is the mempool's projected blocks (nil: none), whose
	// rebuilds the mempool.space websocket pushes.
	projection *mempool.Projection
}

// stackEnv is what the chain-type constructors build on.
type stackEnv struct {
	o       *Options
	cfg     *bchain.Config
	backend *bchain.Backend
	d       *db.DB
	log     *slog.Logger
	reg     *prometheus.Registry
	env     *envSettings // Blockbook's environment variables
	tls     *tls.Config  // -certfile (nil: plain HTTP)
	gate    *listen.Gate // expensive work in progress over every front
}

// chainStacks holds one constructor per chain type.
var chainStacks = map[bchain.ChainType]func(ctx context.Context, e stackEnv) (*chainStack, error){
	bchain.ChainBitcoinType:  newUtxoStack,
	bchain.ChainEthereumType: newEthStack,
	bchain.ChainTronType:     newTronStack,
}

// newChainStack builds the backend's chain type's parts.
func newChainStack(ctx context.Context, e stackEnv) (*chainStack, error) {
	newStack, ok := chainStacks[e.backend.Type]
	if !ok {
		return nil, fmt.Errorf("%w: chain type %v is not supported yet", bchain.ErrConfig, e.backend.Type)
	}
	return newStack(ctx, e)
}

// startMempool runs the chain's mempool follower (if any); with a sync
// worker (syncing), what waits for the initial sync waits on status's
// latch (ReachedTip: InSync a fast chain clears within milliseconds).
func (s *chainStack) startMempool(ctx context.Context, wg *sync.WaitGroup, ws *server.Websocket, syncing bool, status api.SyncStatus) {
	if s.runMempool == nil {
		return
	}
	var inSync func() bool
	if syncing {
		inSync = func() bool { return status.State().ReachedTip }
	}
	s.runMempool(ctx, wg, ws, inSync)
}

// waitInSync waits until inSync says the initial sync is done (nil: at
// once); false when ctx ended first.
func waitInSync(ctx context.Context, inSync func() bool) bool {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for inSync != nil && !inSync() {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
	return ctx.Err() == nil
}
