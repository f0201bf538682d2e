package api

// runes_mempool.go: what each pending tx does to runes, decoded once when
// the tx enters the mempool and dropped when it leaves, so that runes=true
// answers look pending txs up instead of decoding them (an address with
// thousands of pending rune txs answers like any other).
//
// An entry holds for the index tip it was decoded against. When a block
// extends that tip, entries of txs that cannot move runes (no runestone,
// every input a confirmed output without runes) stay, since a block does
// not change confirmed outputs; the others are decoded again, by the
// worker, as the block may confirm their pending parents or change what
// their runestones may mint or etch. A reorg drops every entry (and the
// worker decodes them all again).

import (
	"context"
	"sync"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/mempool"
)

const (
	// maxCachedRuneTxs bounds the cache's entries (a tx that moves no runes
	// holds no balance but costs some 300 bytes) and maxCachedRuneBalances
	// the rune balances they hold (some 40 bytes each); a tx past either is
	// decoded by each answer that shows it.
	maxCachedRuneTxs      = 1 << 18
	maxCachedRuneBalances = 1 << 20
	// runeQueueLen bounds the txs waiting for the worker; past it a tx is
	// decoded by the first answer that needs it.
	runeQueueLen = 1 << 14
)

// runeCacheEntry is a decoded pending tx.
type runeCacheEntry struct {
	tx *mempool.Tx // the version decoded (an input resolved later makes a new *Tx)
	m  *pendingMoves
}

// pendingRuneCache holds the decoded pending txs, by txid.
type pendingRuneCache struct {
	mu     sync.Mutex
	tip    db.Tip // what the entries were decoded against
	hasTip bool
	seq    uint64 // of the view that set tip
	byTx   map[bchain.Hash]runeCacheEntry
	// children are, per tx, the entries decoded from its outputs: when it
	// is decoded again (its inputs resolved later), they are stale.
	children map[bchain.Hash][]bchain.Hash
	held     int              // balances in the entries
	maxTxs   int              // maxCachedRuneTxs (less in tests)
	redo     []*mempool.Tx    // entries a new tip dropped, to decode again
	queue    chan *mempool.Tx // txs for the worker (RunPendingRunes)
	wake     chan struct{}    // redo has txs
	once     sync.Once        // reads on
	on       bool             // the index keeps runes
}

func newPendingRuneCache() *pendingRuneCache {
	return &pendingRuneCache{byTx: map[bchain.Hash]runeCacheEntry{}, children: map[bchain.Hash][]bchain.Hash{}, queue: make(chan *mempool.Tx, runeQueueLen),
		wake: make(chan struct{}, 1), maxTxs: maxCachedRuneTxs}
}

// size is what an entry holds, in balances.
func (m *pendingMoves) size() int {
	n := len(m.burned)
	for _, b := range m.ins {
		n += len(b)
	}
	for _, b := range m.outs {
		n += len(b)
	}
	return n
}

// inert: the tx moves no runes and cannot start to while blocks only
// extend the chain.
func (m *pendingMoves) inert() bool { return !m.moved && !m.stone && !m.pendingParent }

// current makes the view's tip the cache's when the view is newer (taken
// later: a reorg may lower the tip): on an
// extension it keeps the inert entries and queues the others to decode
// again, on a reorg it drops all and queues them. It reports whether the cache now
// answers for the view's tip. Called with c.mu held.
func (c *pendingRuneCache) current(v *view) bool {
	if !v.hasTip {
		return false
	}
	if c.hasTip && v.tip == c.tip {
		return true
	}
	if c.hasTip && v.seq < c.seq {
		return false // an older view: it decodes for itself
	}
	extends := c.hasTip && v.tip.Height > c.tip.Height && db.HoldsBlock(v.snap, c.tip.Height, c.tip.Hash)
	for id, e := range c.byTx {
		if extends && e.m.inert() {
			continue
		}
		delete(c.byTx, id)
		c.held -= e.m.size()
		c.redo = append(c.redo, e.tx)
	}
	// the kept (inert) entries read no pending parent
	clear(c.children)
	c.tip, c.hasTip, c.seq = v.tip, true, v.seq
	if len(c.redo) > 0 {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
	return true
}

// get returns tx's entry when it was decoded for this version of the tx
// against the view's tip.
func (c *pendingRuneCache) get(v *view, tx *mempool.Tx) (*pendingMoves, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.current(v) {
		return nil, false
	}
	e, ok := c.byTx[tx.Txid]
	if !ok || e.tx != tx {
		return nil, false
	}
	return e.m, true
}

// put keeps what tx does to runes, decoded in the view, unless the cache
// is full or the view is not the newest the cache saw.
func (c *pendingRuneCache) put(v *view, tx *mempool.Tx, m *pendingMoves) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.current(v) {
		return
	}
	if old, had := c.byTx[tx.Txid]; had && old.m != m {
		// decoded again: what its children read from it is stale
		c.dropDescendants(tx.Txid)
		delete(c.byTx, tx.Txid)
		c.held -= old.m.size()
	}
	n := m.size()
	if c.held+n > maxCachedRuneBalances || len(c.byTx) >= c.maxTxs {
		return
	}
	c.byTx[tx.Txid] = runeCacheEntry{tx: tx, m: m}
	c.held += n
	for _, par := range m.parents {
		c.children[par] = append(c.children[par], tx.Txid)
	}
}

// dropDescendants drops the entries decoded from txid's outputs, and
// theirs, and queues them to be decoded again. Called with c.mu held.
func (c *pendingRuneCache) dropDescendants(txid bchain.Hash) {
	todo := []bchain.Hash{txid}
	for len(todo) > 0 {
		id := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, ch := range c.children[id] {
			if e, ok := c.byTx[ch]; ok {
				delete(c.byTx, ch)
				c.held -= e.m.size()
				c.redo = append(c.redo, e.tx)
				todo = append(todo, ch)
			}
		}
		delete(c.children, id)
	}
	if len(c.redo) > 0 {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

// forget drops a tx that left the mempool. It runs under the mempool's
// lock: it only takes the cache's.
func (c *pendingRuneCache) forget(txid bchain.Hash) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byTx[txid]; ok {
		delete(c.byTx, txid)
		c.held -= e.m.size()
	}
	delete(c.children, txid)
}

// enqueue hands a tx to the worker without waiting; a full queue leaves
// it to the first answer that needs it.
func (c *pendingRuneCache) enqueue(tx *mempool.Tx) {
	select {
	case c.queue <- tx:
	default:
	}
}

// takeRedo returns the entries a new tip dropped, to decode again.
func (c *pendingRuneCache) takeRedo() []*mempool.Tx {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.redo
	c.redo = nil
	return r
}

// PendingRunesAdded queues a tx that entered the mempool (or whose inputs
// resolved) for its runes to be decoded; wire it to the mempool's OnTx
// and OnResolved. It never blocks.
func (s *UtxoService) PendingRunesAdded(tx *mempool.Tx) {
	if s.pendingRunesOn() {
		s.runeCache.enqueue(tx)
	}
}

// PendingRunesRemoved drops the runes of a tx that left the mempool; wire it
// to the mempool's OnRemoved.
func (s *UtxoService) PendingRunesRemoved(txid bchain.Hash) { s.runeCache.forget(txid) }

// pendingRunesOn reports whether the index keeps runes (read once: the
// Runes index is chosen when the datadir is created).
func (s *UtxoService) pendingRunesOn() bool {
	c := s.runeCache
	c.once.Do(func() {
		v, err := s.newView()
		if err != nil {
			return
		}
		defer v.release()
		c.on = runesOn(v.snap) == nil
	})
	return c.on
}

// RunPendingRunes decodes the queued pending txs until ctx ends: parents
// before children, as the walk in pendingRunes.of decodes a pending
// parent a child needs first.
func (s *UtxoService) RunPendingRunes(ctx context.Context) {
	for {
		var batch []*mempool.Tx
		select {
		case <-ctx.Done():
			return
		case tx := <-s.runeCache.queue:
			batch = append(batch, tx)
		case <-s.runeCache.wake:
		}
	drain:
		for len(batch) < 256 {
			select {
			case tx := <-s.runeCache.queue:
				batch = append(batch, tx)
			default:
				break drain
			}
		}
		s.decodePending(batch)
	}
}

// decodePending decodes txs (and the entries a new tip dropped) into the
// cache, in one view; a tx that left the mempool meanwhile is skipped.
func (s *UtxoService) decodePending(batch []*mempool.Tx) {
	v, err := s.newView()
	if err != nil {
		return
	}
	defer v.release()
	pr := s.pendingRunes(v)
	for {
		batch = append(batch, s.runeCache.takeRedo()...)
		if len(batch) == 0 {
			return
		}
		for _, tx := range batch {
			cur := s.mempoolTx(tx.Txid)
			if cur == nil {
				continue
			}
			if _, err := pr.of(cur); err != nil {
				s.log.Debug("pending runes", "txid", tx.Txid, "err", err)
			}
		}
		batch = nil
	}
}
