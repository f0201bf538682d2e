package projected

import "testing"

func TestCPFPLiftsParent(t *testing.T) {
	e := NewEngine(Bitcoin())
	e.Add(
		tx(3, 100, 9),     // single at 9
		tx(2, 100, 19, 1), // child: own 19, package (100+1900)/200 = 10
		tx(1, 100, 1),     // parent at 1, given after its child
		tx(4, 100, 11),    // single at 11
		tx(5, 100, 2, 6),  // child at 2 of a parent at 50: not lifted
		tx(6, 100, 50),
	)
	s := e.Snapshot()
	eqLayout(t, s, [][]int{{6, 4, 1, 2, 3, 5}})
	for i, want := range map[int]float64{6: 50, 4: 11, 1: 10, 2: 10, 3: 9, 5: 2} {
		if got := rateOf(t, s, i); !near(got, want) {
			t.Errorf("rate of %d = %v, want %v", i, got, want)
		}
	}
	b := s.Blocks[0]
	if b.NTx != 6 || b.TotalFees != 900+1900+100+1100+200+5000 || b.BlockVSize != 600 || b.BlockSize != 600 {
		t.Fatalf("stats %+v", b.MempoolBlock)
	}
	// An almost empty block: the median window lies in the unused space.
	if b.MedianFee != 0 {
		t.Fatalf("median %v", b.MedianFee)
	}
	// sorted rates 2,9,10,10,11,50; block order 50,11,10,10,9,2.
	eqFloats(t, "feeRange", b.FeeRange, []float64{2, 2, 9, 10, 10, 11, 11})
}

func TestChainEffectiveRateIsCapped(t *testing.T) {
	// A (1) <- B (30) <- C (5): B lifts A to (100+3000)/200 = 15.5; C's
	// score stays its own 5 (< 15.5): it goes in alone, its rate capped by
	// its ancestors' 15.5 but lower anyway.
	// D (1) <- E (100) <- F (100): F's score (100+10000+10000)/300 = 67 is
	// the best: the whole chain goes in at 67, parents first.
	e := NewEngine(Bitcoin())
	e.Add(tx(1, 100, 1), tx(2, 100, 30, 1), tx(3, 100, 5, 2),
		tx(4, 100, 1), tx(5, 100, 100, 4), tx(6, 100, 100, 5))
	s := e.Snapshot()
	eqLayout(t, s, [][]int{{4, 5, 6, 1, 2, 3}})
	for i, want := range map[int]float64{4: 67, 5: 67, 6: 67, 1: 15.5, 2: 15.5, 3: 5} {
		if got := rateOf(t, s, i); !near(got, want) {
			t.Errorf("rate of %d = %v, want %v", i, got, want)
		}
	}
}

func TestPackageThatDoesNotFit(t *testing.T) {
	// Block room: 4,000 + 4 × vsize sums below 16,000.
	e := NewEngine(small(3))
	e.Add(tx(1, 2500, 10), tx(2, 1000, 9), tx(3, 400, 8))
	s := e.Snapshot()
	// 2 would bring the block to 18,000: held aside; 3 fits after it.
	eqLayout(t, s, [][]int{{1, 3}, {2}})

	// A package: parent 11 (1,800 vB at 1) + child 12 (900 vB at 26.5)
	// has rate 9.5 and 10,800 WU: it does not fit beside 1, nor does 2;
	// 3 does. The package opens block 2, 2 goes to the last block.
	e.Add(tx(11, 1800, 1), tx(12, 900, 26.5, 11))
	eqLayout(t, e.Snapshot(), [][]int{{1, 3}, {11, 12}, {2}})
	if r := rateOf(t, e.Snapshot(), 11); r != 9.5 {
		t.Fatalf("package rate %v", r)
	}
}

func TestOverflowBlockAndBlockCount(t *testing.T) {
	e := NewEngine(small(3))
	for i := 1; i <= 10; i++ {
		e.Add(tx(i, 1000, float64(11-i)))
	}
	s := e.Snapshot()
	eqLayout(t, s, [][]int{{1, 2}, {3, 4}, {5, 6, 7, 8, 9, 10}})
	last := s.Blocks[2]
	if last.NTx != 6 || last.BlockVSize != 6000 {
		t.Fatalf("last block %+v", last.MempoolBlock)
	}
	// The last block weighs 4,000 + 24,000 > 20,000: banded stats, 11
	// bands of 140 WU over 28,000 WU, at 0.25%, 10%, ..., 90%, 99.75%.
	// Band at 0.25% (0..140 WU) is tx 5 (rate 6); 10% (2,730..2,870) tx 5;
	// 20% (5,530..5,670) tx 6 (4,000..8,000): 5; 30%: 8,330.. tx 7: 4;
	// 40%: 11,130.. tx 7: 4; 50%: 13,930.. tx 8: 3; 60%: 16,730.. tx 9: 2;
	// 70%: 19,530.. tx 9: 2; 80%: 22,330.. tx 10: 1; 90%: 25,130 is past
	// the txs' 24,000 WU, and so is 99.75%: zeros, placed first.
	eqFloats(t, "stack feeRange", last.FeeRange, []float64{0, 0, 1, 2, 2, 3, 4, 4, 5, 6, 6})
	if last.MedianFee != 3 {
		t.Fatalf("stack median %v", last.MedianFee)
	}
}

func TestPackageTriesGiveUp(t *testing.T) {
	build := func(bigs int) [][]int {
		e := NewEngine(small(3))
		e.Add(tx(1, 1001, 1000), tx(2, 1000, 999))
		for i := range bigs {
			e.Add(tx(10+i, 1000, float64(900-i/10)))
		}
		e.Add(tx(5000, 100, 1)) // small: would fit in block 1
		return layout(e.Snapshot())
	}
	// Block 1 holds 12,004 WU > 12,000 after 1 and 2; with 1,000 misfits
	// the small tx is reached and fits; with 1,001 the block is closed.
	if b := build(1000)[0]; len(b) != 3 || b[2] != 5000 {
		t.Fatalf("1,000 misfits: block 1 = %v", b)
	}
	if b := build(1001)[0]; len(b) != 2 {
		t.Fatalf("1,001 misfits: block 1 = %v", b)
	}
}

func TestSigops(t *testing.T) {
	p := small(3)
	p.BlockWeight = 400_000
	p.MaxSigops = 1_000
	e := NewEngine(p)
	// 300 sigops each: 400 reserved + 300 + 300 = 1,000 fits, a third does
	// not. Each weighs max(400, 20 × 300) = 6,000 WU: rate = fee / 1,500.
	e.Add(Tx{Txid: id(1), Fee: 30_000, Weight: 400, Sigops: 300},
		Tx{Txid: id(2), Fee: 29_000, Weight: 400, Sigops: 300},
		Tx{Txid: id(3), Fee: 28_000, Weight: 400, Sigops: 300})
	s := e.Snapshot()
	eqLayout(t, s, [][]int{{1, 2}, {3}})
	if r := rateOf(t, s, 1); !near(r, 20) {
		t.Fatalf("sigop-adjusted rate %v", r)
	}
	if s.Blocks[0].BlockVSize != 200 {
		t.Fatalf("blockVSize counts the real weight: %v", s.Blocks[0].BlockVSize)
	}
}

func TestRemoveParentAndReAdd(t *testing.T) {
	e := NewEngine(Bitcoin())
	e.Add(tx(1, 100, 1), tx(2, 100, 19, 1), tx(3, 100, 12))
	eqLayout(t, e.Snapshot(), [][]int{{3, 1, 2}})
	e.Remove(id(1)) // confirmed: 2 stands alone at 19
	s := e.Snapshot()
	eqLayout(t, s, [][]int{{2, 3}})
	if r := rateOf(t, s, 2); r != 19 {
		t.Fatalf("rate %v", r)
	}
	e.Add(tx(1, 100, 1)) // back (reorg): linked to its child again
	eqLayout(t, e.Snapshot(), [][]int{{3, 1, 2}})
}

func TestConnectBlock(t *testing.T) {
	e := NewEngine(small(3))
	all := []Tx{tx(1, 1000, 10), tx(2, 1000, 9), tx(3, 1000, 1), tx(4, 1000, 20, 3), tx(5, 1000, 5), tx(6, 1000, 4)}
	e.Add(all...)
	s := e.Snapshot()
	eqLayout(t, s, [][]int{{3, 4}, {1, 2}, {5, 6}})
	if n := e.ConnectBlock(s.Blocks[0].Txids); n != 2 {
		t.Fatalf("removed %d", n)
	}
	eqLayout(t, e.Snapshot(), [][]int{{1, 2}, {5, 6}})

	fresh := NewEngine(small(3))
	fresh.Add(all[0], all[1], all[4], all[5])
	eqLayout(t, fresh.Snapshot(), layout(e.Snapshot()))
}

func TestUnmineablePackage(t *testing.T) {
	e := NewEngine(small(3))
	e.Add(tx(1, 1000, 5), tx(2, 4000, 50), tx(3, 100, 1, 2))
	s := e.Snapshot()
	// 2 fits no block: building stops after block 1, as in mempool.space.
	eqLayout(t, s, [][]int{{1}})
	if len(s.Overflow) != 2 {
		t.Fatalf("overflow %v", s.Overflow)
	}
}

func TestDuplicateAndUnknown(t *testing.T) {
	e := NewEngine(Bitcoin())
	if n := e.Add(tx(1, 100, 1), tx(1, 100, 5)); n != 1 {
		t.Fatalf("added %d", n)
	}
	if n := e.Remove(id(9), id(1), id(1)); n != 1 {
		t.Fatalf("removed %d", n)
	}
	if s := e.Snapshot(); len(s.Blocks) != 0 || s.Count != 0 {
		t.Fatalf("snapshot %+v", s)
	}
	if got := e.Snapshot().MempoolBlocks(); got == nil || len(got) != 0 {
		t.Fatalf("empty mempool-blocks answer %v", got)
	}
}
