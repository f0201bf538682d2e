package projected

import (
	"bytes"
	"slices"

	"github.com/openexplorer/blockbook/bchain"
)

// Tx is what the engine needs of a mempool tx.
type Tx struct {
	Txid bchain.Hash
	// Fee in the coin's base unit (satoshis).
	Fee uint64
	// Weight in weight units (4 × size for chains without segwit); 0 is
	// taken as 1.
	Weight uint32
	// Size is the serialized size in bytes, only for the blocks' blockSize;
	// 0 means ceil(Weight/4).
	Size uint32
	// Sigops is the sigop cost, 0 when unknown. As in Bitcoin Core, the
	// builder counts a tx's weight as max(Weight, 20 × Sigops).
	Sigops uint32
	// Parents are the txids of the tx's in-mempool parents. Parents not (or
	// no longer) in the engine are ignored until they are added.
	Parents []bchain.Hash
}

// node is a tx in the graph, kept across updates.
type node struct {
	txid     bchain.Hash
	fee      uint64
	weight   uint32 // real weight, for block stats
	size     uint32
	sigops   uint32
	adjW     uint32 // sigop-adjusted weight: what the builder counts
	adjV     uint32 // ceil(adjW/4)
	order    uint32 // mempool.space's tie-break: the txid's last 4 bytes
	alive    bool
	declared []bchain.Hash // deduplicated Parents as given
	parents  []int32       // slots of the declared parents that are present
	children []int32
	// ancestors is the full in-mempool ancestor set, maintained on updates.
	ancestors []int32
	anc       totals // the tx plus its ancestors
	score     float64
}

type totals struct {
	fee, adjW, adjV, sigops uint64
}

// recompute states of a slot during settle.
const (
	stIdle uint8 = iota
	stPending
	stBusy
	stDone
)

// graph holds the txs, their links and ancestor data. Not safe for
// concurrent use: the Engine serialises writers.
type graph struct {
	nodes []node
	free  []int32
	index map[bchain.Hash]int32
	// waiting maps an absent parent to the present children that declared
	// it, so that a late or re-added parent links up again.
	waiting map[bchain.Hash][]int32

	state []uint8
	dirty []int32 // slots whose ancestors must be recomputed

	mark    []uint32 // generation marks for deduplicating unions
	markGen uint32

	// changed lists the slots whose score may have moved since the order
	// was last refreshed; stamped so each appears once.
	changed      []int32
	changedStamp []uint32
	epoch        uint32
	order        []int32 // live slots by descending initial score
	orderTmp     []int32

	hist FeeHistogram
}

func newGraph() *graph {
	return &graph{
		index:   make(map[bchain.Hash]int32),
		waiting: make(map[bchain.Hash][]int32),
		epoch:   1,
	}
}

func txOrder(h bchain.Hash) uint32 {
	return uint32(h[31])<<24 | uint32(h[30])<<16 | uint32(h[29])<<8 | uint32(h[28])
}

func (g *graph) alloc() int32 {
	if n := len(g.free); n > 0 {
		s := g.free[n-1]
		g.free = g.free[:n-1]
		return s
	}
	g.nodes = append(g.nodes, node{})
	g.state = append(g.state, stIdle)
	g.mark = append(g.mark, 0)
	g.changedStamp = append(g.changedStamp, 0)
	return int32(len(g.nodes) - 1)
}

// add inserts a tx; a txid already present is left as it is.
func (g *graph) add(tx *Tx) bool {
	if _, ok := g.index[tx.Txid]; ok {
		return false
	}
	s := g.alloc()
	n := &g.nodes[s]
	w := max(tx.Weight, 1)
	adjW := max(w, bytesPerSigop*tx.Sigops)
	size := tx.Size
	if size == 0 {
		size = (w + 3) / 4
	}
	*n = node{
		txid: tx.Txid, fee: tx.Fee, weight: w, size: size, sigops: tx.Sigops,
		adjW: adjW, adjV: (adjW + 3) / 4, order: txOrder(tx.Txid), alive: true,
		parents: n.parents[:0], children: n.children[:0], ancestors: n.ancestors[:0],
	}
	for _, p := range tx.Parents {
		if p != tx.Txid && !slices.Contains(n.declared, p) {
			n.declared = append(n.declared, p)
		}
	}
	g.index[tx.Txid] = s
	for _, p := range n.declared {
		if q, ok := g.index[p]; ok {
			n.parents = append(n.parents, q)
			g.nodes[q].children = append(g.nodes[q].children, s)
		} else {
			g.waiting[p] = append(g.waiting[p], s)
		}
	}
	if kids, ok := g.waiting[tx.Txid]; ok {
		for _, c := range kids {
			g.nodes[c].parents = append(g.nodes[c].parents, s)
			n.children = append(n.children, c)
		}
		delete(g.waiting, tx.Txid)
	}
	g.markDirty(s)
	g.hist.add(n.fee, n.adjV)
	return true
}

// remove deletes a tx. Its descendants stay: they lose it as an ancestor,
// as when it is confirmed, and link to it again if it comes back.
func (g *graph) remove(txid bchain.Hash) bool {
	s, ok := g.index[txid]
	if !ok {
		return false
	}
	n := &g.nodes[s]
	for _, q := range n.parents {
		g.nodes[q].children = deleteSlot(g.nodes[q].children, s)
	}
	for _, p := range n.declared {
		if _, present := g.index[p]; !present {
			if kids := deleteSlot(g.waiting[p], s); len(kids) > 0 {
				g.waiting[p] = kids
			} else {
				delete(g.waiting, p)
			}
		}
	}
	for _, c := range n.children {
		g.nodes[c].parents = deleteSlot(g.nodes[c].parents, s)
		g.waiting[txid] = append(g.waiting[txid], c)
		g.markDirty(c)
	}
	g.hist.remove(n.fee, n.adjV)
	delete(g.index, txid)
	// A slot marked earlier in the batch must not stop markDirty from
	// walking the children of the tx that reuses it.
	g.state[s] = stIdle
	*n = node{parents: n.parents[:0], children: n.children[:0], ancestors: n.ancestors[:0]}
	g.free = append(g.free, s)
	return true
}

func deleteSlot(list []int32, s int32) []int32 {
	if i := slices.Index(list, s); i >= 0 {
		list[i] = list[len(list)-1]
		return list[:len(list)-1]
	}
	return list
}

// markDirty marks a slot and its descendants for recomputation.
func (g *graph) markDirty(s int32) {
	if g.state[s] != stIdle {
		return
	}
	stack := []int32{s}
	g.state[s] = stPending
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		g.dirty = append(g.dirty, x)
		for _, c := range g.nodes[x].children {
			if g.state[c] == stIdle {
				g.state[c] = stPending
				stack = append(stack, c)
			}
		}
	}
}

// settle recomputes the ancestor data of every marked slot, parents first.
func (g *graph) settle() {
	for _, s := range g.dirty {
		if g.state[s] == stPending && g.nodes[s].alive {
			g.recompute(s)
		}
	}
	for _, s := range g.dirty {
		g.state[s] = stIdle
	}
	g.dirty = g.dirty[:0]
}

func (g *graph) recompute(s int32) {
	g.state[s] = stBusy
	for _, p := range g.nodes[s].parents {
		if g.state[p] == stPending {
			g.recompute(p)
		}
	}
	n := &g.nodes[s]
	gen := nextGen(&g.markGen, g.mark)
	anc := n.ancestors[:0]
	for _, p := range n.parents {
		// A busy parent means a cycle, which real txs cannot form: the
		// edge is left out rather than looping.
		if g.state[p] == stBusy || g.mark[p] == gen {
			continue
		}
		g.mark[p] = gen
		anc = append(anc, p)
		for _, a := range g.nodes[p].ancestors {
			if g.mark[a] != gen {
				g.mark[a] = gen
				anc = append(anc, a)
			}
		}
	}
	n.ancestors = anc
	t := totals{fee: n.fee, adjW: uint64(n.adjW), adjV: uint64(n.adjV), sigops: uint64(n.sigops)}
	for _, a := range anc {
		m := &g.nodes[a]
		t.fee += m.fee
		t.adjW += uint64(m.adjW)
		t.adjV += uint64(m.adjV)
		t.sigops += uint64(m.sigops)
	}
	n.anc = t
	n.score = score(n.fee, uint64(n.adjV), t.fee, t.adjV)
	g.state[s] = stDone
	if g.changedStamp[s] != g.epoch {
		g.changedStamp[s] = g.epoch
		g.changed = append(g.changed, s)
	}
}

// nextGen advances a generation counter, clearing the marks when it wraps.
func nextGen(gen *uint32, marks []uint32) uint32 {
	*gen++
	if *gen == 0 {
		clear(marks)
		*gen = 1
	}
	return *gen
}

// feeRate is Rust GBT's calc_fee_rate: a zero size counts as 1.
func feeRate(fee uint64, vsize float64) float64 {
	if vsize == 0 {
		vsize = 1
	}
	return float64(fee) / vsize
}

// score is the ancestor score: the lower of the tx's own rate and its
// package's rate, both over rounded-up sigop-adjusted vsizes.
func score(fee, vsize, ancFee, ancVsize uint64) float64 {
	return min(feeRate(fee, float64(vsize)), feeRate(ancFee, float64(ancVsize)))
}

// before is the builder's priority: higher score first, then lower order,
// then lower txid.
func (g *graph) before(a, b int32, sa, sb float64) bool {
	if sa != sb {
		return sa > sb
	}
	na, nb := &g.nodes[a], &g.nodes[b]
	if na.order != nb.order {
		return na.order < nb.order
	}
	return bytes.Compare(na.txid[:], nb.txid[:]) < 0
}

// refreshOrder brings the score order up to date: slots removed or changed
// since the last refresh are dropped, the changed ones sorted and merged
// back, in O(n + k log k).
func (g *graph) refreshOrder() []int32 {
	byScore := func(a, b int32) int {
		if g.before(a, b, g.nodes[a].score, g.nodes[b].score) {
			return -1
		}
		if a == b {
			return 0
		}
		return 1
	}
	ch := g.changed[:0]
	for _, s := range g.changed {
		if g.nodes[s].alive {
			ch = append(ch, s)
		}
	}
	slices.SortFunc(ch, byScore)
	out := slices.Grow(g.orderTmp[:0], len(g.index))
	i := 0
	for _, s := range g.order {
		if !g.nodes[s].alive || g.changedStamp[s] == g.epoch {
			continue
		}
		for i < len(ch) && byScore(ch[i], s) < 0 {
			out = append(out, ch[i])
			i++
		}
		out = append(out, s)
	}
	out = append(out, ch[i:]...)
	g.orderTmp, g.order = g.order, out
	g.changed = ch[:0]
	g.epoch++
	return g.order
}
