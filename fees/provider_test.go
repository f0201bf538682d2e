package fees

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/mempool/projected"
)

var _ bchain.FeeEstimator = (*Provider)(nil)

// mempoolBlocksAnswer is a mempool.space /api/v1/fees/mempool-blocks
// answer in its wire format (three blocks; the third has no fees).
const mempoolBlocksAnswer = `[
 {"blockSize":1604493,"blockVSize":997944.75,"nTx":3350,"totalFees":8333539,"medianFee":3.0073509137538332,
  "feeRange":[2.0444444444444443,2.2135922330097086,2.608695652173913,3.016042780748663,4.0048289738430585,9.27631139325092,201.06951871657753]},
 {"blockSize":1900000,"blockVSize":999000,"nTx":4100,"totalFees":2100000,"medianFee":2.0011,
  "feeRange":[1.5,1.75,1.9,2.0011,2.2,2.456,3]},
 {"blockSize":500000,"blockVSize":250000,"nTx":900,"totalFees":0,"medianFee":0,"feeRange":[0,0,0,0,0,0,0]}
]`

func TestParseParams(t *testing.T) {
	// Blockbook's bitcoin.json and testnet4 params, as they stand.
	p, err := ParseParams(MempoolSpaceBlock, `{"url": "https://example.org/api/v1/fees/mempool-blocks", "periodSeconds": 20, "feeRangeIndex": 5, "fallbackFeePerKB": 1000}`)
	if err != nil || p.Source != "local" || *p.FeeRangeIndex != 5 || p.FallbackFeePerKB != 1000 || p.PeriodSeconds != 20 {
		t.Fatalf("bitcoin.json params: %+v, %v", p, err)
	}
	if p, err := ParseParams(MempoolSpace, `{"url": "https://example.org/testnet4/api/v1/fees/recommended", "periodSeconds": 60}`); err != nil || p.FeeRangeIndex != nil {
		t.Fatalf("testnet4 params: %+v, %v", p, err)
	}
	if _, err := ParseParams(MempoolSpaceBlock, `{"periodSeconds": 20}`); err != nil {
		t.Errorf("a local source needs no url: %v", err)
	}
	for _, c := range []struct{ kind, raw, want string }{
		{"whatthefee", `{"periodSeconds": 20}`, "not supported"},
		{MempoolSpaceBlock, `{"url": "x"}`, "missing periodSeconds"},
		{MempoolSpaceBlock, `{"periodSeconds": 20, "feeRangeIndex": 7}`, "between 0 and 6"},
		{MempoolSpaceBlock, `{"periodSeconds": 20, "feeRangeIndex": -1}`, "between 0 and 6"},
		{MempoolSpace, `{"periodSeconds": 20, "source": "remote"}`, "missing url"},
		{MempoolSpace, `{"periodSeconds": 20, "source": "cloud"}`, "local or remote"},
		{MempoolSpace, `{"periodSeconds": "20"}`, "alternative_estimate_fee_params"},
	} {
		if _, err := ParseParams(c.kind, c.raw); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v, want an error with %q", c.kind, c.raw, err, c.want)
		}
	}
}

// fixedSource answers fixed data.
type fixedSource struct {
	blocks []projected.MempoolBlock
	rec    projected.RecommendedFees
	err    error
}

func (s *fixedSource) MempoolBlocks(context.Context) ([]projected.MempoolBlock, error) {
	return s.blocks, s.err
}

func (s *fixedSource) Recommended(context.Context) (projected.RecommendedFees, error) {
	return s.rec, s.err
}

func newTestProvider(t *testing.T, kind, raw string, src Source) (*Provider, *time.Time) {
	t.Helper()
	p, err := ParseParams(kind, raw)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	pr := NewProvider(kind, p, src, nil)
	pr.now = func() time.Time { return now }
	return pr, &now
}

func expectFees(t *testing.T, p *Provider, want map[int]int64) {
	t.Helper()
	for blocks, w := range want {
		got, err := p.EstimateFee(context.Background(), blocks, true)
		if err != nil || got != w {
			t.Errorf("%d blocks: %d, %v; want %d", blocks, got, err, w)
		}
	}
}

// The block levels as Blockbook maps mempool.space's answer: feeRange[5]
// of block i for target i+1 to 3 significant digits, a block without
// fees skipped, the fallback past the last level, nothing after ten
// minutes without a refresh.
func TestRemoteBlockLevels(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/fees/mempool-blocks" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(mempoolBlocksAnswer))
	}))
	defer srv.Close()
	url := srv.URL + "/api/v1/fees/mempool-blocks"
	p, now := newTestProvider(t, MempoolSpaceBlock, `{"source": "remote", "url": "`+url+`", "periodSeconds": 20, "feeRangeIndex": 5, "fallbackFeePerKB": 1000}`, RemoteSource{URL: url})
	if _, err := p.EstimateFee(context.Background(), 1, true); !errors.Is(err, ErrNoLevels) {
		t.Fatalf("before the first refresh: %v, want ErrNoLevels", err)
	}
	if err := p.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	// 9.27631… → 9.28 → 9280; 2.456 → 2.46 → 2460; block 3 has no fee.
	expectFees(t, p, map[int]int64{1: 9280, 2: 2460, 3: 1000, 100: 1000})
	*now = now.Add(maxAge + time.Second)
	if _, err := p.EstimateFee(context.Background(), 1, true); !errors.Is(err, ErrNoLevels) {
		t.Fatalf("after ten minutes: %v, want ErrNoLevels", err)
	}

	// The median without feeRangeIndex, the last level without a fallback.
	p, _ = newTestProvider(t, MempoolSpaceBlock, `{"source": "remote", "url": "`+url+`", "periodSeconds": 20}`, RemoteSource{URL: url})
	if err := p.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	expectFees(t, p, map[int]int64{1: 3010, 2: 2000, 5: 2000})

	// A failing or garbled answer keeps the old levels.
	bad := RemoteSource{URL: srv.URL + "/nowhere"}
	p.src = bad
	if err := p.Refresh(context.Background()); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("refresh from a 404: %v", err)
	}
	expectFees(t, p, map[int]int64{1: 3010})
}

func TestRemoteRejectsOversizedAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("[" + strings.Repeat(" ", maxRemoteBody) + "]"))
	}))
	defer srv.Close()
	if _, err := (RemoteSource{URL: srv.URL}).MempoolBlocks(context.Background()); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("oversized answer: %v", err)
	}
}

// mempoolspace: Blockbook's five targets, and a recommendation with a zero
// level is refused.
func TestRecommendedLevels(t *testing.T) {
	src := &fixedSource{rec: projected.RecommendedFees{FastestFee: 12, HalfHourFee: 9, HourFee: 7, EconomyFee: 3, MinimumFee: 1}}
	p, _ := newTestProvider(t, MempoolSpace, `{"periodSeconds": 60}`, src)
	if err := p.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	expectFees(t, p, map[int]int64{1: 12000, 2: 9000, 6: 9000, 7: 7000, 36: 7000, 37: 3000, 500: 3000, 501: 1000, 1000: 1000, 1008: 1000})
	src.rec.MinimumFee = 0
	if err := p.Refresh(context.Background()); err == nil {
		t.Fatal("a recommendation with a zero level was taken")
	}
	expectFees(t, p, map[int]int64{1: 12000})
}

func TestRoundSignificant(t *testing.T) {
	for _, c := range []struct{ in, want float64 }{
		{1234, 1230}, {9.27631139325092, 9.28}, {3.0073509137538332, 3.01}, {0.0012345, 0.00123}, {201.06951871657753, 201}, {1, 1}, {0, 0},
	} {
		if got := roundSignificant(c.in, 3); got != c.want {
			t.Errorf("roundSignificant(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
