package electrum

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/openexplorer/blockbook/api"
)

// histogramCache keeps the fee histogram: the node's mempool's for a
// while (it reads the whole mempool), the projection's until the next
// projection.
type histogramCache struct {
	mu   sync.Mutex
	at   time.Time
	snap api.ProjectedSnapshot // the projection binned; nil: the mempool's
	hist [][2]float64
}

const histogramTTL = 10 * time.Second

// feeRate is one pending tx's fee rate (sat/vB) and vsize.
type feeRate struct {
	rate  float64
	vsize int
}

func feeHistogram(ctx context.Context, ss *session, _ params) (any, error) {
	c := &ss.s.fees
	c.mu.Lock()
	defer c.mu.Unlock()
	if snap := ss.s.projection(ctx); snap != nil {
		if c.snap != snap {
			c.hist, c.snap = compactHistogram(projectedRates(snap)), snap
		}
		return c.hist, nil
	}
	if c.hist != nil && c.snap == nil && time.Since(c.at) < histogramTTL {
		return c.hist, nil
	}
	rates, err := ss.s.mempoolRates(ctx)
	if err != nil {
		return nil, err
	}
	c.hist, c.snap, c.at = compactHistogram(rates), nil, time.Now()
	return c.hist, nil
}

// projection is the service's latest projected blocks; nil when it keeps
// none or it does not follow the node now (the node's mempool answers
// then).
func (s *Server) projection(ctx context.Context) api.ProjectedSnapshot {
	pf := s.svc.Capabilities().ProjectedFees
	if pf == nil {
		return nil
	}
	snap, err := pf.Projection(ctx)
	if err != nil {
		s.log.Debug("fee histogram from the mempool: no projection", "err", err)
		return nil
	}
	return snap
}

// projectedRates are the projection's txs, each at the rate its package
// is mined at.
func projectedRates(snap api.ProjectedSnapshot) []feeRate {
	txs := snap.TxRates()
	out := make([]feeRate, len(txs))
	for i, t := range txs {
		out[i] = feeRate{t.Rate, int(t.VSize)}
	}
	return out
}

// mempoolRates are the pending txs' own fee rates, from the mempool's
// pages (txs whose fee is not known yet are left out).
func (s *Server) mempoolRates(ctx context.Context) ([]feeRate, error) {
	var all []feeRate
	for page := 1; ; page++ {
		mt, err := s.svc.MempoolTxs(ctx, page, 1000)
		if err != nil {
			return nil, fmt.Errorf("mempool page %d: %w", page, err)
		}
		for _, tx := range mt.Txs {
			if tx.Fees == nil || tx.VSize <= 0 {
				continue
			}
			fee, err := strconv.ParseFloat(tx.Fees.String(), 64)
			if err != nil {
				continue
			}
			all = append(all, feeRate{fee / float64(tx.VSize), tx.VSize})
		}
		if page >= mt.TotalPages {
			break
		}
	}
	return all, nil
}

// compactHistogram bins vsize by fee rate, highest rates first: a bin
// closes when it holds binSize vbytes, and each next bin is 10% larger. A
// bin's rate is the lowest rate in it, floored to 0.1 sat/vB.
func compactHistogram(all []feeRate) [][2]float64 {
	all = slices.DeleteFunc(all, func(e feeRate) bool { return e.vsize <= 0 })
	sort.Slice(all, func(i, j int) bool { return all[i].rate > all[j].rate })
	out := [][2]float64{}
	binSize, acc := 30_000.0, 0
	for i, e := range all {
		acc += e.vsize
		last := i == len(all)-1
		if float64(acc) >= binSize || last {
			rate := float64(int(e.rate*10)) / 10 // floor to 0.1 sat/vB
			out = append(out, [2]float64{rate, float64(acc)})
			acc, binSize = 0, binSize*1.1
		}
	}
	return out
}
