package electrum

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/mempool/projected"
	"github.com/openexplorer/blockbook/tools/apitest"
)

// The bins: highest rates first, a bin closes at 30,000 vbytes and the
// next one is 10% larger, its rate is its lowest floored to 0.1, the
// rest is the last bin; txs without vsize count nothing.
func TestCompactHistogram(t *testing.T) {
	got := compactHistogram([]feeRate{{1.01, 100}, {40.04, 15_000}, {50, 20_000}, {7, 0}, {10.59, 33_000}, {2, 0}})
	want := "[[40 35000] [10.5 33000] [1 100]]"
	if fmt.Sprint(got) != want {
		t.Errorf("histogram %v, want %s", got, want)
	}
	if got := compactHistogram(nil); got == nil || len(got) != 0 {
		t.Errorf("empty mempool: %v", got)
	}
}

// minFee is a node's minimum fee (the projection's fees need one).
type minFee int64

func (m minFee) MempoolMinFee(context.Context) (int64, error) { return int64(m), nil }

// With the projection running, mempool.get_fee_histogram bins the
// projected blocks' txs at the rates the engine mines them at, with the
// vsizes of the fixture's pending txs.
func TestFeeHistogramFromProjection(t *testing.T) {
	f := apitest.New(t, apitest.Options{Mempool: true})
	f.Backend.MinFee = minFee(1000)
	proj := f.Mempool.EnableProjection(projected.Bitcoin())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); proj.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	s := serve(t, f, Config{}, func(c *api.Config) { c.Projection = proj })
	vsize := map[bchain.Hash]int{}
	for _, tx := range f.Pending {
		vsize[toHash(t, tx.TxHash())] = (3*tx.SerializeSizeStripped() + tx.SerializeSize() + 3) / 4
	}
	deadline := time.Now().Add(ioGuard)
	snap := proj.Snapshot()
	for (snap.Count != len(f.Pending) || !proj.Current()) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		snap = proj.Snapshot()
	}
	var rates []feeRate
	for _, b := range snap.Blocks {
		for i, id := range b.Txids {
			rates = append(rates, feeRate{b.Rates[i], vsize[id]})
		}
	}
	if snap.Count != len(f.Pending) || len(rates) != len(f.Pending) {
		t.Fatalf("projection holds %d txs in blocks of %d, want %d", len(rates), snap.Count, len(f.Pending))
	}
	want := compactHistogram(rates)
	c := s.negotiated(t, "1.6")
	got := ok[[][2]float64](t, c, "mempool.get_fee_histogram")
	if fmt.Sprint(got) != fmt.Sprint(want) || len(got) == 0 {
		t.Errorf("histogram %v, want %v", got, want)
	}
}

// engineProjection serves a projected.Engine the test fills.
type engineProjection struct {
	e     *projected.Engine
	stale bool // the projection does not follow the node
}

func (p engineProjection) Snapshot() *projected.Snapshot { return p.e.Snapshot() }
func (p engineProjection) Current() bool                 { return !p.stale }
func (p engineProjection) Cpfp(txid bchain.Hash) (projected.Cpfp, bool) {
	return p.e.Cpfp(txid)
}

// A CPFP package counts at the package's rate, as the engine mines it:
// a 1 sat/vB parent whose 41 sat/vB child pays for both is binned at 21
// with it, where the txs' own rates would bin it at 1.
func TestFeeHistogramCPFP(t *testing.T) {
	f := apitest.New(t, apitest.Options{Mempool: true})
	f.Backend.MinFee = minFee(1000)
	e := projected.NewEngine(projected.Bitcoin())
	id := func(b byte) bchain.Hash { return bchain.Hash{b} }
	e.Add(projected.Tx{Txid: id(1), Fee: 1000, Weight: 4000},
		projected.Tx{Txid: id(2), Fee: 41_000, Weight: 4000, Parents: []bchain.Hash{id(1)}},
		projected.Tx{Txid: id(3), Fee: 30 * 29_500, Weight: 4 * 29_500})
	s := serve(t, f, Config{}, func(c *api.Config) { c.Projection = engineProjection{e: e} })
	got := ok[[][2]float64](t, s.negotiated(t, "1.4"), "mempool.get_fee_histogram")
	if want := "[[21 30500] [21 1000]]"; fmt.Sprint(got) != want {
		t.Errorf("histogram %v, want %s", got, want)
	}
}

// A projection that does not follow the node leaves the histogram to the
// node's mempool, as without one.
func TestFeeHistogramStaleProjection(t *testing.T) {
	f := apitest.New(t, apitest.Options{Mempool: true})
	f.Backend.MinFee = minFee(1000)
	e := projected.NewEngine(projected.Bitcoin())
	e.Add(projected.Tx{Txid: bchain.Hash{1}, Fee: 1000, Weight: 4000})
	stale := serve(t, f, Config{}, func(c *api.Config) { c.Projection = engineProjection{e: e, stale: true} })
	plain := serve(t, f, Config{})
	got := ok[[][2]float64](t, stale.negotiated(t, "1.4"), "mempool.get_fee_histogram")
	want := ok[[][2]float64](t, plain.negotiated(t, "1.4"), "mempool.get_fee_histogram")
	if fmt.Sprint(got) != fmt.Sprint(want) || len(want) == 0 {
		t.Errorf("histogram %v, want the mempool's %v", got, want)
	}
}
