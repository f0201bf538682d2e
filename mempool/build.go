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
	"github.com/openexplorer/blockbook/db"
)

// Turning txids into resolved mempool txs: fetch and decode (concurrent,
// batched when the node can), then resolve each input's prevout from, in
// order, the txs being added, the pool, the index, and the node; then the
// filter. None of this holds the mempool's lock except for short pool
// lookups.

// fetched is a decoded tx as the node sent it; obs is the logical time of
// the request (see Mempool.tick).
type fetched struct {
	tx  *bchain.Tx
	obs uint64
}

// fetch downloads and decodes txids with cfg.Workers concurrent requests.
// Txs the node does not have (any more) are skipped quietly. A node failure
// stops the fetch: what was fetched is returned with the error.
func (m *Mempool) fetch(ctx context.Context, txids []bchain.Hash) ([]fetched, error) {
	return m.fetchCounted(ctx, txids, nil)
}

// fetchCounted is fetch that adds the number of txids done to done.
func (m *Mempool) fetchCounted(ctx context.Context, txids []bchain.Hash, done *atomic.Int64) ([]fetched, error) {
	if len(txids) == 0 {
		return nil, nil
	}
	per := 1
	if m.batch != nil {
		per = fetchChunk
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := make([]fetched, len(txids))
	jobs := make(chan int)
	var (
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	fail := func(err error) {
		errOnce.Do(func() { firstErr = err; cancel() })
	}
	for range min(m.cfg.Workers, (len(txids)+per-1)/per) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for start := range jobs {
				ids := txids[start:min(start+per, len(txids))]
				obs := m.tick()
				raws, err := m.rawTxs(ctx, ids)
				if err != nil {
					fail(err)
					continue
				}
				for i, raw := range raws {
					if raw == nil {
						continue
					}
					tx, err := m.decode(ids[i], raw)
					if err != nil {
						m.log.Warn("skipping a mempool tx that does not decode", "txid", ids[i], "err", err)
						continue
					}
					out[start+i] = fetched{tx: tx, obs: obs}
				}
				if done != nil {
					done.Add(int64(len(ids)))
				}
			}
		}()
	}
feed:
	for start := 0; start < len(txids); start += per {
		select {
		case jobs <- start:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	res := out[:0]
	for _, f := range out {
		if f.tx != nil {
			res = append(res, f)
		}
	}
	if firstErr == nil && ctx.Err() != nil {
		firstErr = ctx.Err()
	}
	return slices.Clip(res), firstErr
}

// rawTxs fetches txs, nil for those the node does not have.
func (m *Mempool) rawTxs(ctx context.Context, ids []bchain.Hash) ([][]byte, error) {
	if m.batch != nil {
		return m.batch.RawTxs(ctx, ids)
	}
	raws := make([][]byte, len(ids))
	for i, h := range ids {
		raw, err := m.node.RawTx(ctx, h, bchain.Hash{})
		if errors.Is(err, bchain.ErrTxNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		raws[i] = raw
	}
	return raws, nil
}

func (m *Mempool) decode(txid bchain.Hash, raw []byte) (*bchain.Tx, error) {
	tx, err := m.parser.ParseTx(raw)
	if err != nil {
		return nil, err
	}
	if tx.Txid != txid {
		return nil, fmt.Errorf("%w: asked the node for %s, got %s", bchain.ErrInvalidData, txid, tx.Txid)
	}
	return tx, nil
}

// newTx wraps a decoded tx with its output descriptors and unresolved
// prevouts.
func (m *Mempool) newTx(tx *bchain.Tx, firstSeen int64) *Tx {
	t := &Tx{Tx: tx, FirstSeen: firstSeen, Prevouts: make([]Prevout, len(tx.Vin)), OutDescs: make([]bchain.AddrDesc, len(tx.Vout))}
	for i := range tx.Vout {
		t.OutDescs[i] = m.parser.OutputAddrDesc(tx.Vout[i].Script)
	}
	return t
}

// parent is a tx whose outputs inputs spend: a mempool tx (or one decoded
// from the node), or a confirmed tx's index record.
type parent struct {
	tx *Tx
	ta *db.TxAddresses
}

func (p parent) out(vout uint32) (Prevout, bool) {
	switch {
	case p.tx != nil && int(vout) < len(p.tx.Vout):
		return Prevout{Desc: p.tx.OutDescs[vout], Value: p.tx.Vout[vout].Value, Known: true}, true
	case p.ta != nil && int(vout) < len(p.ta.Outputs):
		o := p.ta.Outputs[vout]
		return Prevout{Desc: o.Desc, Value: o.Value, Known: true}, true
	}
	return Prevout{}, false
}

// resolve fills in the unknown prevouts of txs (which must not be
// published yet) from batch (txs being added together), the pool, the
// index and, with useNode, the node. It reports which txs changed.
func (m *Mempool) resolve(ctx context.Context, txs []*Tx, batch map[bchain.Hash]*Tx, useNode bool) []bool {
	parents := map[bchain.Hash]parent{}
	var need []bchain.Hash
	for _, t := range txs {
		for i := range t.Vin {
			if t.Prevouts[i].Known || t.Vin[i].Coinbase {
				continue
			}
			h := t.Vin[i].PrevTxid
			if _, seen := parents[h]; seen {
				continue
			}
			if b, ok := batch[h]; ok {
				parents[h] = parent{tx: b}
				continue
			}
			parents[h] = parent{}
			need = append(need, h)
		}
	}
	if len(need) > 0 {
		m.mu.RLock()
		rest := need[:0]
		for _, h := range need {
			if e, ok := m.pool.txs[h]; ok {
				parents[h] = parent{tx: e.tx}
			} else {
				rest = append(rest, h)
			}
		}
		m.mu.RUnlock()
		need = m.fromIndex(rest, parents)
	}
	if len(need) > 0 && useNode {
		m.fromNode(ctx, need, parents)
	}
	changed := make([]bool, len(txs))
	for k, t := range txs {
		for i := range t.Vin {
			if t.Prevouts[i].Known || t.Vin[i].Coinbase {
				continue
			}
			if p, ok := parents[t.Vin[i].PrevTxid].out(t.Vin[i].PrevVout); ok {
				t.Prevouts[i] = p
				changed[k] = true
			}
		}
	}
	return changed
}

// fromIndex looks confirmed parents up in the index and returns the txids
// it does not have.
func (m *Mempool) fromIndex(need []bchain.Hash, parents map[bchain.Hash]parent) []bchain.Hash {
	if m.db == nil || len(need) == 0 {
		return need
	}
	snap, err := m.db.Snapshot()
	if err != nil {
		m.log.Warn("cannot read the index to resolve mempool inputs", "err", err)
		return need
	}
	defer snap.Release()
	rest := need[:0]
	for _, h := range need {
		ta, err := db.ReadTxOutputs(snap, h)
		if err != nil {
			m.log.Warn("cannot read a prevout from the index", "txid", h, "err", err)
		}
		if ta == nil {
			rest = append(rest, h)
			continue
		}
		parents[h] = parent{ta: ta}
	}
	return rest
}

// dropConfirmed removes the txids the index holds as confirmed. A node may
// list a mined tx in its mempool for a while (btcd keeps them while it
// considers its chain not current); announcing it again as pending would
// be wrong.
func (m *Mempool) dropConfirmed(ids []bchain.Hash) []bchain.Hash {
	if m.db == nil || len(ids) == 0 {
		return ids
	}
	snap, err := m.db.Snapshot()
	if err != nil {
		m.log.Warn("cannot read the index to skip confirmed txs", "err", err)
		return ids
	}
	defer snap.Release()
	return slices.DeleteFunc(ids, func(h bchain.Hash) bool {
		ta, err := db.ReadTxOutputs(snap, h)
		return err == nil && ta != nil
	})
}

// fromNode fetches parents the index does not have (yet) from the node,
// e.g. confirmed in a block the index has not reached. Failures leave the
// prevouts unknown, to be retried later.
func (m *Mempool) fromNode(ctx context.Context, need []bchain.Hash, parents map[bchain.Hash]parent) {
	got, err := m.fetch(ctx, need)
	if err != nil && ctx.Err() == nil {
		m.log.Debug("cannot fetch parents of mempool txs from the node", "err", err)
	}
	for _, f := range got {
		parents[f.tx.Txid] = parent{tx: m.newTx(f.tx, 0)}
	}
}

// filter computes a tx's Golomb filter over the scripts it spends and pays.
func (m *Mempool) filter(t *Tx) []byte {
	if !m.cfg.Filter.Enabled() {
		return nil
	}
	descs := make([]bchain.AddrDesc, 0, len(t.Prevouts)+len(t.OutDescs))
	for i := range t.Prevouts {
		if t.Prevouts[i].Known {
			descs = append(descs, t.Prevouts[i].Desc)
		}
	}
	descs = append(descs, t.OutDescs...)
	b := db.NewFilterBuilder(m.cfg.Filter, t.Txid)
	b.Add(t.Tx, descs...)
	f, err := b.Filter()
	if err != nil {
		m.log.Warn("cannot build a mempool tx filter", "txid", t.Txid, "err", err)
		return nil
	}
	return f
}

// build turns fetched txs into mempool txs, resolved as far as possible,
// with their filters.
func (m *Mempool) build(ctx context.Context, fs []fetched) ([]*Tx, []uint64) {
	now := time.Now().Unix()
	txs := make([]*Tx, len(fs))
	obs := make([]uint64, len(fs))
	batch := make(map[bchain.Hash]*Tx, len(fs))
	for i, f := range fs {
		txs[i], obs[i] = m.newTx(f.tx, now), f.obs
		batch[f.tx.Txid] = txs[i]
	}
	m.resolve(ctx, txs, batch, true)
	if m.cfg.Filter.Enabled() {
		m.parallel(len(txs), func(i int) { txs[i].Filter = m.filter(txs[i]) })
	}
	return txs, obs
}

// parallel runs fn(0..n-1) on cfg.Workers goroutines (inline when small).
func (m *Mempool) parallel(n int, fn func(int)) {
	if n < 64 || m.cfg.Workers == 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var wg sync.WaitGroup
	step := (n + m.cfg.Workers - 1) / m.cfg.Workers
	for lo := 0; lo < n; lo += step {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				fn(i)
			}
		}(lo, min(lo+step, n))
	}
	wg.Wait()
}
