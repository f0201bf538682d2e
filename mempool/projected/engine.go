package projected

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/openexplorer/blockbook/bchain"
)

// MempoolBlock is one projected block's summary, mempool.space's
// MempoolBlock (fees/mempool-blocks).
type MempoolBlock struct {
	BlockSize  uint64    `json:"blockSize"`
	BlockVSize float64   `json:"blockVSize"`
	NTx        int       `json:"nTx"`
	TotalFees  uint64    `json:"totalFees"`
	MedianFee  float64   `json:"medianFee"`
	FeeRange   []float64 `json:"feeRange"`
}

// ProjectedBlock is a projected block with its txs in block order.
type ProjectedBlock struct {
	MempoolBlock
	Txids []bchain.Hash `json:"-"`
	// Rates are the txs' effective fee rates in sat/vB, index for index
	// with Txids: the rate of the package each went in with.
	Rates []float64 `json:"-"`
}

// Snapshot is an immutable projection of the mempool at one moment.
type Snapshot struct {
	Params Params
	Blocks []ProjectedBlock
	// Overflow holds txs whose package is too heavy for any block; they are
	// in no block, as in mempool.space ("unmineable").
	Overflow []bchain.Hash
	// Count is the number of txs in the mempool.
	Count     int
	histogram FeeHistogram
	summaries []MempoolBlock
	// The blocks' txs in block order (Blocks' Txids and Rates are slices
	// of these), and for each the index where its package starts.
	txids   []bchain.Hash
	rates   []float64
	pkgs    []int32
	weights []uint32
	fees    []uint64
	// spare are the overflow txs as TxRates lists them.
	spare []TxRate
}

// MempoolBlocks is the fees/mempool-blocks answer. The slice is shared:
// callers must not modify it.
func (s *Snapshot) MempoolBlocks() []MempoolBlock { return s.summaries }

// RecommendedFees is fees/recommended for the node's minimum fee (sat/vB).
func (s *Snapshot) RecommendedFees(minFee float64) RecommendedFees {
	return Recommend(s.summaries, minFee, s.Params)
}

// PreciseFees is fees/precise for the node's minimum fee (sat/vB).
func (s *Snapshot) PreciseFees(minFee float64) RecommendedFees {
	return RecommendPrecise(s.summaries, minFee, s.Params)
}

// FeeHistogram is Electrum's mempool.get_fee_histogram answer.
func (s *Snapshot) FeeHistogram() [][2]uint64 { return s.histogram.Pairs() }

// TxRate is a tx's fee rate (sat/vB) and vsize.
type TxRate struct {
	Rate  float64
	VSize uint32
}

// TxRates lists every tx of the projection with the rate it is mined at:
// its package's (Blocks' Rates), or its own for a tx in no block. It is
// what Electrum's mempool.get_fee_histogram bins (a CPFP parent counts at
// the rate its child pays for it, as a miner sees it). A new slice.
func (s *Snapshot) TxRates() []TxRate {
	out := make([]TxRate, 0, len(s.rates)+len(s.spare))
	for i, r := range s.rates {
		out = append(out, TxRate{Rate: r, VSize: (s.weights[i] + 3) / 4})
	}
	return append(out, s.spare...)
}

// Engine keeps a mempool's txs and projects them into blocks. Writers are
// serialised; readers take snapshots without locking.
type Engine struct {
	p     Params
	mu    sync.Mutex
	g     *graph
	b     builder
	stats []statTx // scratch for block stats
	dirty atomic.Bool
	snap  atomic.Pointer[Snapshot]
}

// NewEngine returns an empty engine for a chain's Params.
func NewEngine(p Params) *Engine {
	p = p.normalized()
	e := &Engine{p: p, g: newGraph()}
	e.b = builder{g: e.g, p: p}
	e.snap.Store(e.build())
	return e
}

// Add inserts txs, parents before children or in any order; a txid
// already present is ignored. It returns how many were added.
func (e *Engine) Add(txs ...Tx) int {
	return e.Update(txs, nil)
}

// Remove deletes txs and returns how many were present. Their descendants
// stay: the removed tx simply stops being their ancestor, which is right
// when it was confirmed. A tx evicted or replaced (RBF) invalidates its
// descendants, and the caller must remove them too (the node reports
// them gone as well). A removed tx that comes back links to its children
// again.
func (e *Engine) Remove(txids ...bchain.Hash) int {
	n := 0
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, id := range txids {
		if e.g.remove(id) {
			n++
		}
	}
	e.settle(n)
	return n
}

// ConnectBlock drops a new block's txs from the mempool (those present);
// their children in the mempool lose them as ancestors.
func (e *Engine) ConnectBlock(txids []bchain.Hash) int { return e.Remove(txids...) }

// Update applies removals then additions as one batch.
func (e *Engine) Update(add []Tx, remove []bchain.Hash) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, id := range remove {
		if e.g.remove(id) {
			n++
		}
	}
	for i := range add {
		if e.g.add(&add[i]) {
			n++
		}
	}
	e.settle(n)
	return n
}

func (e *Engine) settle(changes int) {
	e.g.settle()
	if changes > 0 {
		e.dirty.Store(true)
	}
}

// Len is the number of txs held.
func (e *Engine) Len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.g.index)
}

// Latest returns the last published snapshot, without refreshing.
func (e *Engine) Latest() *Snapshot { return e.snap.Load() }

// Snapshot returns a snapshot of the current txs, rebuilding the
// projection first if anything changed since the last one.
func (e *Engine) Snapshot() *Snapshot {
	if e.dirty.Load() {
		return e.Refresh()
	}
	return e.snap.Load()
}

// Refresh rebuilds the projection if anything changed and publishes it.
func (e *Engine) Refresh() *Snapshot {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.dirty.Load() {
		return e.snap.Load()
	}
	s := e.build()
	e.snap.Store(s)
	e.dirty.Store(false)
	return s
}

// build walks the template and computes each block's figures.
func (e *Engine) build() *Snapshot {
	g, b, p := e.g, &e.b, e.p
	b.build()
	s := &Snapshot{Params: p, Count: len(g.index), histogram: g.hist}
	nb := b.blockCount()
	s.Blocks = make([]ProjectedBlock, nb)
	s.summaries = make([]MempoolBlock, nb)
	txids := make([]bchain.Hash, len(b.seq))
	rates := make([]float64, len(b.seq))
	s.txids, s.rates, s.pkgs = txids, rates, slices.Clone(b.pkgs)
	s.weights = make([]uint32, len(b.seq))
	s.fees = make([]uint64, len(b.seq))
	// Only a block's first 1.2 blocks' worth of vbytes enters its stats.
	sizeLimit := float64(p.BlockWeight/4) * 1.2
	at := 0
	for i := range nb {
		slots := b.block(i)
		pb := &s.Blocks[i]
		pb.Txids = txids[at : at+len(slots) : at+len(slots)]
		pb.Rates = rates[at : at+len(slots) : at+len(slots)]
		at += len(slots)
		// A last block heavier than a block gets the banded statistics.
		var online *onlineFeeStats
		if i == nb-1 && nb >= p.Blocks && b.weights[i] > uint64(p.BlockWeight) {
			online = newOnlineFeeStats(float64(b.weights[i]), 0.5, []float64{10, 20, 30, 40, 50, 60, 70, 80, 90})
		}
		st := e.stats[:0]
		var size, weight, vsize uint64
		for j, slot := range slots {
			n := &g.nodes[slot]
			rate := b.w[slot].rate
			pb.Txids[j], pb.Rates[j] = n.txid, rate
			s.weights[at-len(slots)+j], s.fees[at-len(slots)+j] = n.weight, n.fee
			t := statTx{Weight: n.weight, Fee: n.fee, Rate: rate}
			if online != nil {
				online.add(t)
			}
			size += uint64(n.size)
			weight += uint64(n.weight)
			vsize += uint64((n.weight + 3) / 4)
			pb.TotalFees += n.fee
			if float64(vsize) <= sizeLimit {
				st = append(st, t)
			}
		}
		pb.BlockSize, pb.BlockVSize, pb.NTx = size, float64(weight)/4, len(slots)
		if online != nil {
			pb.MedianFee, pb.FeeRange = online.raw()
		} else {
			pb.MedianFee, pb.FeeRange = effectiveFeeStats(st, p.BlockWeight)
		}
		e.stats = st[:0]
		s.summaries[i] = pb.MempoolBlock
	}
	for _, slot := range b.overflow {
		if !b.w[slot].used {
			n := &g.nodes[slot]
			vsize := max((n.weight+3)/4, 1)
			s.Overflow = append(s.Overflow, n.txid)
			s.spare = append(s.spare, TxRate{Rate: float64(n.fee) / float64(vsize), VSize: vsize})
		}
	}
	return s
}
