package mempool

import (
	"slices"
	"sync"

	"github.com/openexplorer/blockbook/bchain"
)

// Replacements is the history of RBF replacements the mempool saw, as
// mempool.space's rbf-cache keeps it: trees whose root is the latest tx
// of a sequence of replacements and whose children are the trees it
// replaced. It is bounded (the oldest trees go first) and kept in memory
// only: a restart starts it empty.
type Replacements struct {
	mu         sync.Mutex
	maxTrees   int
	replacedBy map[bchain.Hash]bchain.Hash
	replaces   map[bchain.Hash][]bchain.Hash
	trees      map[bchain.Hash]*RbfTree    // by root txid
	treeOf     map[bchain.Hash]bchain.Hash // every txid of a tree → its root
	events     []bchain.Hash               // replacing txids, oldest first
	version    uint64
}

// RbfTx is a tx of a replacement tree, with mempool.space's figures.
type RbfTx struct {
	Txid    bchain.Hash
	Fee     uint64
	VSize   float64 // weight / 4
	Value   uint64
	Time    int64 // first seen, unix seconds
	Rbf     bool  // signals replaceability (BIP125)
	FullRbf bool  // replaced a tx that did not signal
	Mined   bool
}

// RbfTree is a tx and the trees it replaced. Interval is the seconds
// from the tx's first sight to its replacement (0 for a root).
type RbfTree struct {
	Tx       RbfTx
	Time     int64
	Interval int64
	Mined    bool
	FullRbf  bool
	Replaces []*RbfTree
}

// DefaultMaxRbfTrees bounds the replacement history.
const DefaultMaxRbfTrees = 1000

func newReplacements(maxTrees int) *Replacements {
	return &Replacements{maxTrees: maxTrees, replacedBy: map[bchain.Hash]bchain.Hash{}, replaces: map[bchain.Hash][]bchain.Hash{},
		trees: map[bchain.Hash]*RbfTree{}, treeOf: map[bchain.Hash]bchain.Hash{}}
}

// rbfTxOf strips a mempool tx.
func rbfTxOf(t *Tx) RbfTx {
	fee, _ := t.Fee()
	var value uint64
	for _, o := range t.Vout {
		value += o.Value
	}
	signals := false
	for _, in := range t.Vin {
		if in.Sequence < 0xfffffffe {
			signals = true
		}
	}
	return RbfTx{Txid: t.Txid, Fee: fee, VSize: float64(t.Weight()) / 4, Value: value, Time: t.FirstSeen, Rbf: signals}
}

// add records that tx replaced the txs of replaced (rbf-cache's add).
func (r *Replacements) add(replaced []*Tx, tx *Tx) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.treeOf[tx.Txid]; ok || len(replaced) == 0 {
		return
	}
	nt := rbfTxOf(tx)
	tree := &RbfTree{Tx: nt, Time: nt.Time}
	var ids []bchain.Hash
	for _, old := range replaced {
		ot := rbfTxOf(old)
		if _, done := r.replacedBy[ot.Txid]; done {
			continue
		}
		if !ot.Rbf {
			tree.Tx.FullRbf = true
		}
		r.replacedBy[ot.Txid] = nt.Txid
		ids = append(ids, ot.Txid)
		if root, ok := r.treeOf[ot.Txid]; ok {
			if sub := r.trees[root]; sub != nil {
				delete(r.trees, root)
				sub.Interval = nt.Time - sub.Time
				tree.Replaces = append(tree.Replaces, sub)
				tree.FullRbf = tree.FullRbf || sub.FullRbf || !sub.Tx.Rbf
			}
			continue
		}
		tree.Replaces = append(tree.Replaces, &RbfTree{Tx: ot, Time: ot.Time, Interval: nt.Time - ot.Time, FullRbf: !ot.Rbf})
		tree.FullRbf = tree.FullRbf || !ot.Rbf
	}
	if len(ids) == 0 {
		return
	}
	r.replaces[nt.Txid] = ids
	r.trees[nt.Txid] = tree
	r.mapTree(tree, nt.Txid)
	r.events = append(r.events, nt.Txid)
	r.version++
	for len(r.trees) > r.maxTrees && len(r.events) > 0 {
		r.evictOldest()
	}
	if len(r.events) > 2*r.maxTrees+16 {
		r.compactEvents()
	}
}

// compactEvents keeps each tree's latest event only: a tx replaced again
// and again adds events but no trees.
func (r *Replacements) compactEvents() {
	seen := map[bchain.Hash]bool{}
	keep := make([]bchain.Hash, 0, len(r.trees))
	for i := len(r.events) - 1; i >= 0; i-- {
		root, ok := r.treeOf[r.events[i]]
		if ok && !seen[root] {
			seen[root] = true
			keep = append(keep, r.events[i])
		}
	}
	slices.Reverse(keep)
	r.events = keep
}

func (r *Replacements) mapTree(t *RbfTree, root bchain.Hash) {
	r.treeOf[t.Tx.Txid] = root
	for _, c := range t.Replaces {
		r.mapTree(c, root)
	}
}

// evictOldest drops the tree of the oldest replacement event.
func (r *Replacements) evictOldest() {
	id := r.events[0]
	r.events = r.events[1:]
	root, ok := r.treeOf[id]
	if !ok {
		return
	}
	t := r.trees[root]
	if t == nil {
		return
	}
	delete(r.trees, root)
	var forget func(*RbfTree)
	forget = func(t *RbfTree) {
		delete(r.treeOf, t.Tx.Txid)
		delete(r.replacedBy, t.Tx.Txid)
		delete(r.replaces, t.Tx.Txid)
		for _, c := range t.Replaces {
			forget(c)
		}
	}
	forget(t)
}

// mined marks a confirmed tx of a tree (rbf-cache's mined).
func (r *Replacements) mined(txid bchain.Hash) {
	r.mu.Lock()
	defer r.mu.Unlock()
	root, ok := r.treeOf[txid]
	if !ok {
		return
	}
	t := r.trees[root]
	if t == nil {
		return
	}
	var mark func(*RbfTree) bool
	mark = func(n *RbfTree) bool {
		if n.Tx.Txid == txid {
			n.Tx.Mined = true
			return true
		}
		for _, c := range n.Replaces {
			if mark(c) {
				return true
			}
		}
		return false
	}
	mark(t)
	t.Mined = true
	r.version++
}

func (t *RbfTree) clone() *RbfTree {
	c := *t
	c.Replaces = make([]*RbfTree, len(t.Replaces))
	for i, s := range t.Replaces {
		c.Replaces[i] = s.clone()
	}
	return &c
}

// Tree is a copy of the tree holding txid; nil when none does.
func (r *Replacements) Tree(txid bchain.Hash) *RbfTree {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t := r.trees[r.treeOf[txid]]; t != nil {
		return t.clone()
	}
	return nil
}

// Replaces lists the txs txid replaced directly; nil when none.
func (r *Replacements) Replaces(txid bchain.Hash) []bchain.Hash {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]bchain.Hash(nil), r.replaces[txid]...)
}

// ReplacedBy is the tx that replaced txid, if any.
func (r *Replacements) ReplacedBy(txid bchain.Hash) (bchain.Hash, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, ok := r.replacedBy[txid]
	return h, ok
}

// Latest is copies of up to limit trees, latest replacement first; with
// fullOnly, only trees with a full-RBF replacement (rbf-cache's
// getRbfTrees).
func (r *Replacements) Latest(fullOnly bool, limit int) []*RbfTree {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []*RbfTree{}
	used := map[bchain.Hash]bool{}
	for i := len(r.events) - 1; i >= 0 && len(out) < limit; i-- {
		root, ok := r.treeOf[r.events[i]]
		if !ok || used[root] {
			continue
		}
		used[root] = true
		if t := r.trees[root]; t != nil && (!fullOnly || t.FullRbf) {
			out = append(out, t.clone())
		}
	}
	return out
}

// Version changes whenever the history does.
func (r *Replacements) Version() uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.version
}
