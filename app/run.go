package app

import (
	"cmp"
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/rocksdb"
	"github.com/openexplorer/blockbook/fiat"
	"github.com/openexplorer/blockbook/internal/listen"
	"github.com/openexplorer/blockbook/internal/promreg"
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
	envs, err := readEnv(os.LookupEnv, cfg)
	if err != nil {
		return fmt.Errorf("%w: environment: %v", bchain.ErrConfig, err)
	}
	if err := readLimitEnv(envs.get, o); err != nil {
		return err
	}
	envs.ClientIP.LimitLocal = o.Listen.LimitLocal
	tlsCfg, err := loadTLS(o.CertFile)
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
		defer func() {
			if err := backend.Close(); err != nil {
				log.Warn("closing the node connection", "err", err)
			}
		}()
	}
	if o.Mesh.Offline {
		return runMeshOffline(ctx, stackEnv{o: o, cfg: cfg, backend: backend, log: log, reg: reg, env: envs, tls: tlsCfg, gate: o.Listen.gate(reg)})
	}
	if err := checkBackend(ctx, cfg, backend, log); err != nil {
		return err
	}
	o.warnNoEffect(log)
	envs.logEnv(log)
	startProf(o.Prof, log)
	mem := planMemory(o.SyncMemoryMB<<20, len(db.ColumnFamilies(backend.Type)))
	if o.Replica.On {
		return runReplica(ctx, o, cfg, backend, stackEnv{o: o, cfg: cfg, backend: backend, log: log, reg: reg, env: envs, tls: tlsCfg, gate: o.Listen.gate(reg)}, fiatCfg)
	}
	d, err := openStore(o, cfg, backend, mem, log, reg)
	if err != nil {
		return err
	}
	defer d.Close()
	if o.ComputeDBStats {
		return computeDBStats(ctx, d, os.Stdout, log)
	}
	if o.Repair {
		return verifyIndex(ctx, d, log)
	}
	if o.Checkpoint != "" {
		return takeCheckpoint(d, o.Checkpoint, os.Stdout, log)
	}
	env := stackEnv{o: o, cfg: cfg, backend: backend, d: d, log: log, reg: reg, env: envs, tls: tlsCfg, gate: o.Listen.gate(reg)}
	stack, err := newChainStack(ctx, env)
	if err != nil {
		return err
	}
	worker := newWorker(env, stack, mem)
	if stack.traces != nil {
		stack.traces.setWake(worker.Wake)
	}
	if o.Rollback >= 0 {
		return worker.Rollback(ctx, uint32(o.Rollback))
	}
	if o.DryRun {
		return dryRun(ctx, backend, stack.index, log)
	}
	live := newLiveness(ctx, env)
	run := func(ctx context.Context, wg *sync.WaitGroup) { startSync(ctx, wg, o, worker, backend, log) }
	return serve(ctx, env, stack, tipSource{worker, worker.OnBlock, run, live, healthMaxLag}, fiatCfg)
}

// tipSource is what moves the index tip in this process: the sync worker,
// or a replica's catch-up loop.
type tipSource struct {
	status  api.SyncStatus
	onBlock func(func(syncer.BlockEvent))
	// run starts it (in wg) until ctx ends.
	run    func(ctx context.Context, wg *sync.WaitGroup)
	live   *bchain.Liveness
	maxLag uint32 // blocks behind the node /health allows
}

// newLiveness starts the node liveness probe, which runs from the start off
// the request path (see bchain.Liveness); the api and /health read its
// verdict. It stops with ctx.
func newLiveness(ctx context.Context, e stackEnv) *bchain.Liveness {
	chain := e.backend.Chain
	if p, ok := chain.(interface{ ProbeChain() bchain.BlockChain }); ok {
		chain = p.ProbeChain() // its own connections to the node (btc and eth nodes)
	}
	// Under CPU starvation a probe may wait past its 2 s of run time, but
	// not past half of rpc_timeout: two such probes make the verdict.
	live := bchain.NewLiveness(chain, bchain.LivenessConfig{Metrics: e.reg, MaxWait: e.cfg.Timeout() / 2}, e.log)
	go live.Run(ctx)
	return live
}

// startProf serves net/http/pprof on its own address (-prof).
func startProf(addr string, log *slog.Logger) {
	if addr == "" {
		return
	}
	// Listening first, so that the log says whether profiles are served.
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		log.Error("pprof server", "err", err)
		return
	}
	log.Info("pprof profiles served", "addr", addr)
	go func() {
		srv := &http.Server{Handler: profMux(), ReadHeaderTimeout: 10 * time.Second}
		if err := srv.Serve(ln); err != nil {
			log.Error("pprof server", "err", err)
		}
	}()
}

// openStore opens the index and exports its size as a metric.
func openStore(o *Options, cfg *bchain.Config, b *bchain.Backend, mem memoryPlan, log *slog.Logger, reg prometheus.Registerer) (*db.DB, error) {
	var killAfter int64
	if v := os.Getenv(KillAfterWritesEnv); v != "" {
		var err error
		if killAfter, err = strconv.ParseInt(v, 10, 64); err != nil {
			return nil, fmt.Errorf("%w: %s=%q is not a number", bchain.ErrConfig, KillAfterWritesEnv, v)
		}
	}
	d, err := rocksdb.Open(db.Options{
		Path: o.DataDir, ChainType: b.Type, Coin: cfg.CoinName, Network: b.Params.Network,
		CacheBytes: o.DBCache, MaxOpenFiles: o.DBMaxOpenFiles, WriteBufferBytes: mem.writeBuffer,
		KillAfterWrites: killAfter, MinFreeBytes: o.DBReserveMB << 20, Log: log,
	})
	if err != nil {
		return nil, err
	}
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "blockbook_db_size_bytes", Help: "Size of the index database."},
		func() float64 { return float64(d.Size()) }))
	// Compaction debt: how far RocksDB's background compaction lags.
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "blockbook_db_level0_files", Help: "Level-0 table files, summed over column families."},
		func() float64 { n, _ := d.CompactionDebt(); return float64(n) }))
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "blockbook_db_pending_compaction_bytes", Help: "RocksDB's estimate of bytes pending compaction, summed over column families."},
		func() float64 { _, n := d.CompactionDebt(); return float64(n) }))
	registerMemoryUse(reg, d)
	return d, nil
}

// newWorker builds the sync worker over the chain type's index.
func newWorker(e stackEnv, stack *chainStack, mem memoryPlan) *syncer.Syncer {
	pollMs := e.cfg.BlockPollIntervalMs
	if e.o.ResyncIndexMs > 0 {
		pollMs = e.o.ResyncIndexMs
	}
	if pollMs <= 0 {
		pollMs = 1000
	}
	bulkThreshold := uint32(e.o.BulkThreshold)
	if e.o.Workers == 1 {
		bulkThreshold = 0 // Blockbook loads in bulk only with more than one worker
	}
	syncCfg := syncer.Config{
		Workers: e.o.Workers, MemoryBudget: mem.syncWorker, PollInterval: time.Duration(pollMs) * time.Millisecond,
		// The threshold applies to indexes that load in bulk (syncer.BulkIndex).
		BulkThreshold: bulkThreshold, OnBulk: mem.bulkMemory(e.d.SetBlockCacheBytes, e.o.DBCache),
		AfterSync: stack.afterSync, CheckSpace: e.d.CheckSpace,
	}
	return syncer.New(e.backend.Chain, stack.index, syncCfg, e.log, syncer.NewMetrics(e.reg))
}

// newAPIConfig is the query services' configuration from the flags, the
// coin's config and the environment.
func newAPIConfig(e stackEnv, worker tipSource, fiatCfg *fiat.Config) api.Config {
	o, log := e.o, e.log
	xpubCacheBytes := o.xpubCacheBytes(log)
	apiCfg := api.Config{
		Build: api.BuildInfo{Version: build.Version, GitCommit: commit(), BuildTime: build.BuildTime, SyncMode: o.Sync,
			About: "Blockbook-compatible blockchain indexer and API server"},
		Log:              log,
		Eip1559Fees:      e.cfg.Eip1559Fees,
		DisableXpubCache: o.NoXpubCache,
		Limits:           historyLimits(o, e.env, api.Limits{MaxXpubGap: o.XpubMaxGap, XpubCacheBytes: xpubCacheBytes}),
		FiatRates:        fiatCfg != nil,
		TokenFiatRates:   fiatCfg != nil && fiatCfg.TokenRates() && e.backend.Type == bchain.ChainEthereumType,
		StakingPools:     e.env.stakingPools(e.backend.Type, log),
		ENS:              ensContracts(e.cfg),
		Node:             worker.live,
	}
	apiCfg.RunesNetwork = runesNetworks[e.cfg.CoinName] // read only with the Runes index
	apiCfg.TxidCache = newTxidCache(e)
	if !o.NoTxCache && !e.d.ReadOnly() {
		apiCfg.TxCache = e.d
	}
	return apiCfg
}

// serve runs the servers, the mempool, the fiat downloader and (with
// -sync) the sync worker until ctx ends, then stops them in order.
func serve(ctx context.Context, e stackEnv, stack *chainStack, worker tipSource, fiatCfg *fiat.Config) error {
	o, log := e.o, e.log
	apiCfg := newAPIConfig(e, worker, fiatCfg)
	apiCfg.BlockFilters = stack.blockFilters
	live := worker.live
	stack.configure(&apiCfg)
	svc := stack.newService(e.d, worker.status, apiCfg)
	over := server.NewOverLimits(time.Hour)
	settings := newRuntimeSettings(e.env, log)
	ws, err := newWebsocket(o, e.env, svc, log, e.reg, over, settings, e.gate)
	if err != nil {
		return err
	}
	limiter, err := restLimiter(o, e.env, over, e.reg, "rest", nil)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	srvs := &servers{o: o, wg: &wg, log: log, tls: e.tls}
	if addr, prefix := binding(o.Internal, "127.0.0.1", e.backend.Params.InternalPort); addr != "" {
		internal := server.NewInternal(addr, promreg.CoinLabeled(e.reg, e.cfg.CoinName), worker.status, live, worker.maxLag, log)
		internal.Admin(server.AdminConfig{User: e.env.AdminUser, Password: e.env.AdminPassword, Settings: settings, Over: over, Websocket: ws,
			Checkpoint: checkpointer(e.d), Contracts: contractAdmin(e, svc), Traces: traceRetrierOf(stack), Log: log})
		internal.Wrap(func(h http.Handler) http.Handler { return withPrefix(prefix, false, h) })
		if err := srvs.start("internal", addr, internal); err != nil {
			return err
		}
	}
	if addr, prefix := binding(o.Public, "", e.backend.Params.PublicPort); addr != "" {
		pcfg := server.PublicConfig{Addr: addr, Websocket: ws, ExplorerURL: o.ExplorerURL, NFTGateway: o.NFTGateway, Limiter: limiter, Wrap: func(h http.Handler) http.Handler { return withPrefix(prefix, true, h) },
			Gate: e.gate, Listener: o.Listen.kit(e.tls != nil), MaxBlockWeight: cmp.Or(o.ProjectedBlockWeight, e.backend.Params.MaxBlockWeight)}
		if err := srvs.start("public", addr, server.NewPublic(svc, pcfg, log, e.reg)); err != nil {
			srvs.shutdown()
			return err
		}
	}
	mpFront, err := startEsplora(srvs, o, e, stack, worker, svc, over)
	if err != nil {
		srvs.shutdown()
		return err
	}
	for _, start := range []func(*servers, *Options, stackEnv, api.Service, *server.OverLimits) error{startOrd, startMesh, startSilentPayments} {
		if err := start(srvs, o, e, svc, over); err != nil {
			srvs.shutdown()
			return err
		}
	}
	if _, err := startElectrum(e, stack, svc, worker, srvs); err != nil {
		srvs.shutdown()
		return err
	}
	syncCtx, stopSync := context.WithCancel(ctx)
	defer stopSync()
	wg.Add(1)
	go func() {
		defer wg.Done()
		ws.Run(syncCtx)
	}()
	worker.onBlock(func(ev syncer.BlockEvent) {
		if stack.onBlock != nil {
			stack.onBlock(ev)
		}
		if ev.HasTip && !ev.Disconnected {
			ws.OnBlock(ev.Tip.Height, ev.Tip.Hash, ev.Connected)
		}
	})
	stack.startMempool(syncCtx, &wg, ws, o.Sync, worker.status)
	startFiat(syncCtx, &wg, o, fiatCfg, e.backend.Type, e.d, rateSinks(ws, mpFront), log, e.reg)
	startFourByte(syncCtx, &wg, e)
	worker.run(syncCtx, &wg)
	<-ctx.Done()
	log.Info("shutting down")
	stopSync()
	srvs.shutdown()
	wg.Wait()
	return nil
}

// startSync runs the sync worker with -sync.
func startSync(ctx context.Context, wg *sync.WaitGroup, o *Options, worker *syncer.Syncer, b *bchain.Backend, log *slog.Logger) {
	if !o.Sync {
		log.Info("sync worker not started (run with -sync to index new blocks)")
		return
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		// A fatal sync error is logged by the worker; the API keeps
		// serving the index and /health reports the problem.
		_ = worker.Run(ctx, b.Notifier)
	}()
}

// httpServer is what the public and internal servers are to the program.
type httpServer interface {
	Serve(net.Listener) error
	Shutdown(context.Context) error
}

// servers starts HTTP servers on their addresses and stops them together.
type servers struct {
	o       *Options
	wg      *sync.WaitGroup
	log     *slog.Logger
	tls     *tls.Config // -certfile: both servers speak TLS
	started []httpServer
}

func (s *servers) start(name, addr string, srv httpServer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%w: %s server: %v", bchain.ErrConfig, name, err)
	}
	if name != "internal" { // the internal port is private: the balancer's checks are never refused
		ln = s.o.Listen.kit(s.tls != nil).Listener(ln)
	}
	if s.tls != nil {
		ln = tls.NewListener(ln, s.tls)
	}
	s.started = append(s.started, srv)
	if s.o.OnListen != nil {
		s.o.OnListen(name, ln.Addr().String())
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := srv.Serve(ln); err != nil {
			s.log.Error("server failed", "server", name, "err", err)
		}
	}()
	return nil
}

func (s *servers) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, srv := range s.started {
		if err := srv.Shutdown(ctx); err != nil {
			s.log.Warn("server shutdown", "err", err)
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

// newWebsocket builds the websocket API from the flags and the
// environment: -wsallowedorigins, when given, wins over
// <NET>_WS_ALLOWED_ORIGINS.
func newWebsocket(o *Options, env *envSettings, svc api.Service, log *slog.Logger, reg prometheus.Registerer, over *server.OverLimits, settings *runtimeSettings, gate *listen.Gate) (*server.Websocket, error) {
	proxies, err := server.ParseTrustedProxies(o.WsTrustedProxies)
	if err != nil {
		return nil, fmt.Errorf("%w: -wstrustedproxies: %v", bchain.ErrConfig, err)
	}
	origins := splitList(o.WsAllowedOrigins)
	if origins == nil {
		origins = env.AllowedOrigins
	}
	cfg := server.WebsocketConfig{
		AllowedOrigins: origins, MaxConnsPerIP: o.WsMaxConnsPerIP, TrustedProxies: proxies, ClientIP: env.ClientIP,
		EnableSubNewTx: o.EnableSubNewTx, Gate: gate,
	}
	cfg.RPCCallAllowed = settings.allowed
	wsLimits(o, &cfg, over)
	return server.NewWebsocket(svc, cfg, log, reg), nil
}

// historyLimits sets the balance-history caps: -balancehistorymaxtxs,
// when given, for both surfaces; otherwise the environment's (0: no cap).
func historyLimits(o *Options, env *envSettings, l api.Limits) api.Limits {
	ws, rest := env.HistoryMaxTxsWS, env.HistoryMaxTxsREST
	if o.BalanceHistoryMaxTxs > 0 || o.IsSet("balancehistorymaxtxs") {
		ws, rest = o.BalanceHistoryMaxTxs, o.BalanceHistoryMaxTxs
	}
	uncapped := func(n int) int {
		if n == 0 {
			return -1 // api.Limits: negative is no cap, zero the default
		}
		return n
	}
	l.MaxHistoryTxs, l.MaxHistoryTxsREST = uncapped(ws), uncapped(rest)
	return l
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
