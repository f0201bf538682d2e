package esplora

import (
	"context"
	"errors"
	"sort"
	"strconv"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
)

// The mempool routes and fee estimates.

// errMissingTx is an indexed tx that none of the index, mempool and node
// can load (a broken store or node): a 500, not the client's mistake.
var errMissingTx = errors.New("indexed tx not found")

// histogramBinVSize is electrs' VSIZE_BIN_WIDTH: a histogram bin closes
// once it holds more than this many vbytes.
const histogramBinVSize = 50_000

// feeTargets are the confirmation targets of /fee-estimates.
var feeTargets = func() []int {
	t := make([]int, 0, 28)
	for i := 1; i <= 25; i++ {
		t = append(t, i)
	}
	return append(t, 144, 504, 1008)
}()

type backlogStats struct {
	Count        int          `json:"count"`
	VSize        int          `json:"vsize"`
	TotalFee     uint64       `json:"total_fee"`
	FeeHistogram [][2]float64 `json:"fee_histogram"`
}

type txOverview struct {
	Txid  string `json:"txid"`
	Fee   uint64 `json:"fee"`
	VSize int    `json:"vsize"`
	Value uint64 `json:"value"`
}

func (s *Server) routeMempool(ctx context.Context, p []string, n int) (*reply, error) {
	if n > 2 || n == 2 && p[1] != "txids" && p[1] != "recent" {
		return nil, errNoRoute
	}
	txs, err := s.q.EsploraMempool(ctx)
	if err != nil {
		return nil, err
	}
	switch {
	case n == 1:
		return jsonReply(backlog(txs))
	case p[1] == "txids":
		ids := make([]string, len(txs))
		for i, t := range txs {
			ids[i] = t.Txid.String()
		}
		return jsonReply(ids)
	}
	out := make([]txOverview, 0, recentTxs)
	for _, t := range txs[:min(recentTxs, len(txs))] {
		out = append(out, txOverview{Txid: t.Txid.String(), Fee: t.Fee, VSize: t.VSize, Value: t.Value})
	}
	return jsonReply(out)
}

// backlog sums the mempool and builds Electrum's fee histogram: txs by
// fee rate, highest first, in bins of a little over 50,000 vbytes, each
// bin named by the lowest rate in it.
func backlog(txs []api.EsploraMempoolTx) backlogStats {
	out := backlogStats{Count: len(txs), FeeHistogram: [][2]float64{}}
	type entry struct {
		rate  float64
		vsize int
	}
	entries := make([]entry, 0, len(txs))
	for _, t := range txs {
		out.VSize += t.VSize
		out.TotalFee += t.Fee
		if t.VSize > 0 {
			entries = append(entries, entry{float64(float32(float64(t.Fee) / float64(t.VSize))), t.VSize})
		}
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].rate > entries[j].rate })
	bin, last := 0, 0.0
	for _, e := range entries {
		if bin > histogramBinVSize && last != e.rate {
			out.FeeHistogram = append(out.FeeHistogram, [2]float64{last, float64(bin)})
			bin = 0
		}
		last = e.rate
		bin += e.vsize
	}
	if bin > 0 {
		out.FeeHistogram = append(out.FeeHistogram, [2]float64{last, float64(bin)})
	}
	return out
}

// feeEstimates answers the node's estimate for each target in sat/vB; a
// target the node cannot estimate is left out (electrs shows what
// estimatesmartfee answered, {} when nothing).
func (s *Server) feeEstimates(ctx context.Context) (*reply, error) {
	out := map[string]float64{}
	if s.caps.FeeEstimates == nil {
		return jsonReply(out)
	}
	for _, t := range feeTargets {
		est, err := s.caps.FeeEstimates.FeeEstimates(ctx, []int{t}, api.FeeQuery{})
		if err != nil || len(est) != 1 {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			// A node that does not answer is a 503, as on every front;
			// a target it cannot estimate is only left out.
			if errors.Is(err, bchain.ErrNodeUnavailable) {
				return nil, err
			}
			continue
		}
		perKvB, err := strconv.ParseFloat(est[0].FeePerUnit, 64)
		if err != nil || perKvB <= 0 {
			continue
		}
		out[strconv.Itoa(t)] = perKvB / 1000
	}
	return jsonReply(out)
}
