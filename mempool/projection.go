package mempool

import (
	"context"
	"sync"
	"time"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/mempool/projected"
)

// Projection keeps mempool.space's projected blocks of the pool current:
// the pool reports each change under the Mempool's lock (it only queues
// it), and Run applies the queue to a projected.Engine and publishes a new
// projection at most once per refresh interval.
type Projection struct {
	m      *Mempool
	engine *projected.Engine
	// sigops: the chain caps a block's sigop cost, so txs carry theirs.
	sigops bool

	mu      sync.Mutex
	ops     []projOp
	applied time.Time // when Run last applied the queue
	wake    chan struct{}
	onRef   []func()
}

// projOp is one queued change: a tx to add, or a txid to remove.
type projOp struct {
	tx     *projected.Tx
	remove bchain.Hash
}

// Refresh pacing: a projection is rebuilt from scratch (a greedy walk of
// the whole mempool), so it waits at least minRefresh after the last one
// and at least buildShare times as long as that one took: the rebuilds of
// a huge mempool then take at most a fifth of a core.
const (
	minRefresh = time.Second
	buildShare = 5
)

// EnableProjection makes the mempool keep projected blocks for a chain
// of params; call it before Run, and run the Projection beside it.
func (m *Mempool) EnableProjection(params projected.Params) *Projection {
	p := &Projection{m: m, engine: projected.NewEngine(params), sigops: params.MaxSigops > 0, wake: make(chan struct{}, 1)}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pool.watch = p
	for _, e := range m.pool.txs {
		p.added(m.pool, e.tx)
	}
	return p
}

// added queues tx once its fee is known (its inputs resolved); a tx the
// engine holds already is ignored there. Its parents are the pool txs it
// spends and the unresolved inputs' txs, which may arrive later.
func (p *Projection) added(pl *pool, tx *Tx) {
	fee, ok := tx.Fee()
	if !ok {
		return
	}
	pt := &projected.Tx{Txid: tx.Txid, Fee: fee, Weight: uint32(tx.Weight()), Size: uint32(tx.Size)}
	if p.sigops {
		pt.Sigops = SigOpCost(tx)
	}
	for i := range tx.Vin {
		parent := tx.Vin[i].PrevTxid
		if _, inPool := pl.txs[parent]; inPool && !tx.Vin[i].Coinbase {
			pt.Parents = append(pt.Parents, parent)
		}
	}
	p.queue(projOp{tx: pt})
}

func (p *Projection) removed(txid bchain.Hash) { p.queue(projOp{remove: txid}) }

func (p *Projection) queue(op projOp) {
	p.mu.Lock()
	p.ops = append(p.ops, op)
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Run applies the queued changes and publishes projections until ctx ends.
func (p *Projection) Run(ctx context.Context) {
	var last time.Time
	var took time.Duration
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		}
		wait := max(minRefresh, buildShare*took) - time.Since(last)
		if wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
		p.apply()
		last = time.Now()
		p.engine.Refresh()
		took = time.Since(last)
		p.mu.Lock()
		fns := p.onRef
		p.mu.Unlock()
		for _, fn := range fns {
			fn()
		}
	}
}

// OnRefresh calls fn after each rebuild Run makes (at most once a
// second); fn must not block.
func (p *Projection) OnRefresh(fn func()) {
	p.mu.Lock()
	p.onRef = append(p.onRef, fn)
	p.mu.Unlock()
}

// apply hands the queue to the engine in order: runs of additions and of
// removals, each as one batch.
func (p *Projection) apply() {
	p.mu.Lock()
	ops := p.ops
	p.ops, p.applied = nil, time.Now()
	p.mu.Unlock()
	var add []projected.Tx
	var remove []bchain.Hash
	flush := func() {
		if len(add) > 0 || len(remove) > 0 {
			p.engine.Update(add, remove)
		}
		add, remove = nil, nil
	}
	for _, op := range ops {
		if op.tx != nil {
			add = append(add, *op.tx)
			continue
		}
		if len(add) > 0 {
			flush() // a removal after additions applies after them
		}
		remove = append(remove, op.remove)
	}
	flush()
}

// Cpfp describes a tx of the projection (projected.Engine.Cpfp).
func (p *Projection) Cpfp(txid bchain.Hash) (projected.Cpfp, bool) { return p.engine.Cpfp(txid) }

// Snapshot is the latest published projection.
func (p *Projection) Snapshot() *projected.Snapshot { return p.engine.Latest() }

// maxLag is how long changes may wait for Run before the projection is
// no longer current (Run paces itself far below it).
const maxLag = 30 * time.Second

// Current reports whether the projection follows the node's mempool: the
// mempool is in sync, and Run applied the pool's changes recently (or
// there were none).
func (p *Projection) Current() bool {
	p.mu.Lock()
	lagging := len(p.ops) > 0 && time.Since(p.applied) > maxLag
	p.mu.Unlock()
	return !lagging && p.m.Status().InSync
}
