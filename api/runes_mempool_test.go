package api

import (
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/optional/runes"
	"github.com/openexplorer/blockbook/mempool"
)

// The pending runes cache: an entry answers for the version of the tx and
// the tip it was decoded against, leaves with its tx, a reorg drops all
// (queued to decode again), an older view neither reads nor writes it, and
// the txs and balances it holds are bounded.
func TestPendingRuneCache(t *testing.T) {
	c := newPendingRuneCache()
	tx := &mempool.Tx{Tx: &bchain.Tx{Txid: bchain.Hash{1}}}
	moves := &pendingMoves{moved: true, outs: map[uint32][]runes.Balance{0: {{Amount: runes.U128{Lo: 5}}}}}
	v1 := &view{hasTip: true, tip: db.Tip{Height: 10, Hash: bchain.Hash{10}}, seq: 1}
	c.put(v1, tx, moves)
	if m, ok := c.get(v1, tx); !ok || m != moves {
		t.Fatal("no entry for the tx just decoded")
	}
	if _, ok := c.get(v1, &mempool.Tx{Tx: tx.Tx}); ok {
		t.Error("an entry answers for another version of the tx (inputs resolved later)")
	}
	c.forget(tx.Txid)
	if _, ok := c.get(v1, tx); ok || c.held != 0 {
		t.Errorf("a tx that left the mempool still answers (held %d)", c.held)
	}

	c.put(v1, tx, moves)
	// a reorg: another block at the same height, in a later view
	v2 := &view{hasTip: true, tip: db.Tip{Height: 10, Hash: bchain.Hash{11}}, seq: 2}
	if _, ok := c.get(v2, tx); ok {
		t.Error("an entry decoded before a reorg answers after it")
	}
	if redo := c.takeRedo(); len(redo) != 1 || redo[0] != tx || c.held != 0 {
		t.Errorf("the reorg queued %d txs to decode again, held %d", len(redo), c.held)
	}
	// an older view (taken before the reorg) neither reads nor writes
	c.put(v1, tx, moves)
	if _, ok := c.get(v2, tx); ok || c.tip != v2.tip {
		t.Error("an older view wrote the cache or moved its tip back")
	}

	// the bound: past maxCachedRuneBalances a tx is not kept
	big := &pendingMoves{moved: true, burned: make([]runes.Balance, maxCachedRuneBalances)}
	c.put(v2, tx, big)
	other := &mempool.Tx{Tx: &bchain.Tx{Txid: bchain.Hash{2}}}
	c.put(v2, other, moves)
	if _, ok := c.get(v2, other); ok {
		t.Error("the cache holds more than maxCachedRuneBalances balances")
	}
	if _, ok := c.get(v2, tx); !ok || c.held != maxCachedRuneBalances {
		t.Errorf("held %d, want exactly the bound", c.held)
	}

	// and past maxTxs entries, though they hold no balance
	c.forget(tx.Txid)
	c.maxTxs = 1000 // maxCachedRuneTxs takes 7 s with -race
	inert := &pendingMoves{}
	for i := range c.maxTxs + 1 {
		id := bchain.Hash{byte(i), byte(i >> 8), byte(i >> 16), 0xee}
		c.put(v2, &mempool.Tx{Tx: &bchain.Tx{Txid: id}}, inert)
	}
	if n := len(c.byTx); n != c.maxTxs || c.held != 0 {
		t.Errorf("the cache holds %d txs (held %d), the bound is %d", n, c.held, c.maxTxs)
	}
}

// A pending tx decoded again (its inputs resolved after its children were
// decoded) makes its descendants' entries stale: they are dropped and
// queued to be decoded again, so no answer shows what a child read from
// the parent's earlier decoding.
func TestPendingRuneCacheDescendants(t *testing.T) {
	c := newPendingRuneCache()
	v := &view{hasTip: true, tip: db.Tip{Height: 10, Hash: bchain.Hash{10}}, seq: 1}
	x := &mempool.Tx{Tx: &bchain.Tx{Txid: bchain.Hash{1}}}
	y := &mempool.Tx{Tx: &bchain.Tx{Txid: bchain.Hash{2}}}
	z := &mempool.Tx{Tx: &bchain.Tx{Txid: bchain.Hash{3}}}
	other := &mempool.Tx{Tx: &bchain.Tx{Txid: bchain.Hash{4}}}
	c.put(v, x, &pendingMoves{pendingParent: true}) // its input not known yet: nothing on its outputs
	c.put(v, y, &pendingMoves{pendingParent: true, parents: []bchain.Hash{x.Txid}})
	c.put(v, z, &pendingMoves{pendingParent: true, parents: []bchain.Hash{y.Txid}})
	c.put(v, other, &pendingMoves{moved: true, burned: []runes.Balance{{Amount: runes.U128{Lo: 1}}}})
	// x's input resolves: a new version, decoded with the runes it spends
	x2 := &mempool.Tx{Tx: x.Tx}
	m2 := &pendingMoves{moved: true, outs: map[uint32][]runes.Balance{0: {{Amount: runes.U128{Lo: 100}}}}}
	c.put(v, x2, m2)
	if m, ok := c.get(v, x2); !ok || m != m2 {
		t.Fatal("the new decoding of the parent is not kept")
	}
	for _, tx := range []*mempool.Tx{y, z} {
		if _, ok := c.get(v, tx); ok {
			t.Errorf("tx %x still answers from its parent's earlier decoding", tx.Txid[:1])
		}
	}
	if _, ok := c.get(v, other); !ok {
		t.Error("an unrelated entry was dropped")
	}
	redo := c.takeRedo()
	if len(redo) != 2 || c.held != m2.size()+1 {
		t.Errorf("queued %d txs to decode again (want y and z), held %d", len(redo), c.held)
	}
}
