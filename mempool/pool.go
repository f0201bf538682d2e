package mempool

import (
	"bytes"
	"crypto/sha256"
	"time"

	"github.com/openexplorer/blockbook/bchain"
)

// pool is the mempool's state: the txs, and the indexes derived from them
// that every add and remove keeps consistent:
//
//   - byAddr: descriptor → txids touching it (an input whose prevout is
//     resolved to the descriptor, or an output paying it), each txid once;
//   - byScriptHash: sha256 of each byAddr descriptor → the descriptor, so
//     that Electrum and Esplora find a script only pending txs touch;
//   - spends: outpoint → the pool tx input spending it (one at most: a
//     second spender is a conflict and replaces the first);
//   - unresolved: txs with an input whose prevout is not known yet, and
//     waiting: parent txid → such txs spending one of its outputs, so that
//     they are resolved when the parent arrives.
//
// gone remembers recently removed txids with the logical time of removal,
// so that a tx the node showed us before it was removed (confirmed,
// replaced, evicted) is not added back from stale information; mined does
// the same for the txs of the last connected blocks that were not in the
// pool (kept for a few blocks only: a catch-up connects old blocks by the
// thousand).
//
// The pool does no I/O and is not safe for concurrent use: the Mempool
// guards it with its RWMutex.
type pool struct {
	txs        map[bchain.Hash]*entry
	byAddr     map[string]*addrSet
	byHash     map[[32]byte]string
	spends     map[Outpoint]spender
	unresolved map[bchain.Hash]struct{}
	waiting    map[bchain.Hash][]bchain.Hash
	gone       map[bchain.Hash]goneRec
	mined      []minedBlock // oldest first, at most minedKeep
	// watch, when set, hears every tx the pool takes in or republishes
	// (update) and every txid it drops, in order (Projection).
	watch poolWatcher
	// onRemove hear every txid the pool drops, under the Mempool's lock
	// (Mempool.OnRemoved).
	onRemove []func(bchain.Hash)
}

// poolWatcher follows the pool's changes. Its methods run under the
// Mempool's lock and must not block.
type poolWatcher interface {
	added(p *pool, tx *Tx)
	removed(txid bchain.Hash)
}

// minedBlock is the txids of a connected block, with the logical time the
// mempool learnt of it.
type minedBlock struct {
	at    uint64
	txids map[bchain.Hash]struct{}
}

// minedKeep is how many connected blocks' txids the pool remembers.
const minedKeep = 16

// addMined remembers the txids of a connected block.
func (p *pool) addMined(at uint64, txids map[bchain.Hash]struct{}) {
	if len(txids) == 0 {
		return
	}
	if len(p.mined) == minedKeep {
		p.mined = append(p.mined[:0], p.mined[1:]...)
	}
	p.mined = append(p.mined, minedBlock{at: at, txids: txids})
}

// removedSince reports whether txid left the pool, or was mined, after the
// logical time obs.
func (p *pool) removedSince(txid bchain.Hash, obs uint64) bool {
	if g, ok := p.gone[txid]; ok && g.at > obs {
		return true
	}
	for i := len(p.mined) - 1; i >= 0 && p.mined[i].at > obs; i-- {
		if _, ok := p.mined[i].txids[txid]; ok {
			return true
		}
	}
	return false
}

// entry is one pool tx. obs is the logical time at which the node showed
// us the tx (see Mempool.tick): information observed later wins conflicts.
type entry struct {
	tx  *Tx
	obs uint64
}

type spender struct {
	txid bchain.Hash
	vin  uint32
}

type goneRec struct {
	at   uint64
	when time.Time
}

// Removal reasons, as the metrics label them.
const (
	reasonConfirmed = "confirmed"
	reasonConflict  = "conflict" // double-spent by a block, or a descendant of such a tx
	reasonReplaced  = "replaced" // replaced by a mempool tx (RBF), or a descendant
	reasonVanished  = "vanished" // no longer in the node's mempool (evicted, expired)
)

func newPool() *pool {
	return &pool{
		txs: map[bchain.Hash]*entry{}, byAddr: map[string]*addrSet{}, byHash: map[[32]byte]string{}, spends: map[Outpoint]spender{},
		unresolved: map[bchain.Hash]struct{}{}, waiting: map[bchain.Hash][]bchain.Hash{}, gone: map[bchain.Hash]goneRec{},
	}
}

// descs returns the distinct descriptors tx touches: resolved prevouts and
// outputs.
func descs(tx *Tx) []bchain.AddrDesc {
	var out []bchain.AddrDesc
	add := func(d bchain.AddrDesc) {
		if len(d) == 0 {
			return
		}
		for _, o := range out {
			if bytes.Equal(o, d) {
				return
			}
		}
		out = append(out, d)
	}
	for i := range tx.Prevouts {
		if tx.Prevouts[i].Known {
			add(tx.Prevouts[i].Desc)
		}
	}
	for _, d := range tx.OutDescs {
		add(d)
	}
	return out
}

// conflicts returns the pool txs, other than tx itself, that spend an
// outpoint tx spends.
func (p *pool) conflicts(tx *Tx) []bchain.Hash {
	var out []bchain.Hash
	for i := range tx.Vin {
		in := &tx.Vin[i]
		if in.Coinbase {
			continue
		}
		if s, ok := p.spends[Outpoint{in.PrevTxid, in.PrevVout}]; ok && s.txid != tx.Txid {
			out = append(out, s.txid)
		}
	}
	return out
}

// insert adds tx, which must not be in the pool and must not conflict with
// a pool tx. It returns the txs that were waiting for tx as a parent.
func (p *pool) insert(tx *Tx, obs uint64) (waiters []bchain.Hash) {
	p.txs[tx.Txid] = &entry{tx: tx, obs: obs}
	delete(p.gone, tx.Txid)
	for i := range tx.Vin {
		in := &tx.Vin[i]
		if !in.Coinbase {
			p.spends[Outpoint{in.PrevTxid, in.PrevVout}] = spender{tx.Txid, uint32(i)}
		}
	}
	for _, d := range descs(tx) {
		p.addrAdd(d, tx.Txid)
	}
	p.markUnresolved(tx)
	if p.watch != nil {
		p.watch.added(p, tx)
	}
	if w, ok := p.waiting[tx.Txid]; ok {
		delete(p.waiting, tx.Txid)
		for _, c := range w {
			if _, ok := p.unresolved[c]; ok {
				waiters = append(waiters, c)
			}
		}
	}
	return waiters
}

// markUnresolved files tx under unresolved and waiting for each unknown
// prevout.
func (p *pool) markUnresolved(tx *Tx) {
	for i := range tx.Prevouts {
		if tx.Prevouts[i].Known || tx.Vin[i].Coinbase {
			continue
		}
		p.unresolved[tx.Txid] = struct{}{}
		parent := tx.Vin[i].PrevTxid
		if w := p.waiting[parent]; len(w) == 0 || w[len(w)-1] != tx.Txid {
			p.waiting[parent] = append(w, tx.Txid)
		}
	}
}

// unmarkUnresolved undoes markUnresolved.
func (p *pool) unmarkUnresolved(tx *Tx) {
	if _, ok := p.unresolved[tx.Txid]; !ok {
		return
	}
	delete(p.unresolved, tx.Txid)
	for i := range tx.Prevouts {
		if tx.Prevouts[i].Known || tx.Vin[i].Coinbase {
			continue
		}
		parent := tx.Vin[i].PrevTxid
		w := p.waiting[parent]
		for j := 0; j < len(w); j++ {
			if w[j] == tx.Txid {
				w = append(w[:j], w[j+1:]...)
				j--
			}
		}
		if len(w) == 0 {
			delete(p.waiting, parent)
		} else {
			p.waiting[parent] = w
		}
	}
}

// remove takes one tx out of the pool (not its descendants) and remembers
// it as gone at logical time at.
func (p *pool) remove(txid bchain.Hash, at uint64, now time.Time) *Tx {
	e, ok := p.txs[txid]
	if !ok {
		return nil
	}
	tx := e.tx
	delete(p.txs, txid)
	p.gone[txid] = goneRec{at: at, when: now}
	for i := range tx.Vin {
		in := &tx.Vin[i]
		if in.Coinbase {
			continue
		}
		op := Outpoint{in.PrevTxid, in.PrevVout}
		if s, ok := p.spends[op]; ok && s.txid == txid {
			delete(p.spends, op)
		}
	}
	for _, d := range descs(tx) {
		p.addrRemove(d, txid)
	}
	p.unmarkUnresolved(tx)
	if p.watch != nil {
		p.watch.removed(txid)
	}
	for _, fn := range p.onRemove {
		fn(txid)
	}
	return tx
}

// removeTree removes txid and every pool tx spending its outputs,
// recursively, and returns what it removed.
func (p *pool) removeTree(txid bchain.Hash, at uint64, now time.Time) []*Tx {
	var out []*Tx
	stack := []bchain.Hash{txid}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		tx := p.remove(h, at, now)
		if tx == nil {
			continue
		}
		out = append(out, tx)
		for n := range tx.Vout {
			if s, ok := p.spends[Outpoint{h, uint32(n)}]; ok {
				stack = append(stack, s.txid)
			}
		}
	}
	return out
}

// update swaps a pool tx for a version with more prevouts resolved
// (published as a new *Tx) and files it under the newly known descriptors.
func (p *pool) update(old, tx *Tx) {
	e := p.txs[tx.Txid]
	p.unmarkUnresolved(old)
	e.tx = tx
	known := descs(old)
	for _, d := range descs(tx) {
		isNew := true
		for _, k := range known {
			if bytes.Equal(k, d) {
				isNew = false
				break
			}
		}
		if isNew {
			p.addrAdd(d, tx.Txid)
		}
	}
	p.markUnresolved(tx)
	if p.watch != nil {
		p.watch.added(p, tx)
	}
}

// pruneGone forgets removals older than keep.
func (p *pool) pruneGone(now time.Time, keep time.Duration) {
	for h, g := range p.gone {
		if now.Sub(g.when) > keep {
			delete(p.gone, h)
		}
	}
}

func (p *pool) addrAdd(d bchain.AddrDesc, txid bchain.Hash) {
	s := p.byAddr[string(d)]
	if s == nil {
		s = &addrSet{}
		p.byAddr[string(d)] = s
		p.byHash[sha256.Sum256(d)] = string(d)
	}
	s.add(txid)
}

func (p *pool) addrRemove(d bchain.AddrDesc, txid bchain.Hash) {
	s := p.byAddr[string(d)]
	if s == nil {
		return
	}
	s.remove(txid)
	if len(s.ids) == 0 {
		delete(p.byAddr, string(d))
		delete(p.byHash, sha256.Sum256(d))
	}
}

// addrSet is the txids of one descriptor. Most descriptors have one or two
// txs; a position index is built for busy ones so that removal stays O(1).
type addrSet struct {
	ids []bchain.Hash
	pos map[bchain.Hash]int
}

const addrSetIndexAt = 32

func (s *addrSet) add(h bchain.Hash) {
	if s.pos != nil {
		if _, ok := s.pos[h]; ok {
			return
		}
		s.pos[h] = len(s.ids)
		s.ids = append(s.ids, h)
		return
	}
	for _, x := range s.ids {
		if x == h {
			return
		}
	}
	s.ids = append(s.ids, h)
	if len(s.ids) > addrSetIndexAt {
		s.pos = make(map[bchain.Hash]int, len(s.ids))
		for i, x := range s.ids {
			s.pos[x] = i
		}
	}
}

func (s *addrSet) remove(h bchain.Hash) {
	i := -1
	if s.pos != nil {
		if j, ok := s.pos[h]; ok {
			i = j
			delete(s.pos, h)
		}
	} else {
		for j, x := range s.ids {
			if x == h {
				i = j
				break
			}
		}
	}
	if i < 0 {
		return
	}
	last := len(s.ids) - 1
	if i != last {
		s.ids[i] = s.ids[last]
		if s.pos != nil {
			s.pos[s.ids[i]] = i
		}
	}
	s.ids = s.ids[:last]
	if s.pos != nil && len(s.ids) <= addrSetIndexAt/2 {
		s.pos = nil
	}
}
