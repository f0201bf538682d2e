package eth

import (
	"context"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/openexplorer/blockbook/bchain"
)

// CachedIDs lists the pending txs the relay holds that are still fresh.
func (r *Relay) CachedIDs() []bchain.Hash {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]bchain.Hash, 0, len(r.txs))
	for h, c := range r.txs {
		if r.now().Sub(c.added) <= r.cfg.CacheTimeout {
			out = append(out, h)
		}
	}
	return out
}

// CachedTx is a cached pending tx; one past the timeout is dropped here.
func (r *Relay) CachedTx(h bchain.Hash) (*bchain.EthTx, bool) {
	r.mu.Lock()
	c, ok := r.txs[h]
	r.mu.Unlock()
	if !ok {
		return nil, false
	}
	if r.now().Sub(c.added) > r.cfg.CacheTimeout {
		r.remove(h, relayGoneTimeout)
		return nil, false
	}
	return c.tx, true
}

// Remove drops a cached tx that a block the index connected holds.
func (r *Relay) Remove(h bchain.Hash) { r.remove(h, relayGoneBlock) }

// remove drops a cached tx (mined, superseded, in a block or timed out),
// counted by reason. When it was the sender's last one, the sender's nonce
// routing ends too, unless the sender sent again after this tx was cached.
func (r *Relay) remove(h bchain.Hash, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.txs[h]
	if !ok {
		return
	}
	delete(r.txs, h)
	r.m.removed.WithLabelValues(reason).Inc()
	r.m.cached.Set(float64(len(r.txs)))
	from := common.Address(c.tx.From)
	for _, o := range r.txs {
		if common.Address(o.tx.From) == from {
			return
		}
	}
	if s, ok := r.senders[from]; ok && s.gen <= c.gen {
		delete(r.senders, from)
	}
}

// routesNonce tells whether addr sent through the relay recently, and
// which provider accepted its last tx.
func (r *Relay) routesNonce(addr common.Address) (int, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, ok := r.senders[addr]
	if !ok {
		return 0, false
	}
	if r.now().Sub(s.at) > r.cfg.CacheTimeout {
		delete(r.senders, addr)
		return 0, false
	}
	return s.url, true
}

// pendingFloor raises a pending nonce to one past the highest cached tx of
// addr: the server shows those txs as pending, so its nonce must not
// contradict them.
func (r *Relay) pendingFloor(addr common.Address, pending uint64) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.txs {
		if common.Address(c.tx.From) == addr && c.tx.Nonce+1 > pending {
			pending = c.tx.Nonce + 1
		}
	}
	return pending
}

// Nonce answers a nonce query: a recent sender's goes to the provider that
// accepted its last tx (falling back to the node when it fails), every
// other address's to the node; a pending nonce is raised to the cache's
// floor.
func (r *Relay) Nonce(ctx context.Context, addr bchain.AddrDesc, at bchain.EthBlockTag, node func() (uint64, error)) (uint64, error) {
	a := common.BytesToAddress(addr)
	if p, ok := r.routesNonce(a); ok && (at == bchain.EthPending || at == bchain.EthLatest) {
		var v hexutil.Uint64
		err := r.call(ctx, p, &v, "eth_getTransactionCount", a, blockArg(at))
		if err == nil {
			if at == bchain.EthPending {
				return r.pendingFloor(a, uint64(v)), nil
			}
			return uint64(v), nil
		}
		r.cfg.Log.Warn("alternative provider nonce failed, asking the node", "err", err)
	}
	v, err := node()
	if err != nil || at != bchain.EthPending {
		return v, err
	}
	return r.pendingFloor(a, v), nil
}

// Run reconciles the cache with the providers every CheckPeriod until ctx
// ends.
func (r *Relay) Run(ctx context.Context) {
	t := time.NewTicker(r.cfg.CheckPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.Reconcile(ctx)
		}
	}
}

// Reconcile asks the providers about each cached tx older than one check
// period (a load-balanced provider may not know a fresh one yet): a mined
// tx, or one whose nonce another tx consumed, leaves; one the providers no
// longer show stays until the timeout, since private relays hide txs that
// can still be mined (as Blockbook keeps them).
func (r *Relay) Reconcile(ctx context.Context) {
	type entry struct {
		h bchain.Hash
		c relayTx
	}
	r.mu.Lock()
	var list []entry
	for h, c := range r.txs {
		list = append(list, entry{h, c})
	}
	r.mu.Unlock()
	confirmed := map[common.Address]uint64{}
	for _, e := range list {
		age := r.now().Sub(e.c.added)
		if age < r.cfg.CheckPeriod {
			continue
		}
		if age > r.cfg.CacheTimeout {
			r.remove(e.h, relayGoneTimeout)
			continue
		}
		mined, err := r.providersMined(ctx, e.h)
		if err != nil {
			r.m.checkErrs.Inc()
			continue // kept; the timeout is the safety net
		}
		switch {
		case mined:
			r.remove(e.h, relayGoneMined)
		case r.superseded(ctx, e.c.tx, confirmed):
			r.remove(e.h, relayGoneSuperseded)
		}
	}
}

// providersMined tells whether a provider reports the tx in a block.
func (r *Relay) providersMined(ctx context.Context, h bchain.Hash) (bool, error) {
	var firstErr error
	for i := range r.cfg.URLs {
		tx, err := r.providerTx(ctx, i, h)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		if tx != nil {
			return tx.BlockHeight > 0 || !tx.BlockHash.IsZero(), nil
		}
	}
	return false, firstErr
}

// superseded tells whether the sender's confirmed nonce (the lowest the
// providers report) passed the tx's: another tx took its place for good.
func (r *Relay) superseded(ctx context.Context, tx *bchain.EthTx, confirmed map[common.Address]uint64) bool {
	from := common.Address(tx.From)
	n, ok := confirmed[from]
	if !ok {
		found := false
		for i := range r.cfg.URLs {
			var v hexutil.Uint64
			if r.call(ctx, i, &v, "eth_getTransactionCount", from, "latest") != nil {
				continue
			}
			if !found || uint64(v) < n {
				n, found = uint64(v), true
			}
		}
		if !found {
			return false
		}
		confirmed[from] = n
	}
	return tx.Nonce < n
}
