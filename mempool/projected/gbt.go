package projected

import (
	"math"
	"slices"
)

// work is a tx's state during one template walk; the walk consumes
// ancestors, so these are copies of the graph's totals.
type work struct {
	ancFee, ancW, ancV, ancSig uint64
	ancCnt                     int32
	heap                       int32 // index in the modified queue, -1 if out
	score                      float64
	dep                        float64 // lowest cluster rate an ancestor went in at
	rate                       float64 // effective fee rate once selected
	used, modified             bool
	hasKids                    bool
	// The tx's own figures, copied here so that the walk stays in this
	// compact array rather than chasing graph nodes.
	fee                uint64
	adjW, adjV, sigops uint32
	order              uint32
}

// builder runs mempool.space's template walk. Its buffers are reused from
// one walk to the next.
type builder struct {
	g        *graph
	p        Params
	w        []work
	stack    []int32 // candidates by initial score; consumed from top
	heap     []int32 // the "modified" queue: best first
	visit    []uint32
	visitGen uint32
	pkg, dfs []int32

	// Result of the last walk: seq holds the selected slots in block order,
	// block i is seq[ends[i-1]:ends[i]]; weights are the builder's block
	// weights (reserve included); overflow the packages that fit no block.
	seq      []int32
	pkgs     []int32 // per seq entry: the seq index where its package starts
	ends     []int
	weights  []uint64
	overflow []int32
}

func (b *builder) blockCount() int { return len(b.ends) }

func (b *builder) block(i int) []int32 {
	start := 0
	if i > 0 {
		start = b.ends[i-1]
	}
	return b.seq[start:b.ends[i]]
}

// build walks the current graph and fills seq, ends, weights, overflow and
// the selected txs' rates.
func (b *builder) build() {
	p := b.p
	b.prepare()

	maxW := int64(p.BlockWeight)
	blockW, blockSig := int64(p.ReservedWeight), uint64(p.ReservedSigops)
	failures, top := 0, 0
	for top < len(b.stack) || len(b.heap) > 0 {
		for top < len(b.stack) && (b.w[b.stack[top]].used || b.w[b.stack[top]].modified) {
			top++
		}
		for len(b.heap) > 0 && b.w[b.heap[0]].used {
			b.pop()
		}
		fromStack, fromQueue := top < len(b.stack), len(b.heap) > 0
		if fromStack || fromQueue {
			var next int32
			if fromStack && (!fromQueue || b.better(b.stack[top], b.heap[0])) {
				next = b.stack[top]
				top++
			} else {
				next = b.pop()
			}
			t := &b.w[next]
			lastBlock := len(b.ends) >= p.Blocks-1
			if !lastBlock && (blockW+4*int64(t.ancV) >= maxW-fitMargin ||
				(p.MaxSigops > 0 && blockSig+t.ancSig > uint64(p.MaxSigops))) {
				// Held aside while smaller packages are tried.
				b.overflow = append(b.overflow, next)
				failures++
			} else {
				w, sig := b.selectPackage(next)
				blockW += w
				blockSig += sig
				failures = 0
			}
		}
		full := failures > maxPackageTries && blockW > maxW-fitMargin-int64(p.ReservedWeight)
		empty := top >= len(b.stack) && len(b.heap) == 0
		if (full || empty) && len(b.ends) < p.Blocks-1 {
			start := 0
			if len(b.ends) > 0 {
				start = b.ends[len(b.ends)-1]
			}
			if len(b.seq) == start {
				// Only packages too big for any block are left.
				break
			}
			b.ends = append(b.ends, len(b.seq))
			b.weights = append(b.weights, uint64(blockW))
			blockW, blockSig, failures = int64(p.ReservedWeight), uint64(p.ReservedSigops), 0
			// The held-aside packages are candidates again, best first.
			for i := len(b.overflow) - 1; i >= 0; i-- {
				o := b.overflow[i]
				if b.w[o].modified {
					b.push(o)
				} else {
					top--
					b.stack[top] = o
				}
			}
			b.overflow = b.overflow[:0]
		}
	}
	start := 0
	if len(b.ends) > 0 {
		start = b.ends[len(b.ends)-1]
	}
	if len(b.seq) > start {
		b.ends = append(b.ends, len(b.seq))
		b.weights = append(b.weights, uint64(blockW))
	}
}

// prepare resets the walk's state from the graph: each live tx's working
// copy of its ancestor totals, and the stack of txs by ancestor score.
func (b *builder) prepare() {
	g := b.g
	order := g.refreshOrder()
	b.w = slices.Grow(b.w[:0], len(g.nodes))[:len(g.nodes)]
	if len(b.visit) < len(g.nodes) {
		b.visit = make([]uint32, len(g.nodes)+len(g.nodes)/4)
		b.visitGen = 0
	}
	for s := range g.nodes {
		n := &g.nodes[s]
		if !n.alive {
			continue
		}
		b.w[s] = work{
			ancFee: n.anc.fee, ancW: n.anc.adjW, ancV: n.anc.adjV, ancSig: n.anc.sigops,
			ancCnt: int32(len(n.ancestors)), heap: -1, score: n.score, dep: math.Inf(1),
			fee: n.fee, adjW: n.adjW, adjV: n.adjV, sigops: n.sigops, order: n.order,
			hasKids: len(n.children) > 0,
		}
	}
	b.stack = append(b.stack[:0], order...)
	b.heap = b.heap[:0]
	b.seq, b.pkgs, b.ends, b.weights, b.overflow = b.seq[:0], b.pkgs[:0], b.ends[:0], b.weights[:0], b.overflow[:0]
}

// selectPackage puts next and its remaining ancestors in the block,
// parents first, and returns the weight and sigops added.
func (b *builder) selectPackage(next int32) (int64, uint64) {
	g := b.g
	pkg := b.pkg[:0]
	if b.w[next].ancCnt > 0 {
		for _, a := range g.nodes[next].ancestors {
			if !b.w[a].used {
				pkg = append(pkg, a)
			}
		}
	}
	slices.SortFunc(pkg, func(x, y int32) int {
		if cx, cy := b.w[x].ancCnt, b.w[y].ancCnt; cx != cy {
			return int(cx - cy)
		}
		if b.better0(x, y) {
			return -1
		}
		return 1
	})
	pkg = append(pkg, next)
	t := &b.w[next]
	rate := min(t.dep, feeRate(t.ancFee, float64(t.ancW)/4))
	var weight int64
	var sigops uint64
	start := int32(len(b.seq))
	for _, s := range pkg {
		b.w[s].used = true
		b.w[s].rate = rate
		b.seq = append(b.seq, s)
		b.pkgs = append(b.pkgs, start)
		weight += int64(b.w[s].adjW)
		sigops += uint64(b.w[s].sigops)
		b.updateDescendants(s, rate)
	}
	b.pkg = pkg
	return weight, sigops
}

// updateDescendants removes root from its descendants' packages and
// requeues those whose score moved.
func (b *builder) updateDescendants(root int32, rate float64) {
	g := b.g
	r := &b.w[root]
	if !r.hasKids {
		return
	}
	gen := nextGen(&b.visitGen, b.visit)
	stack := b.dfs[:0]
	for _, c := range g.nodes[root].children {
		if b.visit[c] != gen {
			b.visit[c] = gen
			stack = append(stack, c)
		}
	}
	for len(stack) > 0 {
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		w := &b.w[d]
		old := w.score
		w.dep = min(w.dep, rate)
		w.ancFee -= r.fee
		w.ancW -= uint64(r.adjW)
		w.ancV -= uint64(r.adjV)
		w.ancSig -= uint64(r.sigops)
		w.ancCnt--
		n := &g.nodes[d]
		w.score = score(w.fee, uint64(w.adjV), w.ancFee, w.ancV)
		if w.score != old {
			w.modified = true
			b.push(d)
		}
		for _, c := range n.children {
			if b.visit[c] != gen {
				b.visit[c] = gen
				stack = append(stack, c)
			}
		}
	}
	b.dfs = stack
}

// better is the walk's priority: higher score, then lower order, then
// lower txid.
func (b *builder) better(x, y int32) bool {
	if sx, sy := b.w[x].score, b.w[y].score; sx != sy {
		return sx > sy
	}
	return b.better0(x, y)
}

// better0 breaks score ties.
func (b *builder) better0(x, y int32) bool {
	if ox, oy := b.w[x].order, b.w[y].order; ox != oy {
		return ox < oy
	}
	return b.g.before(x, y, 0, 0)
}

// push inserts s in the modified queue, or moves it after a score change.
func (b *builder) push(s int32) {
	if i := b.w[s].heap; i >= 0 {
		b.up(int(i))
		b.down(int(b.w[s].heap))
		return
	}
	b.heap = append(b.heap, s)
	b.w[s].heap = int32(len(b.heap) - 1)
	b.up(len(b.heap) - 1)
}

func (b *builder) pop() int32 {
	h := b.heap
	s := h[0]
	last := len(h) - 1
	b.swap(0, last)
	b.heap = h[:last]
	b.w[s].heap = -1
	if last > 0 {
		b.down(0)
	}
	return s
}

func (b *builder) swap(i, j int) {
	h := b.heap
	h[i], h[j] = h[j], h[i]
	b.w[h[i]].heap = int32(i)
	b.w[h[j]].heap = int32(j)
}

func (b *builder) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !b.better(b.heap[i], b.heap[parent]) {
			return
		}
		b.swap(i, parent)
		i = parent
	}
}

func (b *builder) down(i int) {
	n := len(b.heap)
	for {
		best := i
		if l := 2*i + 1; l < n && b.better(b.heap[l], b.heap[best]) {
			best = l
		}
		if r := 2*i + 2; r < n && b.better(b.heap[r], b.heap[best]) {
			best = r
		}
		if best == i {
			return
		}
		b.swap(i, best)
		i = best
	}
}
