package api

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// chainInfoCache keeps the node's chain info for a few seconds, so that the
// status endpoint, which monitoring polls often, does not load the node and
// answers quickly while the node is down. With a liveness probe it never
// calls the node: the probe refreshes the chain info off the request path.
type chainInfoCache struct {
	chain bchain.BlockChain
	probe NodeProbe
	ttl   time.Duration

	mu   sync.Mutex
	at   time.Time
	info *bchain.ChainInfo
	err  error
}

func newChainInfoCache(c bchain.BlockChain, probe NodeProbe) *chainInfoCache {
	return &chainInfoCache{chain: c, probe: probe, ttl: 5 * time.Second}
}

// get returns the node's chain info, or an error while the node does not
// answer (with a probe: at once, from the probe's verdict).
func (c *chainInfoCache) get(ctx context.Context) (*bchain.ChainInfo, error) {
	if c.probe != nil {
		return c.fromProbe(ctx)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.at) < c.ttl {
		return c.info, c.err
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	c.info, c.err = c.chain.ChainInfo(ctx)
	c.at = time.Now()
	return c.info, c.err
}

func (c *chainInfoCache) fromProbe(ctx context.Context) (*bchain.ChainInfo, error) {
	st := c.probe.State()
	if st.Info == nil && st.InfoErr == "" && st.Responding {
		// Right after startup: wait briefly for the probe's first answer.
		wctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		c.probe.WaitInfo(wctx)
		cancel()
		st = c.probe.State()
	}
	if err := c.probe.Check(); err != nil {
		return st.Info, err
	}
	if st.Info == nil {
		if st.InfoErr != "" {
			return nil, fmt.Errorf("%s: %w", st.InfoErr, bchain.ErrNodeUnavailable)
		}
		return nil, fmt.Errorf("node chain info not known yet: %w", bchain.ErrNodeUnavailable)
	}
	return st.Info, nil
}

// Status answers /api and /api/v2. It works whatever state the sync and the
// node are in: node problems show in backend.error.
func (s *UtxoService) Status(ctx context.Context) (*SystemInfo, error) {
	out, err := s.baseStatus(ctx)
	if err == nil && s.cfg.Mempool != nil {
		ms := s.cfg.Mempool.Status()
		out.Blockbook.InSyncMempool, out.Blockbook.MempoolSize = ms.InSync && out.Backend.Error == "", ms.Size
		out.Blockbook.LastMempoolTime = ms.LastSync
	}
	return out, err
}

// baseStatus is the status every chain type answers: index, sync, node
// and fiat rates.
func (s *core) baseStatus(ctx context.Context) (*SystemInfo, error) {
	out, err := statusOf(ctx, s.db, s.backend.Params, s.sync, s.cfg.Build, s.info)
	if err == nil {
		out.Blockbook.SupportedStakingPools = s.cfg.StakingPools
		if ferr := s.fiatStatus(out.Blockbook); ferr != nil {
			s.log.Warn("status: reading the fiat rates failed", "err", ferr) // the status answers anyway
		}
	}
	return out, err
}

func statusOf(ctx context.Context, d Store, p bchain.CoinParams, sync SyncStatus, build BuildInfo, info *chainInfoCache) (*SystemInfo, error) {
	var st SyncState
	if sync != nil {
		st = sync.State()
	} else {
		snap, err := d.Snapshot()
		if err != nil {
			return nil, err
		}
		tip, ok, err := db.ReadTip(snap)
		snap.Release()
		if err != nil {
			return nil, err
		}
		st = SyncState{BestHeight: tip.Height, BestHash: tip.Hash, HasTip: ok}
	}
	bb := &BlockbookInfo{
		Coin: p.Name, Network: p.APINetwork, Host: build.Host, Version: build.Version,
		GitCommit: build.GitCommit, BuildTime: build.BuildTime, SyncMode: build.SyncMode,
		InitialSync: st.InitialSync, InSync: st.InSync, SyncError: st.Err, BestHeight: st.BestHeight,
		LastBlockTime: st.LastBlockTime, Decimals: p.Decimals, DbSize: d.Size(), About: build.About,
	}
	if r, ok := sync.(ReplicaStatus); ok {
		ri := r.ReplicaState()
		bb.Replica = &ri
	}
	backend := &BackendInfo{}
	ci, err := info.get(ctx)
	if err != nil {
		// As Blockbook: the node's fields stay empty and the index does not
		// claim to be in sync with a node that does not answer.
		backend.Error = err.Error()
		bb.InSync = false
	} else {
		*backend = BackendInfo{
			Chain: ci.Chain, Blocks: ci.Blocks, Headers: ci.Headers, BestBlockHash: ci.BestBlockHash,
			Difficulty: ci.Difficulty, SizeOnDisk: ci.SizeOnDisk, Version: ci.Version, Subversion: ci.Subversion,
			ProtocolVersion: ci.ProtocolVersion, TimeOffset: ci.TimeOffset, Warnings: ci.Warnings, Consensus: ci.Consensus,
			ConsensusVersion: ci.ConsensusVersion,
		}
		bb.SyncProgress = progressOf(st, ci.Blocks)
	}
	return &SystemInfo{Blockbook: bb, Backend: backend}, nil
}

// progressOf is the sync's progress toward the node's height, nil once the
// index has it.
func progressOf(st SyncState, nodeBlocks int) *SyncProgress {
	if st.InSync || nodeBlocks <= int(st.BestHeight) {
		return nil
	}
	p := &SyncProgress{BlocksLeft: nodeBlocks - int(st.BestHeight), BlocksPerSecond: math.Round(st.BlocksPerSecond*100) / 100}
	if st.BlocksPerSecond > 0 {
		eta := int64(math.Ceil(float64(p.BlocksLeft) / st.BlocksPerSecond))
		p.EtaSeconds = &eta
	}
	return p
}
