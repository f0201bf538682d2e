package app

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/mempool"
	"github.com/openexplorer/blockbook/server"
	"github.com/openexplorer/blockbook/syncer"
)

// healthMaxLag is how many blocks the index may trail the node and still
// report healthy (the block being connected right now).
const healthMaxLag = 1

// Run wires the components from the options and serves until ctx ends.
func Run(ctx context.Context, o *Options, log *slog.Logger) error {
	cfg, err := bchain.LoadConfig(o.BlockchainCfg)
	if err != nil {
		return err
	}
	fiatCfg, err := fiatConfig(cfg, log)
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	backend, err := bchain.NewBackend(cfg, bchain.Env{Log: log, Metrics: reg})
	if err != nil {
		return err
	}
	if backend.Close != nil {
		defer backend.Close()
	}
	o.warnIgnored(log)
	if !o.DryRun {
		checkEthTracing(ctx, backend, log)
	}
	if o.Prof != "" {
		go func() {
			log.Info("pprof profiles served", "addr", o.Prof)
			srv := &http.Server{Addr: o.Prof, Handler: profMux(), ReadHeaderTimeout: 10 * time.Second}
			if err := srv.ListenAndServe(); err != nil {
				log.Error("pprof server", "err", err)
			}
		}()
	}

	var killAfter int64
	if v := os.Getenv(KillAfterWritesEnv); v != "" {
		if killAfter, err = strconv.ParseInt(v, 10, 64); err != nil {
			return fmt.Errorf("%w: %s=%q is not a number", bchain.ErrConfig, KillAfterWritesEnv, v)
		}
	}
	mem := planMemory(o.SyncMemoryMB<<20, len(db.ColumnFamilies(backend.Type)))
	d, err := db.Open(db.Options{
		Path: o.DataDir, ChainType: backend.Type, Coin: cfg.CoinName, Network: backend.Params.Network,
		CacheBytes: o.DBCache, MaxOpenFiles: o.DBMaxOpenFiles, WriteBufferBytes: mem.writeBuffer,
		KillAfterWrites: killAfter, Log: log,
	})
	if err != nil {
		return err
	}
	defer d.Close()
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "blockbook_db_size_bytes", Help: "Size of the index database."},
		func() float64 { return float64(d.Size()) }))

	index, blockFilters, err := newIndex(backend, d, cfg)
	if err != nil {
		return err
	}
	bulkThreshold := uint32(o.BulkThreshold)
	if backend.Type == bchain.ChainEthereumType {
		bulkThreshold = 0 // Ethereum-type blocks are connected one by one
	}
	pollMs := cfg.BlockPollIntervalMs
	if o.ResyncIndexMs > 0 {
		pollMs = o.ResyncIndexMs
	}
	if pollMs <= 0 {
		pollMs = 1000
	}
	syncCfg := syncer.Config{
		Workers: o.Workers, MemoryBudget: mem.syncWorker, PollInterval: time.Duration(pollMs) * time.Millisecond,
		BulkThreshold: bulkThreshold, OnBulk: mem.bulkMemory(d.SetBlockCacheBytes, o.DBCache),
	}
	if x, ok := index.(*db.EthIndex); ok {
		// Blocks whose trace failed are traced again once the tip is reached.
		syncCfg.AfterSync = func(ctx context.Context) error {
			_, err := x.RetryTraces(ctx, func(h uint32, hash bchain.Hash) (*bchain.Block, error) { return backend.Chain.Block(ctx, hash, h) })
			return err
		}
	}
	worker := syncer.New(backend.Chain, index, syncCfg, log, syncer.NewMetrics(reg))

	if o.Rollback >= 0 {
		return worker.Rollback(ctx, uint32(o.Rollback))
	}
	if o.DryRun {
		return dryRun(ctx, backend, index, log)
	}

	mp, mempoolFilters, err := newMempool(o, cfg, backend, d, log, reg)
	if err != nil {
		return err
	}
	apiCfg := api.Config{
		Build: api.BuildInfo{Version: build.Version, GitCommit: commit(), BuildTime: build.BuildTime, SyncMode: o.Sync,
			About: "Blockbook-compatible blockchain indexer and API server"},
		DisableTxCache: o.NoTxCache, BlockFilters: blockFilters, MempoolFilters: mempoolFilters, Log: log,
		Eip1559Fees:      cfg.Eip1559Fees,
		DisableXpubCache: o.NoXpubCache,
		Limits:           api.Limits{MaxXpubGap: o.XpubMaxGap, XpubCacheSize: o.XpubCacheSize, MaxHistoryTxs: o.BalanceHistoryMaxTxs},
	}
	if mp != nil {
		apiCfg.Mempool = mp
	}
	ethMempool := newEthMempool(o, cfg, backend, log)
	if ethMempool != nil {
		apiCfg.EthMempool = ethMempool
	}
	apiCfg.FiatRates = fiatCfg != nil
	svc := newService(backend, d, worker, apiCfg)
	ws, err := newWebsocket(o, svc, log, reg)
	if err != nil {
		return err
	}
	var servers []interface{ Shutdown(context.Context) error }
	var wg sync.WaitGroup
	serve := func(name, addr string, srv interface {
		Serve(net.Listener) error
		Shutdown(context.Context) error
	}) error {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("%w: %s server: %v", bchain.ErrConfig, name, err)
		}
		servers = append(servers, srv)
		if o.OnListen != nil {
			o.OnListen(name, ln.Addr().String())
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := srv.Serve(ln); err != nil {
				log.Error("server failed", "server", name, "err", err)
			}
		}()
		return nil
	}
	if addr := binding(o.Internal, "127.0.0.1", backend.Params.InternalPort); addr != "" {
		if err := serve("internal", addr, server.NewInternal(addr, reg, worker, healthMaxLag, log)); err != nil {
			return err
		}
	}
	if addr := binding(o.Public, "", backend.Params.PublicPort); addr != "" {
		if err := serve("public", addr, server.NewPublic(svc, server.PublicConfig{Addr: addr, Websocket: ws}, log, reg)); err != nil {
			shutdownAll(servers, log)
			return err
		}
	}

	syncCtx, stopSync := context.WithCancel(ctx)
	defer stopSync()
	wg.Add(1)
	go func() {
		defer wg.Done()
		ws.Run(syncCtx)
	}()
	worker.OnBlock(func(ev syncer.BlockEvent) {
		if mp != nil {
			mp.OnBlock(ev)
		}
		if ethMempool != nil && ev.Connected != nil {
			ethMempool.OnBlock(ev.Connected)
		}
		if ev.HasTip && !ev.Disconnected {
			ws.OnBlock(ev.Tip.Height, ev.Tip.Hash, ev.Connected)
		}
	})
	if ethMempool != nil {
		runEthMempool(syncCtx, &wg, ethMempool, svc, ws, backend.TxNotifier)
	}
	if mp != nil {
		mp.OnTx(func(tx *mempool.Tx) { ws.OnMempoolTx(svc.MempoolTxNotice(tx)) })
		mp.OnResolved(func(tx *mempool.Tx, descs []bchain.AddrDesc) {
			n := svc.MempoolTxNotice(tx)
			n.Descs = descs
			ws.OnMempoolTxResolved(n)
		})
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = mp.Run(syncCtx, backend.TxNotifier)
		}()
	}
	startFiat(syncCtx, &wg, o, fiatCfg, d, ws, log, reg)
	if o.Sync {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A fatal sync error is logged by the worker; the API keeps
			// serving the index and /health reports the problem.
			_ = worker.Run(syncCtx, backend.Notifier)
		}()
	} else {
		log.Info("sync worker not started (run with -sync to index new blocks)")
	}
	<-ctx.Done()
	log.Info("shutting down")
	stopSync()
	shutdownAll(servers, log)
	wg.Wait()
	return nil
}

func shutdownAll(servers []interface{ Shutdown(context.Context) error }, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, s := range servers {
		if err := s.Shutdown(ctx); err != nil {
			log.Warn("server shutdown", "err", err)
		}
	}
}

// profMux serves net/http/pprof's handlers on their own mux, so that they
// never appear on the public or internal servers.
func profMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// binding resolves a -public/-internal value: empty means the coin's default
// port on defaultHost, "none" disables the server.
func binding(flagValue, defaultHost string, port int) string {
	switch flagValue {
	case "none":
		return ""
	case "":
		return net.JoinHostPort(defaultHost, strconv.Itoa(port))
	}
	return flagValue
}

// newMempool follows the node's mempool when the sync worker runs (the
// mempool needs the index current to resolve inputs).
func newMempool(o *Options, cfg *bchain.Config, b *bchain.Backend, d *db.DB, log *slog.Logger, reg prometheus.Registerer) (*mempool.Mempool, db.FilterParams, error) {
	fp := db.FilterParams{P: cfg.MempoolGolombFilterP, Scripts: cfg.MempoolFilterScripts, ZeroedKey: cfg.MempoolFilterUseZeroedKey}
	if !o.Sync || b.Mempool == nil || b.Txs == nil || b.Utxo == nil {
		return nil, fp, nil
	}
	period := time.Duration(o.ResyncMempoolMs) * time.Millisecond
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
	mp := mempool.New(d, node, b.Utxo, mempool.Config{
		Workers: cfg.MempoolWorkers, ResyncInterval: period, Filter: fp, Log: log, Metrics: reg,
	})
	return mp, fp, nil
}

// newWebsocket builds the websocket API from the flags.
func newWebsocket(o *Options, svc api.Service, log *slog.Logger, reg prometheus.Registerer) (*server.Websocket, error) {
	proxies, err := server.ParseTrustedProxies(o.WsTrustedProxies)
	if err != nil {
		return nil, fmt.Errorf("%w: -wstrustedproxies: %v", bchain.ErrConfig, err)
	}
	var origins []string
	for _, s := range strings.Split(o.WsAllowedOrigins, ",") {
		if s = strings.TrimSpace(s); s != "" {
			origins = append(origins, s)
		}
	}
	return server.NewWebsocket(svc, server.WebsocketConfig{
		AllowedOrigins: origins, MaxConnsPerIP: o.WsMaxConnsPerIP, TrustedProxies: proxies, EnableSubNewTx: o.EnableSubNewTx,
	}, log, reg), nil
}

// newIndex picks the index code for the backend's chain type; filters are
// the block filter parameters (Bitcoin-type only).
func newIndex(b *bchain.Backend, d *db.DB, cfg *bchain.Config) (syncer.Index, db.FilterParams, error) {
	switch b.Type {
	case bchain.ChainBitcoinType:
		filters := db.FilterParams{P: cfg.BlockGolombFilterP, Scripts: cfg.BlockFilterScripts, ZeroedKey: cfg.BlockFilterUseZeroedKey}
		x, err := db.NewUtxoIndex(d, b.Utxo, cfg.BlockAddressesToKeep, filters)
		if err != nil {
			return nil, filters, err
		}
		return x, x.Filters(), nil
	case bchain.ChainEthereumType:
		if b.Eth == nil {
			return nil, db.FilterParams{}, fmt.Errorf("%w: the Ethereum-type backend has no account queries", bchain.ErrConfig)
		}
		// Token metadata is read once, when the index first meets a
		// contract, in the sync worker's fetch step (EthIndex.PrepareBlock).
		return db.NewEthIndex(d, cfg.BlockAddressesToKeep, b.Eth.ContractInfo), db.FilterParams{}, nil
	}
	return nil, db.FilterParams{}, fmt.Errorf("%w: chain type %v is not supported yet", bchain.ErrConfig, b.Type)
}

// newService picks the query service for the backend's chain type (the
// one place besides newIndex that switches on it).
func newService(b *bchain.Backend, d *db.DB, sync api.SyncStatus, cfg api.Config) api.Service {
	if b.Type == bchain.ChainEthereumType {
		return api.NewEthService(d, b, sync, cfg)
	}
	return api.NewUtxoService(d, b, sync, cfg)
}

// dryRun checks that the node answers and reports where the index stands.
func dryRun(ctx context.Context, b *bchain.Backend, index syncer.Index, log *slog.Logger) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	h, hash, err := b.Chain.BestBlock(ctx)
	if err != nil {
		return fmt.Errorf("node: %w", err)
	}
	tip, ok, err := index.Tip()
	if err != nil {
		return err
	}
	if !ok {
		log.Info("dry run ok", "node_height", h, "node_hash", hash.String(), "index", "empty")
		return nil
	}
	log.Info("dry run ok", "node_height", h, "node_hash", hash.String(), "index_height", tip.Height, "index_hash", tip.Hash.String())
	return nil
}
