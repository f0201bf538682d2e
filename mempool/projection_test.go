package mempool

import (
	"slices"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/mempool/projected"
)

// projectedTxids lists the txs of the projection's blocks, in block order.
func projectedTxids(p *Projection) []bchain.Hash {
	p.apply()
	var out []bchain.Hash
	for _, b := range p.engine.Refresh().Blocks {
		out = append(out, b.Txids...)
	}
	return out
}

// The projection follows the pool: a tx enters once its fee is known (its
// inputs resolved), with its in-pool parent as a CPFP parent, and leaves
// when the pool drops it; changes made before it was enabled count too.
func TestProjectionFollowsThePool(t *testing.T) {
	m := New(nil, nil, nil, Config{})
	now := time.Now()
	// parent pays 1000 sat on 1000 in (fee 1,000 - 1,000 = 0: a zero-fee
	// parent), child spends it and pays a high fee: CPFP.
	parent := synthTx(1, 1, []synthIn{{op: Outpoint{hashOf(100), 0}, desc: "a", value: 2000, known: true}}, "b")
	child := synthTx(2, 2, []synthIn{{op: Outpoint{parent.Txid, 0}, desc: "b", value: 1000, known: true}}, "")
	child.Vout[0].Value = 100
	single := synthTx(3, 3, []synthIn{{op: Outpoint{hashOf(101), 0}, desc: "c", value: 1500, known: true}}, "d")
	late := synthTx(4, 4, []synthIn{{op: Outpoint{hashOf(102), 0}}}, "e")
	for _, tx := range []*Tx{parent, child, single, late} {
		tx.Size = 200
	}
	m.mu.Lock()
	m.pool.insert(parent, m.tick())
	m.mu.Unlock()

	p := m.EnableProjection(projected.Bitcoin())
	m.mu.Lock()
	m.pool.insert(child, m.tick())
	m.pool.insert(single, m.tick())
	m.pool.insert(late, m.tick())
	m.mu.Unlock()
	// parent (1,000 sat) with child (900) outbids single (500): the
	// package goes first, parent before child; late has no known fee.
	if got, want := projectedTxids(p), []bchain.Hash{parent.Txid, child.Txid, single.Txid}; !slices.Equal(got, want) {
		t.Fatalf("projection %v, want %v", got, want)
	}

	resolved := synthTx(4, 4, []synthIn{{op: Outpoint{hashOf(102), 0}, desc: "f", value: 1_000_000, known: true}}, "e")
	resolved.Size = 200
	m.mu.Lock()
	m.pool.update(late, resolved)
	m.pool.remove(parent.Txid, m.tick(), now) // mined: the child stays, alone
	m.mu.Unlock()
	if got, want := projectedTxids(p), []bchain.Hash{late.Txid, child.Txid, single.Txid}; !slices.Equal(got, want) {
		t.Fatalf("after a late resolution and the parent's removal: %v, want %v", got, want)
	}

	// An add and a removal of the same tx in one batch apply in order.
	m.mu.Lock()
	m.pool.remove(single.Txid, m.tick(), now)
	m.pool.insert(single, m.tick())
	m.pool.remove(single.Txid, m.tick(), now)
	m.mu.Unlock()
	if got, want := projectedTxids(p), []bchain.Hash{late.Txid, child.Txid}; !slices.Equal(got, want) {
		t.Fatalf("after remove, add, remove: %v, want %v", got, want)
	}
}
