package projected

import (
	"github.com/openexplorer/blockbook/bchain"
)

// Relative is a tx related to another by CPFP, as mempool.space lists
// them: txid, weight and fee.
type Relative struct {
	Txid   bchain.Hash
	Weight uint32
	Fee    uint64
}

// Cpfp is mempool.space's cpfp/:txid for a mempool tx: its in-mempool
// ancestors, the txs that go into a block in its package without being
// its ancestors (those whose fees lift it), and the rate it is mined at.
type Cpfp struct {
	Ancestors   []Relative
	Descendants []Relative
	// EffectiveFeePerVsize is the rate of the package the tx went in with
	// in the latest projection (its own rate while not projected yet).
	EffectiveFeePerVsize float64
	Fee                  uint64
	AdjustedVsize        uint32
	Sigops               uint32
}

// Cpfp describes a tx the engine holds; false when it holds none.
func (e *Engine) Cpfp(txid bchain.Hash) (Cpfp, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	g := e.g
	slot, ok := g.index[txid]
	if !ok {
		return Cpfp{}, false
	}
	n := &g.nodes[slot]
	out := Cpfp{Fee: n.fee, AdjustedVsize: n.adjV, Sigops: n.sigops, EffectiveFeePerVsize: feeRate(n.fee, float64(n.weight)/4)}
	isAncestor := make(map[bchain.Hash]bool, len(n.ancestors))
	for _, a := range n.ancestors {
		an := &g.nodes[a]
		out.Ancestors = append(out.Ancestors, Relative{an.txid, an.weight, an.fee})
		isAncestor[an.txid] = true
	}
	s := e.snap.Load()
	i := s.position(txid)
	if i < 0 {
		return out, true
	}
	out.EffectiveFeePerVsize = s.rates[i]
	for j := int(s.pkgs[i]); j < len(s.txids) && s.pkgs[j] == s.pkgs[i]; j++ {
		id := s.txids[j]
		if id == txid || isAncestor[id] {
			continue
		}
		if ds, ok := g.index[id]; ok {
			d := &g.nodes[ds]
			out.Descendants = append(out.Descendants, Relative{id, d.weight, d.fee})
		}
	}
	return out, true
}

// position is txid's index in the projection's block order, or -1.
func (s *Snapshot) position(txid bchain.Hash) int {
	for i := range s.txids {
		if s.txids[i] == txid {
			return i
		}
	}
	return -1
}

// Position is where a tx sits in the projection, as mempool.space's
// txPosition gives it: its block's index, and the vbytes of the block
// before it plus half its own (the middle of the tx).
type Position struct {
	Block int     `json:"block"`
	VSize float64 `json:"vsize"`
}

// Positions finds the given txs in the projection in one pass; txs in no
// block (not in the mempool, or unmineable) are left out.
func (s *Snapshot) Positions(want map[bchain.Hash]struct{}) map[bchain.Hash]Position {
	out := map[bchain.Hash]Position{}
	if len(want) == 0 {
		return out
	}
	at := 0
	for b := range s.Blocks {
		var vsize float64
		for range s.Blocks[b].Txids {
			v := float64(s.weights[at]) / 4
			if _, ok := want[s.txids[at]]; ok {
				out[s.txids[at]] = Position{Block: b, VSize: vsize + v/2}
				if len(out) == len(want) {
					return out
				}
			}
			vsize += v
			at++
		}
	}
	return out
}

// BlockTx is a tx of a projected block: its fee, weight and the rate of
// the package it went in with.
type BlockTx struct {
	Txid   bchain.Hash
	Fee    uint64
	Weight uint32
	Rate   float64
}

// BlockTxs lists projected block i's txs in block order (nil past the
// last block).
func (s *Snapshot) BlockTxs(i int) []BlockTx {
	if i < 0 || i >= len(s.Blocks) {
		return nil
	}
	at := 0
	for b := range i {
		at += len(s.Blocks[b].Txids)
	}
	out := make([]BlockTx, len(s.Blocks[i].Txids))
	for j := range out {
		out[j] = BlockTx{Txid: s.txids[at+j], Fee: s.fees[at+j], Weight: s.weights[at+j], Rate: s.rates[at+j]}
	}
	return out
}
