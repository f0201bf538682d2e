package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/bchain/coins/eth"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/ethmempool"
	"github.com/openexplorer/blockbook/server"
	"github.com/openexplorer/blockbook/syncer"
)

// newEthStack builds the Ethereum-type parts: the Ethereum index (blocks
// connected one by one, failed traces retried after each pass) and the
// pending-tx follower when the sync worker runs.
func newEthStack(ctx context.Context, e stackEnv) (*chainStack, error) {
	return newAccountStack(ctx, e, api.NewEthService)
}

// newAccountStack is the account-model stack with the given query
// service (Ethereum's, or Tron's names over it).
func newAccountStack(ctx context.Context, e stackEnv, newSvc func(api.Store, *bchain.Backend, api.SyncStatus, api.Config) *api.EthService) (*chainStack, error) {
	b := e.backend
	if b.Eth == nil {
		return nil, fmt.Errorf("%w: the Ethereum-type backend has no account queries", bchain.ErrConfig)
	}
	if !e.o.DryRun {
		checkEthTracing(ctx, b, e.log)
	}
	// Token metadata is read once, when the index first meets a contract,
	// in the sync worker's fetch step (EthIndex.PrepareBlock).
	relay, err := newRelay(e)
	if err != nil {
		return nil, err
	}
	x := db.NewEthIndex(e.d, e.cfg.BlockAddressesToKeep, b.Eth.ContractInfo)
	if e.cfg.AddressAliases {
		x.SetAliases(eth.ENSName) // ENS names from the blocks' NameRegistered logs
	}
	var svc *api.EthService
	s := &chainStack{index: x, newService: func(d *db.DB, sync api.SyncStatus, cfg api.Config) api.Service {
		svc = newSvc(d, b, sync, cfg)
		return svc
	}}
	// Blocks whose trace failed are traced again once the tip is reached.
	s.traces = &traceRetrier{}
	s.afterSync = func(ctx context.Context) error {
		return s.traces.retry(ctx, func(ctx context.Context) error {
			_, err := x.RetryTraces(ctx, func(h uint32, hash bchain.Hash) (*bchain.Block, error) { return b.Chain.Block(ctx, hash, h) })
			return err
		})
	}
	mp, err := newEthMempool(e, relay)
	if err != nil {
		return nil, err
	}
	s.configure = func(cfg *api.Config) {
		cfg.AddressAliases = e.cfg.AddressAliases
		if mp != nil {
			cfg.EthMempool = mp
		}
	}
	if mp == nil {
		// No mempool follower: the relay's cache of private txs is still
		// checked against the relay, or it would only grow.
		s.runMempool = func(ctx context.Context, wg *sync.WaitGroup, _ *server.Websocket, _ func() bool) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				relayRun(ctx, relay)
			}()
		}
		return s, nil
	}
	// A privately sent tx is read back into the mempool at once (the
	// public node's announcements never carry it).
	if (e.cfg.DisableMempoolSync || relay != nil && relay.FetchesMempool()) && b.Broadcast != nil {
		b.Broadcast = resyncAfterSend{TxBroadcaster: b.Broadcast, mp: mp, log: e.log}
	}
	s.onBlock = func(ev syncer.BlockEvent) {
		if ev.Connected != nil {
			relayMined(relay, ev.Connected)
			mp.OnBlock(ev.Connected)
		}
	}
	s.runMempool = func(ctx context.Context, wg *sync.WaitGroup, ws *server.Websocket, inSync func() bool) {
		mp.OnTx(func(tx *ethmempool.Tx) { ws.OnMempoolTx(svc.EthMempoolTxNotice(tx)) })
		wg.Add(2)
		go func() {
			defer wg.Done()
			followAfterSync(ctx, inSync, mp, b.TxNotifier)
		}()
		go func() {
			defer wg.Done()
			relayRun(ctx, relay)
		}()
	}
	return s, nil
}

// followAfterSync follows the mempool once the initial sync is done, as
// Blockbook does, so its fetches do not compete with the blocks'.
func followAfterSync(ctx context.Context, inSync func() bool, mp *ethmempool.Mempool, n bchain.TxNotifier) {
	if waitInSync(ctx, inSync) {
		_ = mp.Run(ctx, n)
	}
}

// checkBackend runs before the index is opened: an Ethereum-type node must
// be on the coin's chain id (eth_chainId), else nothing is indexed and the
// program stops; an unreachable node is only warned about, since the node
// checks its chain id again before the first block (eth.Node.BestBlock).
// Keys that do nothing for this chain type are warned about once.
func checkBackend(ctx context.Context, cfg *bchain.Config, b *bchain.Backend, log *slog.Logger) error {
	if b.Type != bchain.ChainEthereumType || b.Eth == nil {
		for _, k := range cfg.EthOnlyKeys() {
			log.Warn("config key has no effect on this coin (Ethereum-type coins only)", "key", k)
		}
		return nil
	}
	if r := cfg.MissingBlockRetry; r != nil && r.TipRecheckThreshold > 0 {
		log.Warn("missingBlockRetry.tipRecheckThreshold has no effect here: one retry path uses recheckThreshold")
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	id, err := b.Eth.ChainID(ctx)
	if errors.Is(err, bchain.ErrConfig) {
		return err
	}
	if err != nil {
		log.Warn("could not ask the node its chain id; it is checked before the first block is read", "err", err)
		return nil
	}
	log.Info("node chain id checked", "chain_id", id.String(), "coin", cfg.CoinName)
	return nil
}

// resyncAfterSend makes a tx sent through this server enter the mempool at
// once when disableMempoolSync leaves no pending-tx subscription (as
// Blockbook adds the txs it sends).
type resyncAfterSend struct {
	bchain.TxBroadcaster
	mp  *ethmempool.Mempool
	log *slog.Logger
}

func (r resyncAfterSend) SendRawTx(ctx context.Context, raw []byte) (bchain.Hash, error) {
	h, err := r.TxBroadcaster.SendRawTx(ctx, raw)
	if err == nil {
		if err := r.mp.Resync(ctx, true); err != nil {
			r.log.Warn("mempool resync after a sent tx failed", "txid", h.String(), "err", err)
		}
	}
	return h, err
}

// newEthMempool follows an Ethereum-type node's pending txs when the sync
// worker runs (nil otherwise).
// The txs sent privately join the node's when the relay caches them.
func newEthMempool(e stackEnv, relay *eth.Relay) (*ethmempool.Mempool, error) {
	b := e.backend
	if !(e.o.Sync || e.o.Replica.On) || b.Mempool == nil {
		return nil, nil
	}
	expiry, err := e.cfg.MempoolTimeout(relay != nil)
	if err != nil {
		return nil, err
	}
	var node eth.MempoolNode = struct {
		bchain.MempoolSource
		bchain.EthereumChain
	}{b.Mempool, b.Eth}
	if relay != nil && relay.FetchesMempool() {
		node = eth.RelayMempool{Next: node, Relay: relay}
	}
	return ethmempool.New(node, ethmempool.Config{
		Resync: time.Duration(e.o.ResyncMempoolMs) * time.Millisecond, Expiry: expiry,
		Workers: e.cfg.MempoolWorkers, Log: e.log.With("subsystem", "mempool"),
	}), nil
}

// relayMined drops the txs of a connected block from the relay's cache.
func relayMined(relay *eth.Relay, blk *bchain.Block) {
	if relay == nil || blk.Eth == nil {
		return
	}
	for i := range blk.Eth.Txs {
		relay.Remove(blk.Eth.Txs[i].Hash)
	}
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
