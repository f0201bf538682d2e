package esplora_test

import (
	"slices"
	"strconv"
	"testing"

	"github.com/openexplorer/blockbook/tools/apitest"
)

// TestMempoolRoutes compares the backlog, the txids and the recent list
// with the node's pending txs and their fees from the raw chain.
func TestMempoolRoutes(t *testing.T) {
	f := newFixture(t, esploraOptions())
	fees := map[string]int64{}
	vsizes := map[string]int{}
	var want []string
	var totalFee int64
	for _, tx := range f.Pending {
		id := tx.TxHash().String()
		want = append(want, id)
		var got esploraTx
		f.getJSON(t, "/api/tx/"+id, &got) // its fee is checked against the chain in TestPendingTxs
		fees[id], vsizes[id] = got.Fee, (got.Weight+3)/4
		totalFee += got.Fee
	}
	var ids []string
	f.getJSON(t, "/api/mempool/txids", &ids)
	if !sameSet(ids, want) {
		t.Fatalf("mempool txids %v, want %v", ids, want)
	}
	var backlog struct {
		Count        int          `json:"count"`
		VSize        int          `json:"vsize"`
		TotalFee     int64        `json:"total_fee"`
		FeeHistogram [][2]float64 `json:"fee_histogram"`
	}
	f.getJSON(t, "/api/mempool", &backlog)
	vsize := 0
	for _, v := range vsizes {
		vsize += v
	}
	if backlog.Count != len(want) || backlog.TotalFee != totalFee || backlog.VSize != vsize ||
		len(backlog.FeeHistogram) != 1 || backlog.FeeHistogram[0][1] != float64(vsize) {
		t.Fatalf("mempool %+v, want %d txs, fee %d, vsize %d in one bin", backlog, len(want), totalFee, vsize)
	}
	var recent []struct {
		Txid  string `json:"txid"`
		Fee   int64  `json:"fee"`
		VSize int    `json:"vsize"`
		Value int64  `json:"value"`
	}
	f.getJSON(t, "/api/mempool/recent", &recent)
	if len(recent) != min(10, len(want)) {
		t.Fatalf("recent: %d txs", len(recent))
	}
	for _, r := range recent {
		if fees[r.Txid] != r.Fee || vsizes[r.Txid] != r.VSize || r.Value <= 0 {
			t.Fatalf("recent %+v: fee %d vsize %d", r, fees[r.Txid], vsizes[r.Txid])
		}
	}
	f.wantError(t, "GET", "/api/mempool/other", "", 404, "endpoint does not exist")
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestFeeEstimates: every Esplora target, in sat/vB, from the node's
// estimates per 1000 vbytes.
func TestFeeEstimates(t *testing.T) {
	f := newFixture(t, esploraOptions())
	var got map[string]float64
	f.getJSON(t, "/api/fee-estimates", &got)
	targets := []int{144, 504, 1008}
	for i := 1; i <= 25; i++ {
		targets = append(targets, i)
	}
	if len(got) != len(targets) {
		t.Fatalf("fee-estimates: %v", got)
	}
	for _, n := range targets {
		if want := float64(apitest.FeeRate(n)) / 1000; got[strconv.Itoa(n)] != want {
			t.Errorf("fee-estimates[%d] = %v, want %v", n, got[strconv.Itoa(n)], want)
		}
	}
}
