package mempool

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openexplorer/blockbook/bchain"
)

// Run has three loops besides the notifier: the resync loop (initial load,
// periodic and block-triggered full diffs), the tx loop (txids the node
// announces, added at once) and the event loop (block events: removals,
// then a resync request). Each mutates the pool in short write-locked
// steps; node calls and index reads happen outside the lock.

// ErrRunning is returned by Run when the mempool is already running.
var ErrRunning = errors.New("mempool: already running")

const (
	minBackoff = time.Second
	maxBackoff = 30 * time.Second
	// progressEvery spaces the progress logs of a long load.
	progressEvery = 10 * time.Second
)

// Run loads the node's mempool, then follows it until ctx ends: txids from
// notifier (may be nil) are added at once, block events remove confirmed
// and conflicting txs, and a full resync runs every ResyncInterval and
// after every block event. Node failures are retried with backoff; Run
// returns nil when ctx ends.
func (m *Mempool) Run(ctx context.Context, notifier bchain.TxNotifier) error {
	if !m.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer m.running.Store(false)
	var wg sync.WaitGroup
	if notifier != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := notifier.Run(ctx, m.notified); err != nil {
				m.log.Error("tx notifications stopped; following the mempool by resyncs only", "err", err)
			}
		}()
	}
	wg.Add(2)
	go func() { defer wg.Done(); m.txLoop(ctx) }()
	go func() { defer wg.Done(); m.eventLoop(ctx) }()
	m.resyncLoop(ctx)
	wg.Wait()
	return nil
}

// notified queues a txid the node announced, collapsing duplicates.
func (m *Mempool) notified(txid bchain.Hash) {
	m.pmu.Lock()
	if _, dup := m.pendingSet[txid]; !dup {
		m.pendingSet[txid] = struct{}{}
		m.pending = append(m.pending, txid)
	}
	m.pmu.Unlock()
	select {
	case m.txWake <- struct{}{}:
	default:
	}
}

func (m *Mempool) takePending(n int) []bchain.Hash {
	m.pmu.Lock()
	defer m.pmu.Unlock()
	n = min(n, len(m.pending))
	ids := slices.Clone(m.pending[:n])
	m.pending = m.pending[n:]
	if len(m.pending) == 0 {
		m.pending = nil
	}
	for _, h := range ids {
		delete(m.pendingSet, h)
	}
	return ids
}

func (m *Mempool) txLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.txWake:
		}
		for ctx.Err() == nil {
			ids := m.takePending(applyChunk)
			if len(ids) == 0 {
				break
			}
			m.addNotified(ctx, ids)
		}
	}
}

// addNotified fetches and adds announced txs in announcement order (so a
// replacement announced after the tx it replaces wins). Failures are left
// to the next resync.
func (m *Mempool) addNotified(ctx context.Context, ids []bchain.Hash) {
	m.mu.RLock()
	ids = slices.DeleteFunc(ids, func(h bchain.Hash) bool { _, ok := m.pool.txs[h]; return ok })
	m.mu.RUnlock()
	ids = m.dropConfirmed(ids)
	fs, err := m.fetch(ctx, ids)
	if err != nil && ctx.Err() == nil {
		m.log.Debug("fetching announced txs failed; the next resync adds them", "err", err)
	}
	txs, obs := m.build(ctx, fs)
	m.apply(ctx, txs, obs)
}

// apply adds built txs in order, in short write-locked chunks. A tx is
// skipped when the pool already has it, when it was removed after the node
// showed it to us, or when it conflicts with a pool tx observed later;
// otherwise it replaces the pool txs it conflicts with (and their
// descendants). New txs are announced; txs that waited for one of them as
// a parent are resolved.
func (m *Mempool) apply(ctx context.Context, txs []*Tx, obs []uint64) []*Tx {
	var added []*Tx
	var waiters []bchain.Hash
	replaced := 0
	for lo := 0; lo < len(txs); lo += applyChunk {
		hi := min(lo+applyChunk, len(txs))
		now := time.Now()
		m.mu.Lock()
		p := m.pool
		for i := lo; i < hi; i++ {
			t := txs[i]
			if _, ok := p.txs[t.Txid]; ok {
				continue
			}
			if p.removedSince(t.Txid, obs[i]) {
				continue
			}
			confl := p.conflicts(t)
			stale := false
			for _, c := range confl {
				if e := p.txs[c]; e != nil && e.obs > obs[i] {
					stale = true
				}
			}
			if stale {
				continue
			}
			if len(confl) > 0 {
				at := m.tick()
				var olds []*Tx
				for _, c := range confl {
					if e := p.txs[c]; e != nil {
						olds = append(olds, e.tx)
					}
					replaced += len(p.removeTree(c, at, now))
				}
				m.rbf.add(olds, t)
			}
			waiters = append(waiters, p.insert(t, obs[i])...)
			added = append(added, t)
		}
		m.gauges()
		m.mu.Unlock()
	}
	m.met.added.Add(float64(len(added)))
	m.met.removed.WithLabelValues(reasonReplaced).Add(float64(replaced))
	m.announce(added)
	if len(waiters) > 0 {
		m.refresh(ctx, waiters, false)
	}
	return added
}

// gauges updates the size gauges; the caller holds the lock.
func (m *Mempool) gauges() {
	m.met.size.Set(float64(len(m.pool.txs)))
	m.met.unresolved.Set(float64(len(m.pool.unresolved)))
}

// refresh resolves the unknown prevouts of the given pool txs again (from
// the pool and the index, and the node with useNode), publishing a new
// *Tx for each that changed.
func (m *Mempool) refresh(ctx context.Context, ids []bchain.Hash, useNode bool) {
	for lo := 0; lo < len(ids); lo += applyChunk {
		chunk := ids[lo:min(lo+applyChunk, len(ids))]
		var olds, news []*Tx
		m.mu.RLock()
		for _, h := range chunk {
			e := m.pool.txs[h]
			if _, ok := m.pool.unresolved[h]; !ok || e == nil {
				continue
			}
			c := *e.tx
			c.Prevouts = slices.Clone(e.tx.Prevouts)
			olds, news = append(olds, e.tx), append(news, &c)
		}
		m.mu.RUnlock()
		if len(news) == 0 {
			continue
		}
		changed := m.resolve(ctx, news, nil, useNode)
		for i, t := range news {
			if changed[i] {
				t.Filter = m.filter(t)
			}
		}
		var updated [][2]*Tx
		m.mu.Lock()
		for i, t := range news {
			if e := m.pool.txs[t.Txid]; changed[i] && e != nil && e.tx == olds[i] {
				m.pool.update(olds[i], t)
				updated = append(updated, [2]*Tx{olds[i], t})
			}
		}
		m.gauges()
		m.mu.Unlock()
		for _, u := range updated {
			m.announceResolved(u[0], u[1])
		}
	}
}

func (m *Mempool) eventLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.eventWake:
		}
		m.emu.Lock()
		evs, dropped := m.events, m.eventsDropped
		m.events, m.eventsDropped = nil, false
		m.emu.Unlock()
		for _, ev := range evs {
			if ev.Connected != nil {
				m.blockConnected(ev.Connected)
			}
		}
		if dropped {
			m.log.Debug("block events came faster than they were handled; the resync removes their txs")
		}
		select {
		case m.resyncWake <- struct{}{}:
		default:
		}
	}
}

// blockConnected removes the block's txs and the pool txs that double-spend
// one of its inputs, with their descendants. Block txs not in the pool are
// remembered for a few blocks, so that a fetch from before the block does
// not add them.
func (m *Mempool) blockConnected(blk *bchain.Block) {
	now := time.Now()
	confirmed, conflicts := 0, 0
	notPooled := map[bchain.Hash]struct{}{}
	m.mu.Lock()
	p := m.pool
	at := m.tick()
	for i := range blk.Txs {
		t := &blk.Txs[i]
		if t.IsCoinbase() {
			continue
		}
		for j := range t.Vin {
			if s, ok := p.spends[Outpoint{t.Vin[j].PrevTxid, t.Vin[j].PrevVout}]; ok && s.txid != t.Txid {
				conflicts += len(p.removeTree(s.txid, at, now))
			}
		}
		m.rbf.mined(t.Txid)
		if p.remove(t.Txid, at, now) != nil {
			confirmed++
		} else {
			notPooled[t.Txid] = struct{}{}
		}
	}
	p.addMined(at, notPooled)
	m.gauges()
	m.mu.Unlock()
	m.met.removed.WithLabelValues(reasonConfirmed).Add(float64(confirmed))
	m.met.removed.WithLabelValues(reasonConflict).Add(float64(conflicts))
	if conflicts > 0 {
		m.log.Info("removed mempool txs double-spent by a block", "height", blk.Height, "hash", blk.Hash, "txs", conflicts)
	}
}

func (m *Mempool) resyncLoop(ctx context.Context) {
	backoff := minBackoff
	timer := time.NewTimer(0) // the initial load starts at once
	defer timer.Stop()
	var lastStart time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-m.resyncWake:
			if d := max(minResyncGap, resyncGapFactor*m.listTook) - time.Since(lastStart); d > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(d):
				}
			}
		}
		lastStart = time.Now()
		err := m.resync(ctx)
		if ctx.Err() != nil {
			return
		}
		next := m.cfg.ResyncInterval
		if err != nil {
			m.met.resyncErrs.Inc()
			m.log.Warn("mempool resync failed, retrying", "err", err, "retry_in", backoff)
			next, backoff = backoff, min(backoff*2, maxBackoff)
		} else {
			backoff = minBackoff
		}
		timer.Reset(next)
	}
}

// resync diffs the node's mempool against the pool: txs the node no longer
// has are removed, missing ones are fetched and added, and txs with
// unresolved inputs are retried.
func (m *Mempool) resync(ctx context.Context) error {
	start := time.Now()
	m.smu.Lock()
	initial := !m.loaded
	m.smu.Unlock()
	listAt := m.tick()
	ids, err := m.node.MempoolTxids(ctx)
	if err != nil {
		m.setSynced(false, time.Time{})
		return fmt.Errorf("list the node's mempool: %w", err)
	}
	inNode := make(map[bchain.Hash]struct{}, len(ids))
	for _, h := range ids {
		inNode[h] = struct{}{}
	}
	var missing, vanished []bchain.Hash
	m.mu.RLock()
	for _, h := range ids {
		if _, ok := m.pool.txs[h]; !ok {
			missing = append(missing, h)
		}
	}
	for h, e := range m.pool.txs {
		if _, ok := inNode[h]; !ok && e.obs < listAt {
			vanished = append(vanished, h)
		}
	}
	m.mu.RUnlock()
	m.listTook = time.Since(start)
	removed := m.removeVanished(vanished, listAt)
	missing = m.dropConfirmed(missing)

	var fetchedN atomic.Int64
	stopProgress := m.progress(initial, len(missing), &fetchedN)
	fs, ferr := m.fetchCounted(ctx, missing, &fetchedN)
	stopProgress()
	txs, obs := m.build(ctx, fs)
	if hook := m.hooks.beforeApply; hook != nil {
		hook()
	}
	added := m.apply(ctx, txs, obs)
	m.retryUnresolved(ctx)
	now := time.Now()
	m.mu.Lock()
	m.pool.pruneGone(now, goneKeep)
	size := len(m.pool.txs)
	m.mu.Unlock()
	if ferr != nil {
		m.setSynced(false, time.Time{})
		return fmt.Errorf("fetch mempool txs: %w", ferr)
	}
	m.setSynced(true, now)
	took := now.Sub(start)
	m.met.resync.Observe(took.Seconds())
	if initial {
		m.log.Info("mempool loaded", "txs", size, "took", took.Round(time.Millisecond),
			"txs_per_s", int(float64(len(added))/max(took.Seconds(), 1e-3)))
	} else {
		m.log.Debug("mempool resynced", "txs", size, "added", len(added), "removed", removed, "took", took.Round(time.Millisecond))
	}
	return nil
}

// progress logs a long initial load every progressEvery; the returned func
// stops it.
func (m *Mempool) progress(initial bool, total int, done *atomic.Int64) func() {
	if !initial || total == 0 {
		return func() {}
	}
	m.log.Info("loading the mempool", "txs", total)
	stop := make(chan struct{})
	start := time.Now()
	go func() {
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				n := done.Load()
				rate := float64(n) / time.Since(start).Seconds()
				eta := "unknown"
				if rate > 0 {
					eta = (time.Duration(float64(int64(total)-n)/rate) * time.Second).Round(time.Second).String()
				}
				m.log.Info("loading the mempool", "fetched", n, "of", total, "txs_per_s", int(rate), "eta", eta)
			}
		}
	}()
	return func() { close(stop) }
}

// removeVanished removes pool txs the node's listing at listAt lacked,
// unless they were observed after it.
func (m *Mempool) removeVanished(ids []bchain.Hash, listAt uint64) int {
	n := 0
	for lo := 0; lo < len(ids); lo += applyChunk {
		now := time.Now()
		m.mu.Lock()
		at := m.tick()
		for _, h := range ids[lo:min(lo+applyChunk, len(ids))] {
			if e := m.pool.txs[h]; e != nil && e.obs < listAt && m.pool.remove(h, at, now) != nil {
				n++
			}
		}
		m.gauges()
		m.mu.Unlock()
	}
	m.met.removed.WithLabelValues(reasonVanished).Add(float64(n))
	return n
}

// retryUnresolved resolves txs whose inputs were not known: from the pool
// and the index, from the node at most once per ResyncInterval. While the
// index catches up many txs can be unresolved; retries are then spaced so
// that they take a small share of the time.
func (m *Mempool) retryUnresolved(ctx context.Context) {
	start := time.Now()
	if start.Sub(m.retry.last) < retryGapFactor*m.retry.took {
		return
	}
	m.mu.RLock()
	ids := make([]bchain.Hash, 0, len(m.pool.unresolved))
	for h := range m.pool.unresolved {
		ids = append(ids, h)
	}
	m.mu.RUnlock()
	if len(ids) == 0 {
		return
	}
	useNode := start.Sub(m.retry.lastNode) >= m.cfg.ResyncInterval
	if useNode {
		m.retry.lastNode = start
	}
	m.refresh(ctx, ids, useNode)
	m.retry.last, m.retry.took = start, time.Since(start)
}

func (m *Mempool) setSynced(ok bool, at time.Time) {
	m.smu.Lock()
	defer m.smu.Unlock()
	m.lastOK = ok
	if ok {
		m.loaded = true
		m.lastSync = at
	}
}
