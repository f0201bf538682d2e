package projected

import "testing"

func TestEffectiveFeeStatsMedianWindow(t *testing.T) {
	// Block order: 20 sat/vB (200 WU), 10 (400 WU), 5 (200 WU).
	txs := []statTx{{Weight: 200, Fee: 1000}, {Weight: 400, Fee: 1000}, {Weight: 200, Fee: 250}}
	// Full 800 WU block: window [399, 401] lies in the 10 sat/vB tx.
	med, rng := effectiveFeeStats(txs, 800)
	if med != 10 {
		t.Fatalf("median %v", med)
	}
	// sorted 5,10,20: p1=p10=p25=5, p50..p99=10; no tx in the first or
	// last 2%: the max stays at p99 = 10, not 20.
	eqFloats(t, "feeRange", rng, []float64{5, 5, 5, 10, 10, 10, 10})

	// 1,600 WU block: 800 WU unused lie below the lowest rate, the window
	// [798, 802] holds 2 WU of unused space and 2 WU of the 5 sat/vB tx.
	if med, _ := effectiveFeeStats(txs, 1600); med != 5 {
		t.Fatalf("median with unused space %v", med)
	}
	// 4,000 WU block: the window is all unused space.
	if med, _ := effectiveFeeStats(txs, 4000); med != 0 {
		t.Fatalf("median of a mostly empty block %v", med)
	}
}

func TestEffectiveFeeStatsRangeHeuristics(t *testing.T) {
	// 201 txs of 100 vB in block order at 300, 299, ..., 100 sat/vB.
	var txs []statTx
	for i := range 201 {
		txs = append(txs, statTx{Weight: 400, Fee: uint64(100 * (300 - i))})
	}
	med, rng := effectiveFeeStats(txs, 201*400)
	// Window [40,099, 40,301] is inside sorted tx 100: 200 sat/vB.
	if med != 200 {
		t.Fatalf("median %v", med)
	}
	// p1 = sorted[2] = 102, but the last 2% (4 txs) reach 100: min 100.
	// p99 = sorted[198] = 298, but the first 4 txs reach 300: max 300.
	eqFloats(t, "feeRange", rng, []float64{100, 120, 150, 200, 250, 280, 300})
}

func TestEffectiveFeeStatsEdgeCases(t *testing.T) {
	med, rng := effectiveFeeStats([]statTx{{Weight: 400, Fee: 1000}}, 4_000_000)
	if med != 0 || len(rng) != 7 || rng[6] != 0 {
		t.Fatalf("single tx: %v %v", med, rng)
	}
	// A zero-fee first tx is taken for a coinbase and left out.
	_, rng = effectiveFeeStats([]statTx{{Weight: 400}, {Weight: 400, Fee: 800}}, 800)
	eqFloats(t, "feeRange", rng, []float64{8, 8, 8, 8, 8, 8, 8})
	// Rate 0 falls back to fee/(weight/4); a given rate wins over the fee.
	// With 2 txs every percentile is the lower one, 8 shows nowhere.
	_, rng = effectiveFeeStats([]statTx{{Weight: 400, Fee: 300, Rate: 7}, {Weight: 400, Fee: 800}}, 800)
	eqFloats(t, "feeRange", rng, []float64{7, 7, 7, 7, 7, 7, 7})
	// Rates [8, 7], block order: p99 is 7, the first 2% is empty.
	_, rng = effectiveFeeStats([]statTx{{Weight: 400, Fee: 800}, {Weight: 400, Fee: 700}}, 800)
	eqFloats(t, "feeRange", rng, []float64{7, 7, 7, 7, 7, 7, 7})
}

func TestOnlineFeeStats(t *testing.T) {
	// Bands of 200 WU at 10%, 50%, 90% of 1,000 WU.
	o := newOnlineFeeStats(1000, 20, []float64{50})
	o.add(statTx{Weight: 300, Rate: 30})
	o.add(statTx{Weight: 300, Rate: 20})
	o.add(statTx{Weight: 400, Rate: 10})
	med, rng := o.raw()
	if med != 20 {
		t.Fatalf("median %v", med)
	}
	eqFloats(t, "bands", rng, []float64{10, 20, 30})

	// Txs end inside the 50% band: it is closed on read, the 90% band is
	// padded with a zero in front.
	o = newOnlineFeeStats(1000, 20, []float64{50})
	o.add(statTx{Weight: 300, Rate: 30})
	o.add(statTx{Weight: 200, Rate: 20})
	med, rng = o.raw()
	if med != 20 {
		t.Fatalf("median %v", med)
	}
	eqFloats(t, "bands", rng, []float64{0, 20, 30})
}
