package esplora

import (
	"context"
	"encoding/json"
	"time"
)

// live-2h-chart: mempool.space's statistics task samples the mempool once
// a minute (statistics.ts) and pushes each sample, an OptimizedStatistic,
// to the clients that want live-2h-chart. We sample the projection the
// same way; the samples are not stored (mempool.space keeps them in its
// database for its statistics routes, which we do not serve).

// statFees are mempool.space's logFees: the lower bounds (sat/vB) of the
// fee-rate bins of vsizes.
var statFees = []float64{0, 1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 30, 40, 50, 60, 70, 80, 90, 100, 125, 150, 175, 200,
	250, 300, 350, 400, 500, 600, 700, 800, 900, 1000, 1200, 1400, 1600, 1800, 2000}

// DefaultWSStatsInterval is mempool.space's statistics period.
const DefaultWSStatsInterval = time.Minute

// optimizedStatistic is mempool.space's OptimizedStatistic.
type optimizedStatistic struct {
	Added             int64     `json:"added"`
	Count             int       `json:"count"`
	VBytesPerSecond   int       `json:"vbytes_per_second"`
	TotalFee          uint64    `json:"total_fee"`
	MempoolByteWeight uint64    `json:"mempool_byte_weight"`
	MinFee            float64   `json:"min_fee"`
	VSizes            []float64 `json:"vsizes"`
}

// statistic samples the projection: the txs with a fee rate, their
// weight (4 × vsize), fees and vsize per logFees bin (a tx at its mined
// rate, its package's), the node's minimum fee in sat/vB.
func (w *mpWS) statistic(ctx context.Context, now time.Time) (*optimizedStatistic, error) {
	pf := w.s.caps.ProjectedFees
	if pf == nil {
		return nil, nil
	}
	snap, err := pf.Projection(ctx)
	if err != nil {
		return nil, err
	}
	sum, err := pf.MempoolSummary(ctx)
	if err != nil {
		return nil, err
	}
	st := &optimizedStatistic{Added: now.Unix(), VBytesPerSecond: w.vBytesPerSecond(), TotalFee: sum.TotalFee,
		MinFee: float64(sum.MinFee) / 1000, VSizes: make([]float64, len(statFees))}
	for _, t := range snap.TxRates() {
		if t.Rate <= 0 {
			continue
		}
		st.Count++
		st.MempoolByteWeight += 4 * uint64(t.VSize)
		i := 0
		for i < len(statFees)-1 && t.Rate >= statFees[i+1] {
			i++
		}
		st.VSizes[i] += float64(t.VSize)
	}
	return st, nil
}

// pushStats sends a sample to the clients that want live-2h-chart.
func (w *mpWS) pushStats(ctx context.Context) {
	var want []*wsConn
	for _, c := range w.clients() {
		c.mu.Lock()
		if c.wants["live-2h-chart"] {
			want = append(want, c)
		}
		c.mu.Unlock()
	}
	if len(want) == 0 {
		return
	}
	st, err := w.statistic(ctx, time.Now())
	if err != nil || st == nil {
		return
	}
	b, _ := json.Marshal(map[string]any{"live-2h-chart": st})
	for _, c := range want {
		c.SendShared(b)
	}
}

// pushConversions sends the current fiat rates to every client, one
// shared frame.
func (w *mpWS) pushConversions(ctx context.Context) {
	conns := w.clients()
	if len(conns) == 0 {
		return
	}
	m := &wsMsg{}
	m.add("conversions", w.s.conversions(ctx))
	b := m.bytes()
	if b == nil {
		return
	}
	for _, c := range conns {
		c.SendShared(b)
	}
}
