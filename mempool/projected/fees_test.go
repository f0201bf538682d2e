package projected

import (
	"encoding/json"
	"testing"
)

func blk(vsize, median float64) MempoolBlock {
	return MempoolBlock{BlockVSize: vsize, MedianFee: median}
}

func TestRecommend(t *testing.T) {
	btc := Bitcoin()
	full := 998_000.0
	cases := []struct {
		name   string
		blocks []MempoolBlock
		minFee float64
		want   RecommendedFees
	}{
		{"empty mempool", nil, 2.3, RecommendedFees{3, 3, 3, 3, 3}},
		{"floor of 1", nil, 0.01, RecommendedFees{1, 1, 1, 1, 1}},
		{"half empty block", []MempoolBlock{blk(500_000, 30)}, 1, RecommendedFees{1, 1, 1, 1, 1}},
		// A lone block of 700,000 vB: 10 × (700,000 - 500,000)/500,000 = 4.
		{"lone partial block", []MempoolBlock{blk(700_000, 10)}, 1, RecommendedFees{4, 1, 1, 1, 1}},
		// Partial but followed by another: no scaling, rounded up.
		{"partial with next", []MempoolBlock{blk(700_000, 10.2), blk(100, 1)}, 1, RecommendedFees{11, 1, 1, 1, 1}},
		{"median under minimum", []MempoolBlock{blk(full, 3), blk(full, 2)}, 5, RecommendedFees{5, 5, 5, 5, 5}},
		// first 20.3 -> 21; second (10.2+21)/2 = 15.6 -> 16;
		// third (5.1+16)/2 = 10.55 -> 11; economy min(2×1, 11) = 2.
		{"full blocks", []MempoolBlock{blk(full, 20.3), blk(full, 10.2), blk(full, 5.1), blk(full, 3)}, 1,
			RecommendedFees{21, 16, 11, 2, 1}},
		// Lower priority above higher: raised to keep the order.
		{"monotone", []MempoolBlock{blk(full, 5), blk(full, 30), blk(full, 40), blk(full, 1)}, 1,
			RecommendedFees{29, 29, 29, 2, 1}},
		// Economy is capped at twice the minimum, the third block's rate.
		{"economy", []MempoolBlock{blk(full, 9), blk(full, 8), blk(full, 7), blk(full, 6)}, 2,
			RecommendedFees{9, 9, 8, 4, 2}},
	}
	for _, c := range cases {
		if got := Recommend(c.blocks, c.minFee, btc); got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestRecommendScalesWithCapacity(t *testing.T) {
	// Dogecoin blocks are as big as Bitcoin's in weight; BCH's are 32×: a
	// 700,000 vB block is nearly empty there.
	if got := Recommend([]MempoolBlock{blk(700_000, 10)}, 1, BitcoinCash()); got.FastestFee != 1 {
		t.Fatalf("bch %+v", got)
	}
	if got := Recommend([]MempoolBlock{blk(22_400_000, 10)}, 1, BitcoinCash()); got.FastestFee != 4 {
		t.Fatalf("bch lone block %+v", got)
	}
}

func TestRecommendPrecise(t *testing.T) {
	blocks := []MempoolBlock{blk(998_000, 20.5), blk(998_000, 10.25), blk(998_000, 5.125), blk(998_000, 1)}
	// fastest 20.5 + 0.5; half hour (10.25+20.5)/2 + 0.25; hour
	// (5.125+15.375)/2; economy min(2 × 1, 10.25).
	got := RecommendPrecise(blocks, 1, Bitcoin())
	want := RecommendedFees{21, 15.625, 10.25, 2, 1}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	// Sub-sat minimum: floors of 1 and 0.5 for the two fastest.
	got = RecommendPrecise(nil, 0.1, Bitcoin())
	want = RecommendedFees{1, 0.5, 0.1, 0.1, 0.1}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	b, _ := json.Marshal(got)
	if string(b) != `{"fastestFee":1,"halfHourFee":0.5,"hourFee":0.1,"economyFee":0.1,"minimumFee":0.1}` {
		t.Fatalf("json %s", b)
	}
}

func TestJSRound(t *testing.T) {
	for v, want := range map[float64]float64{2.5: 3, -2.5: -2, 0.49999999999999994: 0, 1.4: 1} {
		if got := jsRound(v); got != want {
			t.Errorf("jsRound(%v) = %v, want %v", v, got, want)
		}
	}
}

func TestMempoolBlockJSON(t *testing.T) {
	b, _ := json.Marshal(MempoolBlock{BlockSize: 10, BlockVSize: 2.5, NTx: 1, TotalFees: 7, MedianFee: 1.5, FeeRange: []float64{1, 2}})
	if string(b) != `{"blockSize":10,"blockVSize":2.5,"nTx":1,"totalFees":7,"medianFee":1.5,"feeRange":[1,2]}` {
		t.Fatalf("json %s", b)
	}
}
