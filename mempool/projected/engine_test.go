package projected

import (
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// model tracks what the engine should hold.
type model struct {
	all     []Tx // every tx ever made, by number
	present map[bchain.Hash]int
}

func newModel() *model { return &model{present: map[bchain.Hash]int{}} }

// randomTx makes tx number len(m.all) with up to three parents among
// earlier numbers (so the graph stays acyclic), present or not.
func (m *model) randomTx(rng *rand.Rand, bigOne bool) Tx {
	i := len(m.all)
	var h bchain.Hash
	for j := range h {
		h[j] = byte(rng.IntN(256))
	}
	vsize := uint32(60 + rng.IntN(1500))
	if bigOne {
		vsize = 20_000 + uint32(rng.IntN(20_000))
	}
	t := Tx{Txid: h, Weight: 4*vsize - uint32(rng.IntN(3)), Fee: uint64(rng.IntN(int(vsize) * 80))}
	if rng.IntN(8) == 0 {
		t.Sigops = uint32(rng.IntN(200))
	}
	if i > 0 && rng.IntN(3) == 0 {
		for range 1 + rng.IntN(3) {
			t.Parents = append(t.Parents, m.all[max(0, i-1-rng.IntN(min(i, 20)))].Txid)
		}
	}
	m.all = append(m.all, t)
	return t
}

// fresh builds an engine from scratch with the present txs, shuffled.
func (m *model) fresh(p Params, rng *rand.Rand) *Snapshot {
	var txs []Tx
	for _, i := range m.present {
		txs = append(txs, m.all[i])
	}
	rng.Shuffle(len(txs), func(a, b int) { txs[a], txs[b] = txs[b], txs[a] })
	e := NewEngine(p)
	e.Add(txs...)
	return e.Snapshot()
}

func sameProjection(t *testing.T, got, want *Snapshot) {
	t.Helper()
	if !reflect.DeepEqual(got.Blocks, want.Blocks) || !reflect.DeepEqual(got.Overflow, want.Overflow) ||
		got.Count != want.Count || !reflect.DeepEqual(got.FeeHistogram(), want.FeeHistogram()) {
		t.Fatalf("incremental and full projections differ:\n%d %v %v\n%d %v %v", got.Count, layoutSummary(got), got.Overflow,
			want.Count, layoutSummary(want), want.Overflow)
	}
}

func layoutSummary(s *Snapshot) []MempoolBlock { return s.MempoolBlocks() }

// checkInvariants: every tx in exactly one block (or the overflow), parents
// before children, blocks within capacity except the last.
func checkInvariants(t *testing.T, s *Snapshot, m *model, p Params) {
	t.Helper()
	pos := map[bchain.Hash]int{}
	n := 0
	for bi, b := range s.Blocks {
		if b.NTx != len(b.Txids) || len(b.Rates) != len(b.Txids) {
			t.Fatalf("block %d: nTx %d, %d txids", bi, b.NTx, len(b.Txids))
		}
		weight, sigops := uint64(p.ReservedWeight), uint64(p.ReservedSigops)
		for _, h := range b.Txids {
			if _, dup := pos[h]; dup {
				t.Fatalf("tx %v twice", h)
			}
			i, ok := m.present[h]
			if !ok {
				t.Fatalf("tx %v not in the mempool", h)
			}
			pos[h] = n
			n++
			tx := m.all[i]
			weight += uint64(max(tx.Weight, 20*tx.Sigops))
			sigops += uint64(tx.Sigops)
		}
		if bi < p.Blocks-1 && (weight >= uint64(p.BlockWeight-fitMargin) || sigops > uint64(p.MaxSigops)) {
			t.Fatalf("block %d over capacity: %d WU, %d sigops", bi, weight, sigops)
		}
	}
	for _, h := range s.Overflow {
		if _, dup := pos[h]; dup {
			t.Fatalf("overflow tx %v also in a block", h)
		}
		pos[h] = 1 << 30
	}
	if len(pos) != len(m.present) || s.Count != len(m.present) {
		t.Fatalf("%d txs projected, %d in the mempool", len(pos), len(m.present))
	}
	for h, at := range pos {
		for _, parent := range m.all[m.present[h]].Parents {
			if pat, ok := pos[parent]; ok && pat >= at && at < 1<<30 {
				t.Fatalf("parent after child")
			}
		}
	}
}

// step applies one random operation.
func (m *model) step(e *Engine, rng *rand.Rand, op int) {
	switch op {
	case 0, 1, 2, 3, 4, 5, 6: // new txs
		var txs []Tx
		for range 1 + rng.IntN(40) {
			tx := m.randomTx(rng, rng.IntN(200) == 0)
			txs = append(txs, tx)
			m.present[tx.Txid] = len(m.all) - 1
		}
		e.Add(txs...)
	case 7: // evictions, replacements or confirmations
		var ids []bchain.Hash
		for range 1 + rng.IntN(10) {
			if len(m.all) > 0 {
				ids = append(ids, m.all[rng.IntN(len(m.all))].Txid)
			}
		}
		for _, h := range ids {
			delete(m.present, h)
		}
		e.Remove(ids...)
	case 8: // a block: the first projected block is mined
		s := e.Snapshot()
		if len(s.Blocks) > 0 {
			for _, h := range s.Blocks[0].Txids {
				delete(m.present, h)
			}
			e.ConnectBlock(s.Blocks[0].Txids)
		}
	case 9: // a removed tx comes back (reorg)
		if len(m.all) > 0 {
			i := rng.IntN(len(m.all))
			if _, ok := m.present[m.all[i].Txid]; !ok {
				m.present[m.all[i].Txid] = i
				e.Add(m.all[i])
			}
		}
	}
}

func testParams() Params {
	p := Bitcoin()
	p.BlockWeight = 200_000
	p.MaxSigops = 2_000
	return p
}

func TestIncrementalMatchesFullRebuild(t *testing.T) {
	p := testParams()
	rng := rand.New(rand.NewPCG(1, 2))
	e, m := NewEngine(p), newModel()
	for round := range 400 {
		m.step(e, rng, rng.IntN(10))
		if round%7 == 0 {
			e.Snapshot() // refresh between some batches, not all
		}
		if round%50 == 49 {
			s := e.Snapshot()
			checkInvariants(t, s, m, p)
			sameProjection(t, s, m.fresh(p, rng))
		}
	}
	s := e.Snapshot()
	if len(s.Blocks) < p.Blocks {
		t.Fatalf("test mempool too small: %d blocks", len(s.Blocks))
	}
	t.Logf("%d txs, %d in the last block, %d unmineable, %d waiting links", s.Count, s.Blocks[len(s.Blocks)-1].NTx, len(s.Overflow), len(e.g.waiting))
}

func FuzzEngine(f *testing.F) {
	f.Add([]byte{0, 1, 2, 7, 8, 9, 0, 0, 7, 9, 8})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 8, 8, 7, 7, 9, 9, 9, 0, 8})
	f.Add([]byte{7, 200, 13, 99, 42, 3, 1, 0, 250, 5, 5, 4, 128})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 200 {
			ops = ops[:200]
		}
		p := testParams()
		p.BlockWeight = 40_000
		p.Blocks = 4
		seed := uint64(0)
		for _, b := range ops {
			seed = seed*31 + uint64(b)
		}
		rng := rand.New(rand.NewPCG(seed, 7))
		e, m := NewEngine(p), newModel()
		for i, op := range ops {
			m.step(e, rng, int(op)%10)
			if op&0x80 != 0 || i == len(ops)-1 {
				checkInvariants(t, e.Snapshot(), m, p)
			}
		}
		sameProjection(t, e.Snapshot(), m.fresh(p, rng))
	})
}

func TestConcurrentReaders(t *testing.T) {
	p := testParams()
	e, m := NewEngine(p), newModel()
	rng := rand.New(rand.NewPCG(3, 4))
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				s := e.Snapshot()
				_ = s.RecommendedFees(1)
				_ = s.FeeHistogram()
				for _, b := range e.Latest().Blocks {
					_ = len(b.Txids)
				}
			}
		}()
	}
	for range 200 {
		m.step(e, rng, rng.IntN(10))
	}
	close(stop)
	wg.Wait()
	checkInvariants(t, e.Snapshot(), m, p)
}
