package app

import (
	"cmp"
	"context"
	"sync"
	"time"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/mempool"
	"github.com/openexplorer/blockbook/mempool/projected"
	"github.com/openexplorer/blockbook/server"
)

// newUtxoStack builds the Bitcoin-type parts: the UTXO index with its
// block filters (it loads far-behind blocks in bulk), and the mempool when the sync worker runs
// (the mempool needs the index current to resolve inputs).
func newUtxoStack(_ context.Context, e stackEnv) (*chainStack, error) {
	filters := db.FilterParams{P: e.cfg.BlockGolombFilterP, Scripts: e.cfg.BlockFilterScripts, ZeroedKey: e.cfg.BlockFilterUseZeroedKey}
	x, err := db.NewUtxoIndex(e.d, e.backend.Utxo, e.cfg.BlockAddressesToKeep, filters)
	if err != nil {
		return nil, err
	}
	if err := enableOptionalIndexes(e, x); err != nil {
		return nil, err
	}
	mp, mempoolFilters := newMempool(e)
	var proj *mempool.Projection
	if mp != nil {
		proj = mp.EnableProjection(projected.ForBlockWeight(cmp.Or(e.o.ProjectedBlockWeight, e.backend.Params.MaxBlockWeight)))
	}
	altFees := newAltFees(e, proj)
	var svc *api.UtxoService
	s := &chainStack{index: x, blockFilters: x.Filters(), newService: func(d *db.DB, sync api.SyncStatus, cfg api.Config) api.Service {
		svc = api.NewUtxoService(d, e.backend, sync, cfg)
		return svc
	}}
	s.configure = func(cfg *api.Config) {
		cfg.MempoolFilters = mempoolFilters
		if mp != nil {
			cfg.Mempool = mp
			cfg.Projection = proj
			cfg.Replacements = mp.Replacements()
		}
		if altFees != nil {
			cfg.AltFees = altFees
		}
	}
	if mp == nil {
		return s, nil
	}
	s.onBlock, s.mempool, s.projection = mp.OnBlock, mp, proj
	s.runMempool = func(ctx context.Context, wg *sync.WaitGroup, ws *server.Websocket, _ func() bool) {
		mp.OnTx(func(tx *mempool.Tx) { ws.OnMempoolTx(svc.MempoolTxNotice(tx)) })
		// the runes pending txs move, decoded once per tx (api/runes_mempool.go)
		mp.OnTx(svc.PendingRunesAdded)
		mp.OnRemoved(svc.PendingRunesRemoved)
		mp.OnResolved(func(tx *mempool.Tx, descs []bchain.AddrDesc) {
			svc.PendingRunesAdded(tx)
			n := svc.MempoolTxNotice(tx)
			n.Descs = descs
			ws.OnMempoolTxResolved(n)
		})
		wg.Add(3)
		go func() {
			defer wg.Done()
			_ = mp.Run(ctx, e.backend.TxNotifier)
		}()
		go func() { defer wg.Done(); svc.RunPendingRunes(ctx) }()
		go func() { defer wg.Done(); proj.Run(ctx) }()
		if altFees != nil {
			wg.Add(1)
			go func() { defer wg.Done(); altFees.Run(ctx) }()
		}
	}
	return s, nil
}

// newMempool follows the node's mempool when the sync worker runs (nil
// otherwise); the filter parameters are the mempool's Golomb filters.
func newMempool(e stackEnv) (*mempool.Mempool, db.FilterParams) {
	cfg, b := e.cfg, e.backend
	fp := db.FilterParams{P: cfg.MempoolGolombFilterP, Scripts: cfg.MempoolFilterScripts, ZeroedKey: cfg.MempoolFilterUseZeroedKey}
	if !(e.o.Sync || e.o.Replica.On) || b.Mempool == nil || b.Txs == nil || b.Utxo == nil {
		return nil, fp
	}
	period := time.Duration(e.o.ResyncMempoolMs) * time.Millisecond
	if period <= 0 {
		period = 60 * time.Second
	}
	// The plugin's node usually serves both (and fetches txs in batches,
	// which the mempool uses when it can see it).
	node, ok := b.Mempool.(mempool.Node)
	if !ok {
		node = struct {
			bchain.MempoolSource
			bchain.TxSource
		}{b.Mempool, b.Txs}
	}
	mp := mempool.New(e.d, node, b.Utxo, mempool.Config{
		Workers: cfg.MempoolWorkers, ResyncInterval: period, Filter: fp, Log: e.log, Metrics: e.reg,
	})
	return mp, fp
}
