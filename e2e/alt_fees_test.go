package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire/v2"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// Fee levels from our own mempool: mempool.space's fees/mempool-blocks,
// fees/recommended and fees/precise on the Esplora listener, and
// Blockbook's alternative_estimate_fee "mempoolspaceblock" answered from
// the same projected blocks on REST, the websocket and through Trezor's
// own client, with the node's estimator as the fallback.

// mempoolBlock is one entry of fees/mempool-blocks, mempool.space's shape.
type mempoolBlock struct {
	BlockSize  *int64     `json:"blockSize"`
	BlockVSize *float64   `json:"blockVSize"`
	NTx        *int       `json:"nTx"`
	TotalFees  *int64     `json:"totalFees"`
	MedianFee  *float64   `json:"medianFee"`
	FeeRange   *[]float64 `json:"feeRange"`
}

type recommendedFees struct {
	FastestFee, HalfHourFee, HourFee, EconomyFee, MinimumFee *float64
}

// altFeesConfig is Blockbook's bitcoin.json setting with a one-second
// period and a fallback that tells itself apart from the node's rates.
var altFeesConfig = map[string]any{
	"alternative_estimate_fee":        "mempoolspaceblock",
	"alternative_estimate_fee_params": `{"url": "https://mempool.example/api/v1/fees/mempool-blocks", "periodSeconds": 1, "feeRangeIndex": 5, "fallbackFeePerKB": 1234}`,
}

func TestE2EAltFeesFromProjectedBlocks(t *testing.T) {
	st, esplora := startEsploraStackWith(t, altFeesConfig)
	g, base := st.g, st.inst.base
	// btcd has no estimate on a fresh chain: its relay fee, 1000 sat/kvB.
	const nodeRate = "0.00001"

	// An empty mempool projects no block: the node answers.
	var blocks []mempoolBlock
	esploraJSON(t, esplora+"/api/v1/fees/mempool-blocks", &blocks)
	if len(blocks) != 0 {
		t.Fatalf("mempool-blocks of an empty mempool: %d blocks", len(blocks))
	}
	wantEstimate(t, base, 1, nodeRate)

	// Three payments at 5, 17 and 41 sat/vB.
	var pending []*wire.MsgTx
	for i, rate := range []int64{5, 17, 41} {
		tx, err := g.CreatePayment([]chaingen.Output{{Address: mempoolAddr(t, g, chaingen.P2WPKH, 40+uint64(i)), Value: 100_000}}, rate)
		if err != nil {
			t.Fatal(err)
		}
		sendTx(t, st, tx)
		pending = append(pending, tx)
	}
	fees, weight := pendingFeesAndWeight(t, g, pending)
	waitEsplora(t, esplora+"/api/v1/fees/mempool-blocks", func(body []byte) bool {
		blocks = nil
		return json.Unmarshal(body, &blocks) == nil && len(blocks) == 1 && blocks[0].NTx != nil && *blocks[0].NTx == len(pending)
	})
	b := blocks[0]
	if b.BlockSize == nil || b.BlockVSize == nil || b.TotalFees == nil || b.MedianFee == nil || b.FeeRange == nil || len(*b.FeeRange) != 7 {
		t.Fatalf("mempool-blocks entry lacks mempool.space's fields: %+v", b)
	}
	if *b.TotalFees != fees || *b.BlockVSize != float64(weight)/4 {
		t.Errorf("projected block: totalFees %d blockVSize %v, want %d and %v (the pending txs' fees and weight / 4)",
			*b.TotalFees, *b.BlockVSize, fees, float64(weight)/4)
	}

	// estimateFee for 1 block is projected block 0's feeRange[5] to three
	// significant digits, per kvB; beyond the last block the fallback.
	rate := (*b.FeeRange)[5]
	scale := math.Pow(10, 3-math.Ceil(math.Log10(rate)))
	want1 := int64(math.Round(math.Round(rate*scale) / scale * 1000))
	if want1 <= 1000 {
		t.Fatalf("feeRange[5] = %v sat/vB: the pending txs pay more than the relay fee", rate)
	}
	t.Logf("projected block 0: %d txs, %d sat of fees, feeRange %v: estimateFee(1) %d sat/kvB", *b.NTx, *b.TotalFees, *b.FeeRange, want1)
	waitEstimate(t, base, 1, btcPerKvB(want1))
	wantEstimate(t, base, 2, "0.00001234")
	ws := newWS(t, base)
	var est []api.FeeEstimate
	ws.ok("estimateFee", map[string]any{"blocks": []int{1, 2, 500}}, &est)
	if len(est) != 3 || est[0].FeePerUnit != strconv.FormatInt(want1, 10) || est[1].FeePerUnit != "1234" || est[2].FeePerUnit != "1234" {
		t.Errorf("websocket estimateFee: %+v, want %d, 1234, 1234", est, want1)
	}
	checkSuiteFees(t, base, want1)

	// The answers' shapes, type-checked against mempool.js's typings
	// (make test-wire; tools/js/check-goldens.mjs).
	gs := newGoldenSet(t, filepath.Join(goldenDir, "mempoolspace"), "TestE2EAltFeesFromProjectedBlocks")
	for _, route := range []string{"mempool-blocks", "recommended", "precise"} {
		gs.check("fees-"+route, fetchGolden(t, esplora+"/api/v1/fees/"+route, 200))
	}
	gs.finish()

	// mempool.space's recommendation over btcd's relay fee (1 sat/vB).
	for _, route := range []string{"recommended", "precise"} {
		var r recommendedFees
		esploraJSON(t, esplora+"/api/v1/fees/"+route, &r)
		if r.FastestFee == nil || r.HalfHourFee == nil || r.HourFee == nil || r.EconomyFee == nil || r.MinimumFee == nil {
			t.Fatalf("fees/%s lacks a field: %+v", route, r)
		}
		if *r.MinimumFee != 1 || !(*r.FastestFee >= *r.HalfHourFee && *r.HalfHourFee >= *r.HourFee && *r.HourFee >= *r.EconomyFee && *r.EconomyFee >= *r.MinimumFee) {
			t.Errorf("fees/%s: %v %v %v %v %v", route, *r.FastestFee, *r.HalfHourFee, *r.HourFee, *r.EconomyFee, *r.MinimumFee)
		}
	}

	// Bad input: clear errors.
	for path, want := range map[string]struct {
		code int
		body string
	}{
		"/api/v1/cpfp/xyz":                        {400, "Invalid transaction ID"},
		"/api/v1/cpfp/" + strings.Repeat("0", 63): {400, "Invalid transaction ID"},
		"/api/v1/fees/nothing":                    {404, "endpoint does not exist"},
		"/api/v1/fees/recommended/x":              {404, "endpoint does not exist"},
	} {
		if code, body := esploraGet(t, esplora+path); code != want.code || !strings.Contains(string(body), want.body) {
			t.Errorf("GET %s: %d %s, want %d %q", path, code, body, want.code, want.body)
		}
	}

	// Mined, the txs leave the projection.
	if _, err := g.AddBlock(pending...); err != nil {
		t.Fatal(err)
	}
	submit(t, g, st.node, g.Height())
	waitEsplora(t, esplora+"/api/v1/fees/mempool-blocks", func(body []byte) bool { return string(bytes.TrimSpace(body)) == "[]" })
}

// pendingFeesAndWeight sums the fees and BIP141 weights of txs whose
// inputs spend the generator's chain or each other.
func pendingFeesAndWeight(t *testing.T, g *chaingen.Generator, txs []*wire.MsgTx) (fees, weight int64) {
	t.Helper()
	outs := map[wire.OutPoint]int64{}
	for _, b := range g.Blocks() {
		for _, tx := range b.Transactions {
			for n, o := range tx.TxOut {
				outs[wire.OutPoint{Hash: tx.TxHash(), Index: uint32(n)}] = o.Value
			}
		}
	}
	for _, tx := range txs {
		for n, o := range tx.TxOut {
			outs[wire.OutPoint{Hash: tx.TxHash(), Index: uint32(n)}] = o.Value
		}
	}
	for _, tx := range txs {
		for _, in := range tx.TxIn {
			v, ok := outs[in.PreviousOutPoint]
			if !ok {
				t.Fatalf("%s spends unknown %s", tx.TxHash(), in.PreviousOutPoint)
			}
			fees += v
		}
		for _, o := range tx.TxOut {
			fees -= o.Value
		}
		weight += int64(tx.SerializeSizeStripped()*3 + tx.SerializeSize())
	}
	return fees, weight
}

// btcPerKvB renders sat/kvB as Blockbook's REST estimatefee (coins per kB).
func btcPerKvB(sat int64) string {
	return strconv.FormatFloat(float64(sat)/1e8, 'f', -1, 64)
}

func estimate(t *testing.T, base string, blocks int) string {
	t.Helper()
	var r struct{ Result string }
	getJSON(t, fmt.Sprintf("%s/api/v2/estimatefee/%d", base, blocks), 200, &r)
	return r.Result
}

func wantEstimate(t *testing.T, base string, blocks int, want string) {
	t.Helper()
	if got := estimate(t, base, blocks); got != want {
		t.Errorf("estimatefee/%d = %s, want %s", blocks, got, want)
	}
}

// waitEstimate polls estimatefee until it answers want: the provider
// refreshes every second (a failure guard, not a speed assertion).
func waitEstimate(t *testing.T, base string, blocks int, want string) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for got := estimate(t, base, blocks); got != want; got = estimate(t, base, blocks) {
		if time.Now().After(deadline) {
			t.Fatalf("estimatefee/%d stayed %s, want %s", blocks, got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkSuiteFees reads the levels through @trezor/blockchain-link, as
// Trezor Suite does.
func checkSuiteFees(t *testing.T, base string, want1 int64) {
	t.Helper()
	node := trezorPrereqs(t)
	out, err := exec.Command(node, "../tools/js/trezor-fees.mjs", base, "1,2").CombinedOutput()
	if err != nil {
		t.Fatalf("trezor-fees.mjs: %v\n%s", err, out)
	}
	var got struct {
		Version string `json:"version"`
		Fees    []struct {
			FeePerUnit string `json:"feePerUnit"`
		} `json:"fees"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &got); err != nil {
		t.Fatalf("trezor-fees.mjs: %v in %s", err, out)
	}
	if len(got.Fees) != 2 || got.Fees[0].FeePerUnit != strconv.FormatInt(want1, 10) || got.Fees[1].FeePerUnit != "1234" {
		t.Errorf("@trezor/blockchain-link %s estimateFee: %s, want %d and 1234", got.Version, out, want1)
	}
}
