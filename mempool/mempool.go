package mempool

import (
	"bytes"
	"cmp"
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/syncer"
)

// Node is what the mempool needs from the chain node; *btc.Node satisfies it.
type Node interface {
	MempoolTxids(ctx context.Context) ([]bchain.Hash, error)
	RawTx(ctx context.Context, txid bchain.Hash, inBlock bchain.Hash) ([]byte, error)
}

// BatchFetcher fetches many txs per request; *btc.Node does, with JSON-RPC
// batches. When the Node given to New implements it, loads and resyncs use
// it (several times faster against btcd, which closes the connection after
// every request). An entry is nil when the node does not have that tx.
type BatchFetcher interface {
	RawTxs(ctx context.Context, txids []bchain.Hash) ([][]byte, error)
}

// Config tunes the mempool.
type Config struct {
	// Workers is the number of concurrent tx fetches (mempool_workers).
	Workers int
	// ResyncInterval is the period of the full diff against the node's
	// mempool, the safety net for lost notifications.
	ResyncInterval time.Duration
	// Filter configures per-tx Golomb filters; P = 0 turns them off.
	Filter db.FilterParams
	Log    *slog.Logger
	// Metrics, when set, receives the mempool's gauges and counters.
	Metrics prometheus.Registerer
}

// Defaults applied by New.
const (
	DefaultWorkers        = 8
	DefaultResyncInterval = 60 * time.Second
)

// Internal tuning.
const (
	// minResyncGap spaces the resyncs that block events ask for, so that a
	// catch-up connecting many blocks does not list the node's mempool
	// after each of them; the gap is also at least resyncGapFactor times
	// what listing and diffing the node's mempool took last time, so that
	// a big mempool is not relisted back to back.
	minResyncGap    = time.Second
	resyncGapFactor = 4
	// retryGapFactor likewise spaces retries of unresolved inputs by ten
	// times what the last retry took.
	retryGapFactor = 10
	// maxQueuedBlocks bounds the block events waiting for the event loop;
	// beyond it they are dropped and the resync that follows every block
	// event does their removals instead.
	maxQueuedBlocks = 8
	// goneKeep is how long removed txids are remembered (see pool.gone).
	goneKeep = 10 * time.Minute
	// applyChunk is how many txs one write-lock hold adds.
	applyChunk = 1000
	// fetchChunk is how many txids one batch fetch asks for.
	fetchChunk = 500
)

// Mempool follows the node's mempool. Read methods may be called from any
// goroutine at any time; they never wait for the node or the database.
type Mempool struct {
	db     *db.DB
	node   Node
	batch  BatchFetcher // nil when the node cannot batch
	parser bchain.UtxoParser
	cfg    Config
	log    *slog.Logger
	met    *metrics

	// clock orders observations of the node (fetches, listings) and pool
	// mutations; see pool.gone and entry.obs.
	clock atomic.Uint64

	mu   sync.RWMutex
	pool *pool

	smu       sync.Mutex
	listeners []func(*Tx)
	// resolvedListeners hear of inputs resolved after a tx was announced.
	resolvedListeners []func(*Tx, []bchain.AddrDesc)
	loaded            bool      // the initial load finished
	lastOK            bool      // the last resync succeeded
	lastSync          time.Time // end of the last successful resync

	emu           sync.Mutex
	events        []syncer.BlockEvent
	eventsDropped bool
	eventWake     chan struct{}

	pmu        sync.Mutex
	pending    []bchain.Hash
	pendingSet map[bchain.Hash]struct{}
	txWake     chan struct{}

	resyncWake chan struct{}
	running    atomic.Bool

	// Owned by the resync loop: how long the last listing and diff took,
	// and when unresolved inputs were last retried, how long that took,
	// and when the node was last asked for them.
	listTook time.Duration
	retry    struct {
		last, lastNode time.Time
		took           time.Duration
	}

	// rbf is the replacement history (its own lock).
	rbf *Replacements

	// hooks are test seams; nil in production.
	hooks struct {
		// beforeApply runs in a resync after the missing txs were fetched
		// and resolved, before they are added.
		beforeApply func()
	}
}

// New returns a mempool reading confirmed prevouts from d (which may be nil:
// prevouts then come from the pool and the node only).
func New(d *db.DB, node Node, parser bchain.UtxoParser, cfg Config) *Mempool {
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.ResyncInterval <= 0 {
		cfg.ResyncInterval = DefaultResyncInterval
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	m := &Mempool{
		db: d, node: node, parser: parser, cfg: cfg, log: cfg.Log.With("subsystem", "mempool"),
		met: newMetrics(cfg.Metrics), pool: newPool(), pendingSet: map[bchain.Hash]struct{}{},
		eventWake: make(chan struct{}, 1), txWake: make(chan struct{}, 1), resyncWake: make(chan struct{}, 1),
		rbf: newReplacements(DefaultMaxRbfTrees),
	}
	if b, ok := node.(BatchFetcher); ok {
		m.batch = b
	}
	return m
}

// Replacements is the RBF replacements this process saw.
func (m *Mempool) Replacements() *Replacements { return m.rbf }

// tick advances the logical clock.
func (m *Mempool) tick() uint64 { return m.clock.Add(1) }

// OnTx registers fn to be called once for every tx newly added to the
// mempool (by notification or resync), after its inputs were resolved as
// far as possible. fn runs on the mempool's goroutines and must not block.
func (m *Mempool) OnTx(fn func(*Tx)) {
	m.smu.Lock()
	defer m.smu.Unlock()
	m.listeners = append(m.listeners, fn)
}

func (m *Mempool) announce(txs []*Tx) {
	if len(txs) == 0 {
		return
	}
	m.smu.Lock()
	ls := m.listeners
	m.smu.Unlock()
	for _, tx := range txs {
		for _, fn := range ls {
			fn(tx)
		}
	}
}

// OnRemoved registers fn to be called with every txid the mempool drops
// (confirmed, replaced, evicted or vanished). fn runs under the mempool's
// lock and must neither block nor call the Mempool.
func (m *Mempool) OnRemoved(fn func(txid bchain.Hash)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pool.onRemove = append(m.pool.onRemove, fn)
}

// OnResolved registers fn to be called when inputs of a tx already in the
// mempool become known later (their parent was not indexed yet, or arrived
// after the child): descs are the addresses those inputs spend from that
// the tx was not announced with. fn must not block.
func (m *Mempool) OnResolved(fn func(tx *Tx, descs []bchain.AddrDesc)) {
	m.smu.Lock()
	defer m.smu.Unlock()
	m.resolvedListeners = append(m.resolvedListeners, fn)
}

// announceResolved tells OnResolved listeners what became known between
// the published old and new versions of a tx.
func (m *Mempool) announceResolved(old, tx *Tx) {
	known := map[string]bool{}
	for _, d := range old.OutDescs {
		known[string(d)] = true
	}
	for _, p := range old.Prevouts {
		if p.Known {
			known[string(p.Desc)] = true
		}
	}
	var descs []bchain.AddrDesc
	for _, p := range tx.Prevouts {
		if p.Known && len(p.Desc) > 0 && !known[string(p.Desc)] {
			known[string(p.Desc)] = true
			descs = append(descs, p.Desc)
		}
	}
	if len(descs) == 0 {
		return
	}
	m.smu.Lock()
	ls := m.resolvedListeners
	m.smu.Unlock()
	for _, fn := range ls {
		fn(tx, descs)
	}
}

// OnBlock takes a block event from the sync worker (Syncer.OnBlock). It
// only queues the event and returns at once; the mempool removes the
// block's txs and their conflicts and resyncs on its own goroutine.
func (m *Mempool) OnBlock(ev syncer.BlockEvent) {
	m.emu.Lock()
	if len(m.events) < maxQueuedBlocks {
		m.events = append(m.events, ev)
	} else {
		m.eventsDropped = true
	}
	m.emu.Unlock()
	select {
	case m.eventWake <- struct{}{}:
	default:
	}
}

// Tx returns a mempool tx.
func (m *Mempool) Tx(txid bchain.Hash) (*Tx, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if e, ok := m.pool.txs[txid]; ok {
		return e.tx, true
	}
	return nil, false
}

// ScriptByHash finds the descriptor a pending tx touches whose sha256 is
// sh (Electrum's and Esplora's script hash), in one map lookup.
func (m *Mempool) ScriptByHash(sh [32]byte) (bchain.AddrDesc, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	d, ok := m.pool.byHash[sh]
	return bchain.AddrDesc(d), ok
}

// AddrTxs lists the mempool txs touching desc, newest first (FirstSeen
// descending, then txid ascending), with the positions where they touch
// it as the index stores them: ^vin for inputs, then vout for outputs.
func (m *Mempool) AddrTxs(desc bchain.AddrDesc) []AddrTx {
	m.mu.RLock()
	s := m.pool.byAddr[string(desc)]
	var out []AddrTx
	if s != nil {
		out = make([]AddrTx, 0, len(s.ids))
		for _, h := range s.ids {
			e := m.pool.txs[h]
			if e == nil {
				continue // cannot happen: the pool keeps byAddr consistent
			}
			tx := e.tx
			at := AddrTx{Txid: h, FirstSeen: tx.FirstSeen}
			for i := range tx.Prevouts {
				if p := &tx.Prevouts[i]; p.Known && bytes.Equal(p.Desc, desc) {
					at.Indexes = append(at.Indexes, ^int32(i))
				}
			}
			for i, d := range tx.OutDescs {
				if bytes.Equal(d, desc) {
					at.Indexes = append(at.Indexes, int32(i))
				}
			}
			out = append(out, at)
		}
	}
	m.mu.RUnlock()
	slices.SortFunc(out, func(a, b AddrTx) int {
		if c := cmp.Compare(b.FirstSeen, a.FirstSeen); c != 0 {
			return c
		}
		return bytes.Compare(a.Txid[:], b.Txid[:])
	})
	return out
}

// SpentBy tells which mempool tx input spends op.
func (m *Mempool) SpentBy(op Outpoint) (txid bchain.Hash, vin uint32, ok bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	s, ok := m.pool.spends[op]
	return s.txid, s.vin, ok
}

// Status reports whether the mempool is in sync with the node.
func (m *Mempool) Status() Status {
	m.mu.RLock()
	n := len(m.pool.txs)
	m.mu.RUnlock()
	m.smu.Lock()
	defer m.smu.Unlock()
	return Status{InSync: m.loaded && m.lastOK, LastSync: m.lastSync, Size: n}
}

// FilterEntries returns the filters of the txs first seen at or after
// fromTimestamp (unix seconds) that have one.
func (m *Mempool) FilterEntries(fromTimestamp int64) map[bchain.Hash][]byte {
	out := map[bchain.Hash][]byte{}
	m.mu.RLock()
	defer m.mu.RUnlock()
	for h, e := range m.pool.txs {
		if e.tx.FirstSeen >= fromTimestamp && len(e.tx.Filter) > 0 {
			out[h] = e.tx.Filter
		}
	}
	return out
}
