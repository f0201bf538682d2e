package app

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/ethmempool"
	"github.com/openexplorer/blockbook/server"
)

// newEthMempool follows an Ethereum-type node's pending txs when the sync
// worker runs (nil otherwise).
func newEthMempool(o *Options, cfg *bchain.Config, b *bchain.Backend, log *slog.Logger) *ethmempool.Mempool {
	if !o.Sync || b.Type != bchain.ChainEthereumType || b.Mempool == nil || b.Eth == nil {
		return nil
	}
	node := struct {
		bchain.MempoolSource
		bchain.EthereumChain
	}{b.Mempool, b.Eth}
	return ethmempool.New(node, ethmempool.Config{
		Resync: time.Duration(o.ResyncMempoolMs) * time.Millisecond, Expiry: time.Duration(cfg.MempoolTxTimeoutHours) * time.Hour,
		Workers: cfg.MempoolWorkers, Log: log.With("subsystem", "mempool"),
	})
}

// runEthMempool announces new pending txs to websocket subscribers and
// follows the node until ctx ends.
func runEthMempool(ctx context.Context, wg *sync.WaitGroup, mp *ethmempool.Mempool, svc api.Service, ws *server.Websocket, notifier bchain.TxNotifier) {
	if es, ok := svc.(*api.EthService); ok {
		mp.OnTx(func(tx *ethmempool.Tx) { ws.OnMempoolTx(es.EthMempoolTxNotice(tx)) })
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = mp.Run(ctx, notifier)
	}()
}

// checkEthTracing asks an Ethereum-type node whether it can trace blocks
// when internal transactions are to be processed; one without the debug
// API gets them switched off with a warning (see eth.Node.CheckTracing).
func checkEthTracing(ctx context.Context, b *bchain.Backend, log *slog.Logger) {
	c, ok := b.Chain.(interface{ CheckTracing(context.Context) error })
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.CheckTracing(ctx); err != nil {
		log.Warn("could not ask the node whether it traces blocks; tracing stays on", "err", err)
	}
}
