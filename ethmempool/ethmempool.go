// Package ethmempool follows an Ethereum-type node's pending txs and files
// them under the addresses they touch: sender, recipient, and the parties
// of the token transfer their calldata asks for. Entries leave when a
// block mines them, when the node drops them, or when they have been
// pending longer than the configured timeout (mempoolTxTimeoutHours),
// after which they are not taken back while the node still lists them.
package ethmempool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/openexplorer/blockbook/bchain"
)

// Node is what the mempool needs from the node.
type Node interface {
	// MempoolTxids lists the pending txs.
	MempoolTxids(ctx context.Context) ([]bchain.Hash, error)
	// Tx returns a tx by hash; bchain.ErrTxNotFound when it is gone.
	Tx(ctx context.Context, hash bchain.Hash) (*bchain.EthTx, error)
}

// Config tunes the mempool.
type Config struct {
	Resync  time.Duration // full resync period (default 1 minute)
	Expiry  time.Duration // drop txs pending longer than this (0: never)
	Workers int           // concurrent tx fetches (default 8)
	Now     func() time.Time
	Log     *slog.Logger
}

// Tx is one pending tx.
type Tx struct {
	Eth       *bchain.EthTx
	FirstSeen time.Time
	// Addrs are the addresses the tx touches, each once: sender,
	// recipient, token transfer parties decoded from the calldata.
	Addrs []bchain.AddrDesc
	// Transfers are the token transfers the calldata asks for (pending:
	// they may still fail).
	Transfers []bchain.TokenTransfer
}

// Status is what the status endpoints show.
type Status struct {
	Count    int
	InSync   bool
	LastSync time.Time
}

// Mempool is safe for concurrent use.
type Mempool struct {
	node Node
	cfg  Config

	mu      sync.RWMutex
	txs     map[bchain.Hash]*Tx
	byAddr  map[string][]*Tx // newest first
	expired map[bchain.Hash]bool
	status  Status
	onTx    []func(*Tx)
}

// New returns an empty mempool; Run fills and follows it.
func New(node Node, cfg Config) *Mempool {
	if cfg.Resync <= 0 {
		cfg.Resync = time.Minute
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 8
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Mempool{node: node, cfg: cfg, txs: map[bchain.Hash]*Tx{}, byAddr: map[string][]*Tx{}, expired: map[bchain.Hash]bool{}}
}

// OnTx registers fn to be called with each tx entering the mempool after
// the first load (the first load announces nothing).
func (m *Mempool) OnTx(fn func(*Tx)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.onTx = append(m.onTx, fn)
}

// Run loads the mempool, then resyncs it every Resync and adds each tx
// notifier announces (notifier may be nil), until ctx ends.
func (m *Mempool) Run(ctx context.Context, notifier bchain.TxNotifier) error {
	if notifier != nil {
		go func() {
			err := notifier.Run(ctx, func(h bchain.Hash) {
				if err := m.add(ctx, []bchain.Hash{h}, true); err != nil && ctx.Err() == nil {
					m.cfg.Log.Debug("mempool: announced tx not added", "txid", h.String(), "err", err)
				}
			})
			if err != nil && ctx.Err() == nil {
				m.cfg.Log.Warn("mempool: tx notifications stopped, resyncs only", "err", err)
			}
		}()
	}
	first := true
	for {
		if err := m.Resync(ctx, !first); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			m.cfg.Log.Warn("mempool resync failed", "err", err)
		} else {
			first = false
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(m.cfg.Resync):
		}
	}
}

// Resync makes the mempool the node's pending set: new txs are fetched,
// txs the node no longer lists and expired ones are dropped.
func (m *Mempool) Resync(ctx context.Context, announce bool) error {
	ids, err := m.node.MempoolTxids(ctx)
	if err != nil {
		return err
	}
	listed := make(map[bchain.Hash]bool, len(ids))
	for _, id := range ids {
		listed[id] = true
	}
	m.mu.Lock()
	for h := range m.txs {
		if !listed[h] {
			m.removeLocked(h)
		}
	}
	for h := range m.expired {
		if !listed[h] {
			delete(m.expired, h) // the node dropped it too: forget it
		}
	}
	m.expireLocked()
	m.mu.Unlock()
	if err := m.add(ctx, ids, announce); err != nil {
		return err
	}
	m.mu.Lock()
	m.status = Status{Count: len(m.txs), InSync: true, LastSync: m.cfg.Now()}
	m.mu.Unlock()
	return nil
}

// add fetches and files the txs not yet known.
func (m *Mempool) add(ctx context.Context, ids []bchain.Hash, announce bool) error {
	m.mu.RLock()
	var need []bchain.Hash
	for _, h := range ids {
		if m.txs[h] == nil && !m.expired[h] {
			need = append(need, h)
		}
	}
	m.mu.RUnlock()
	fetched := make([]*bchain.EthTx, len(need))
	errs := make([]error, len(need))
	var wg sync.WaitGroup
	sem := make(chan struct{}, m.cfg.Workers)
	for i, h := range need {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			fetched[i], errs[i] = m.node.Tx(ctx, h)
		}()
	}
	wg.Wait()
	var added []*Tx
	now := m.cfg.Now()
	m.mu.Lock()
	for i, tx := range fetched {
		switch {
		case errors.Is(errs[i], bchain.ErrTxNotFound):
			continue // mined or dropped meanwhile
		case errs[i] != nil:
			m.mu.Unlock()
			return fmt.Errorf("mempool tx %s: %w", need[i], errs[i])
		case tx.BlockHeight > 0 || !tx.BlockHash.IsZero() || m.txs[need[i]] != nil:
			continue // mined meanwhile, or added by another caller
		}
		t := &Tx{Eth: tx, FirstSeen: now}
		t.Transfers = PendingTransfers(tx)
		t.Addrs = parties(tx, t.Transfers)
		m.txs[tx.Hash] = t
		for _, a := range t.Addrs {
			m.byAddr[string(a)] = slices.Insert(m.byAddr[string(a)], 0, t)
		}
		added = append(added, t)
	}
	fns := slices.Clone(m.onTx)
	m.mu.Unlock()
	if announce {
		for _, t := range added {
			for _, fn := range fns {
				fn(t)
			}
		}
	}
	return nil
}

// OnBlock drops the txs a connected block mined.
func (m *Mempool) OnBlock(blk *bchain.Block) {
	if blk == nil || blk.Eth == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range blk.Eth.Txs {
		m.removeLocked(blk.Eth.Txs[i].Hash)
	}
	m.status.Count = len(m.txs)
}

func (m *Mempool) removeLocked(h bchain.Hash) {
	t := m.txs[h]
	if t == nil {
		return
	}
	delete(m.txs, h)
	for _, a := range t.Addrs {
		k := string(a)
		m.byAddr[k] = slices.DeleteFunc(m.byAddr[k], func(x *Tx) bool { return x == t })
		if len(m.byAddr[k]) == 0 {
			delete(m.byAddr, k)
		}
	}
}

// expireLocked drops txs pending longer than Expiry and remembers them.
func (m *Mempool) expireLocked() {
	if m.cfg.Expiry <= 0 {
		return
	}
	cutoff := m.cfg.Now().Add(-m.cfg.Expiry)
	for h, t := range m.txs {
		if t.FirstSeen.Before(cutoff) {
			m.removeLocked(h)
			m.expired[h] = true
		}
	}
}

// Tx returns a pending tx.
func (m *Mempool) Tx(h bchain.Hash) (*Tx, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	t, ok := m.txs[h]
	return t, ok
}

// AddrTxs returns the pending txs touching an address, newest first.
func (m *Mempool) AddrTxs(addr bchain.AddrDesc) []*Tx {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return slices.Clone(m.byAddr[string(addr)])
}

// Txs returns every pending tx, newest first (ties by hash).
func (m *Mempool) Txs() []*Tx {
	m.mu.RLock()
	out := make([]*Tx, 0, len(m.txs))
	for _, t := range m.txs {
		out = append(out, t)
	}
	m.mu.RUnlock()
	slices.SortFunc(out, func(a, b *Tx) int {
		if c := b.FirstSeen.Compare(a.FirstSeen); c != 0 {
			return c
		}
		return slices.Compare(a.Eth.Hash[:], b.Eth.Hash[:])
	})
	return out
}

// Status returns the mempool's size and sync state.
func (m *Mempool) Status() Status {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.status
}
