package esplora_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/esplora"
	"github.com/openexplorer/blockbook/tools/apitest"
)

// mpExtras are the extras of mempool.space's /v1/block answers the tests
// check.
type mpExtras struct {
	TotalFees         uint64                `json:"totalFees"`
	MedianFee         uint64                `json:"medianFee"`
	FeeRange          []uint64              `json:"feeRange"`
	Reward            uint64                `json:"reward"`
	AvgFee            uint64                `json:"avgFee"`
	AvgFeeRate        uint64                `json:"avgFeeRate"`
	CoinbaseRaw       string                `json:"coinbaseRaw"`
	VirtualSize       float64               `json:"virtualSize"`
	AvgTxSize         float64               `json:"avgTxSize"`
	TotalInputs       int                   `json:"totalInputs"`
	TotalOutputs      int                   `json:"totalOutputs"`
	TotalOutputAmt    uint64                `json:"totalOutputAmt"`
	TotalInputAmt     uint64                `json:"totalInputAmt"`
	MedianFeeAmt      uint64                `json:"medianFeeAmt"`
	FeePercentiles    []uint64              `json:"feePercentiles"`
	SegwitTotalTxs    int                   `json:"segwitTotalTxs"`
	SegwitTotalSize   int                   `json:"segwitTotalSize"`
	SegwitTotalWeight int                   `json:"segwitTotalWeight"`
	Header            string                `json:"header"`
	UtxoSetChange     int                   `json:"utxoSetChange"`
	Pool              struct{ Slug string } `json:"pool"`
}

type mpBlock struct {
	esploraBlock
	Extras mpExtras `json:"extras"`
}

// wantExtras computes a block's extras from the raw chain: fees from the
// outputs the inputs spend, weights from btcd's serialization, and the
// statistics as Bitcoin Core's getblockstats defines them.
func wantExtras(t *testing.T, f *fixture, h int) mpExtras {
	t.Helper()
	b := f.Block(h)
	var hdr bytes.Buffer
	if err := b.Header.Serialize(&hdr); err != nil {
		t.Fatal(err)
	}
	cb := b.Transactions[0]
	w := mpExtras{Header: hex.EncodeToString(hdr.Bytes()), CoinbaseRaw: hex.EncodeToString(cb.TxIn[0].SignatureScript),
		TotalOutputs: len(cb.TxOut), FeeRange: make([]uint64, 7), FeePercentiles: make([]uint64, 7)}
	w.Pool.Slug = "unknown"
	for _, o := range cb.TxOut {
		w.Reward += uint64(o.Value)
	}
	type rated struct{ rate, weight uint64 }
	var rates []rated
	var fees []uint64
	var size, weight uint64
	for _, tx := range b.Transactions[1:] {
		var in, out uint64
		for _, i := range tx.TxIn {
			in += uint64(f.oracle.outs[i.PreviousOutPoint].Value)
		}
		for _, o := range tx.TxOut {
			out += uint64(o.Value)
		}
		wt := uint64(tx.SerializeSizeStripped()*3 + tx.SerializeSize())
		fee := in - out
		fees, rates = append(fees, fee), append(rates, rated{fee * 4 / wt, wt})
		w.TotalFees += fee
		w.TotalInputs += len(tx.TxIn)
		w.TotalOutputs += len(tx.TxOut)
		w.TotalOutputAmt += out
		w.TotalInputAmt += in
		size += uint64(tx.SerializeSize())
		weight += wt
		if tx.HasWitness() {
			w.SegwitTotalTxs++
			w.SegwitTotalSize += tx.SerializeSize()
			w.SegwitTotalWeight += int(wt)
		}
	}
	blockWeight := weight + uint64(cb.SerializeSizeStripped()*3+cb.SerializeSize()) +
		uint64(b.SerializeSizeStripped()-sumStripped(f, h))*4
	w.VirtualSize = float64(blockWeight) / 4
	if h == 0 {
		return mpExtras{Header: w.Header, CoinbaseRaw: w.CoinbaseRaw, Reward: w.Reward, TotalOutputs: 1, Pool: w.Pool,
			VirtualSize: w.VirtualSize, FeeRange: w.FeeRange, FeePercentiles: w.FeePercentiles}
	}
	w.UtxoSetChange = w.TotalOutputs - w.TotalInputs
	w.AvgTxSize = math.Round(float64(size)/float64(len(b.Transactions))*100) * 0.01 // mempool.space's rounding
	if len(fees) == 0 {
		return w
	}
	w.AvgFee = w.TotalFees / uint64(len(fees))
	w.AvgFeeRate = w.TotalFees * 4 / weight
	sort.Slice(rates, func(i, j int) bool { return rates[i].rate < rates[j].rate })
	// The rate at which the cumulative weight first reaches num/den of the total.
	at := func(num, den uint64) uint64 {
		var cum uint64
		for _, r := range rates {
			if cum += r.weight; cum*den >= weight*num {
				return r.rate
			}
		}
		return rates[len(rates)-1].rate
	}
	w.FeeRange = []uint64{rates[0].rate, at(1, 10), at(1, 4), at(1, 2), at(3, 4), at(9, 10), rates[len(rates)-1].rate}
	w.MedianFee = w.FeeRange[3]
	sort.Slice(fees, func(i, j int) bool { return fees[i] < fees[j] })
	nth := func(pct int) uint64 { return fees[max(0, len(fees)*pct/100-1)] }
	w.FeePercentiles = []uint64{fees[0], nth(10), nth(25), nth(50), nth(75), nth(90), fees[len(fees)-1]}
	w.MedianFeeAmt = w.FeePercentiles[3]
	return w
}

func checkMPBlock(t *testing.T, f *fixture, got mpBlock, h int) {
	t.Helper()
	checkBlock(t, f, got.esploraBlock, h)
	want := wantExtras(t, f, h)
	if g, w := fmt.Sprintf("%+v", got.Extras), fmt.Sprintf("%+v", want); g != w {
		t.Fatalf("extras of block %d:\n got %s\nwant %s", h, g, w)
	}
}

func TestMempoolSpaceBlocks(t *testing.T) {
	f := newFixture(t, esploraOptions())
	tip := f.TipHeight()
	withFees := 0
	for h := 0; h <= tip; h++ {
		if len(f.Block(h).Transactions) > len(f.Block(withFees).Transactions) {
			withFees = h
		}
	}
	for _, h := range []int{0, 1, withFees, tip} {
		var got mpBlock
		f.getJSON(t, "/api/v1/block/"+f.BlockHash(h), &got)
		checkMPBlock(t, f, got, h)
	}
	for _, c := range []struct {
		path      string
		from, len int
	}{{"/api/v1/blocks", tip, 15}, {"/api/v1/blocks/" + strconv.Itoa(withFees), withFees, min(15, withFees+1)},
		{"/api/v1/blocks/3", 3, 4}, {"/api/v1/blocks/" + strconv.Itoa(tip+4), tip, 11}, {"/api/v1/blocks/-1", 0, 0},
		{"/api/v1/blocks/" + strconv.Itoa(tip+15), tip, 0}} {
		var got []mpBlock
		f.getJSON(t, c.path, &got)
		if len(got) != c.len {
			t.Fatalf("%s: %d blocks, want %d", c.path, len(got), c.len)
		}
		for i := range got {
			checkMPBlock(t, f, got[i], c.from-i)
		}
	}
	f.wantError(t, "GET", "/api/v1/block/nothex", "", 400, `{"error":"Invalid block hash"}`)
	f.wantError(t, "GET", "/api/v1/block/"+f.BlockHash(1)[:63], "", 400, `{"error":"Invalid block hash"}`)
	f.wantError(t, "GET", "/api/v1/block/00000000000000000000000000000000000000000000000000000000000000aa", "", 404,
		`{"error":"Failed to get block"}`)
	f.wantError(t, "GET", "/api/v1/blocks/x", "", 400, `{"error":"Invalid block height"}`)
	f.wantError(t, "GET", "/api/v1/mining/hashrate/pools/1m", "", 404, `{"error":"Pool hashrates are not served`)
}

// The difficulty adjustment of the regtest chain (inside its first epoch,
// below a quarter epoch, at a fixed clock), from mempool.space's formula.
func TestMempoolSpaceDifficultyAdjustment(t *testing.T) {
	f := newFixture(t, esploraOptions())
	genesis := f.Block(0).Header.Timestamp.Unix()
	now := time.Unix(f.Block(f.TipHeight()).Header.Timestamp.Unix()+1234, 0)
	opts := esploraOptions()
	opts.Now, opts.Log = func() time.Time { return now }, apitest.Quiet()
	f.srv = esplora.New(f.svc, f.svc.Capabilities().Scripts, f.svc, opts)
	tip := f.TipHeight()
	if tip >= 503 {
		t.Fatalf("the fixture's chain has %d blocks: this test expects fewer than a quarter epoch", tip)
	}
	var got map[string]float64
	code, body := f.get(t, "/api/v1/difficulty-adjustment")
	if code != http.StatusOK {
		t.Fatalf("difficulty-adjustment: %d %s", code, body)
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	diff := float64(now.Unix() - genesis)
	change := min(300, max(-75, (600/(diff/float64(tip+1))-1)*100))
	avg := math.Floor(diff / float64(tip) * 1000)
	want := map[string]float64{
		"progressPercent": float64(tip) / 2016 * 100, "difficultyChange": change, "remainingBlocks": float64(2016 - tip),
		"nextRetargetHeight": 2016, "previousRetarget": 0, "previousTime": float64(genesis), "timeAvg": avg,
		"adjustedTimeAvg": avg, "remainingTime": float64(2016-tip) * avg, "timeOffset": 0,
		"estimatedRetargetDate": float64(2016-tip)*avg + float64(now.Unix()*1000), "expectedBlocks": diff / 600,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("difficulty-adjustment:\n got %v\nwant %v", got, want)
	}
}
