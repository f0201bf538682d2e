package esplora_test

import (
	"fmt"
	"math"
	"net/http"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/esplora"
	"github.com/openexplorer/blockbook/tools/apitest"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// atClock rebuilds the front with its clock at now.
func atClock(f *fixture, now time.Time) {
	opts := esploraOptions()
	opts.Now, opts.Log = func() time.Time { return now }, apitest.Quiet()
	f.srv = esplora.New(f.svc, f.svc.Capabilities().Scripts, f.svc, opts)
}

// The block at or before a time, against a scan of the raw chain.
func TestMempoolSpaceBlockAtTime(t *testing.T) {
	f := newFixture(t, esploraOptions())
	tip := f.TipHeight()
	now := time.Unix(f.Block(tip).Header.Timestamp.Unix()+600, 0)
	atClock(f, now)
	oracle := func(ts int64) int {
		best := -1
		for h := 0; h <= tip; h++ {
			bt := f.Block(h).Header.Timestamp.Unix()
			if bt <= ts && (best < 0 || bt >= f.Block(best).Header.Timestamp.Unix()) {
				best = h
			}
		}
		return best
	}
	var stamps []int64
	for _, h := range []int{0, 1, 2, tip / 2, tip - 1, tip} {
		bt := f.Block(h).Header.Timestamp.Unix()
		stamps = append(stamps, bt, bt+1, bt-1)
	}
	stamps = append(stamps, now.Unix()+86400)
	for _, ts := range stamps {
		want := oracle(ts)
		path := "/api/v1/mining/blocks/timestamp/" + strconv.FormatInt(ts, 10)
		if want < 0 {
			f.wantError(t, "GET", path, "", 404, fmt.Sprintf(`{"error":"No block was found before timestamp %d"}`, ts))
			continue
		}
		type atTime struct {
			Height    int    `json:"height"`
			Hash      string `json:"hash"`
			Timestamp string `json:"timestamp"`
		}
		var got atTime
		f.getJSON(t, path, &got)
		b := f.Block(want)
		exp := atTime{want, b.BlockHash().String(), b.Header.Timestamp.UTC().Format("2006-01-02T15:04:05") + ".000Z"}
		if got != exp {
			t.Errorf("%s: %v, want %v", path, got, exp)
		}
	}
	for _, bad := range []string{"0", "012", "abc", "1.5", "-5", "1e9", strconv.FormatInt(now.Unix()+86401, 10),
		"99999999999999999999999"} {
		f.wantError(t, "GET", "/api/v1/mining/blocks/timestamp/"+bad, "", 400,
			`{"error":"Invalid timestamp, value must be Unix seconds"}`)
	}
}

// The hashrate history, against getnetworkhashps over the raw chain by
// chaingen.NetworkHashPs (btcd's CalcWork, not the index's code).
func TestMempoolSpaceHashrate(t *testing.T) {
	f := newFixture(t, esploraOptions())
	tip := f.TipHeight()
	tipTime := f.Block(tip).Header.Timestamp.Unix()
	now := time.Unix(tipTime+3*86400+7, 0)
	atClock(f, now)
	times := make([]int64, tip+1)
	for h := range times {
		times[h] = f.Block(h).Header.Timestamp.Unix()
		if f.Block(h).Header.Bits != 0x207fffff {
			t.Fatalf("block %d has bits %#x: the oracle assumes regtest's", h, f.Block(h).Header.Bits)
		}
	}
	hashps := func(lookup, last int) float64 { return chaingen.NetworkHashPs(f.Chain.Gen.Blocks(), lookup, last) }
	type sample struct {
		Timestamp   int64   `json:"timestamp"`
		AvgHashrate float64 `json:"avgHashrate"`
	}
	var all []sample
	for to := now.Unix() / 86400 * 86400; to > times[0]; to -= 86400 {
		n, last := 0, 0
		for h, bt := range times {
			if bt >= to-86400 && bt <= to {
				n, last = n+1, h
			}
		}
		all = append([]sample{{to, hashps(n, last)}}, all...)
	}
	all = append([]sample{{times[0], hashps(1, 1)}}, all...)
	if all[len(all)-1].AvgHashrate != 0 || all[len(all)-4].AvgHashrate == 0 {
		t.Fatalf("the clock should leave two empty days after the chain's last: %v", all[len(all)-4:])
	}
	type change struct {
		Time       int64   `json:"time"`
		Height     int64   `json:"height"`
		Difficulty float64 `json:"difficulty"`
		Adjustment float64 `json:"adjustment"`
	}
	type answer struct {
		Hashrates         []sample `json:"hashrates"`
		Difficulty        []change `json:"difficulty"`
		CurrentHashrate   float64  `json:"currentHashrate"`
		CurrentDifficulty float64  `json:"currentDifficulty"`
	}
	regtestDiff := 65535.0 / 0x7fffff / 256 / 256 / 256 // Core's GetDifficulty of 0x207fffff
	for _, c := range []struct {
		interval string
		since    int64
	}{{"all", 0}, {"1w", now.Unix() - 7*86400}, {"24h", now.Unix() - 86400}} {
		var got answer
		f.getJSON(t, "/api/v1/mining/hashrate/"+c.interval, &got)
		var want []sample
		for _, s := range all {
			if s.Timestamp >= c.since {
				want = append(want, s)
			}
		}
		if !reflect.DeepEqual(got.Hashrates, want) {
			t.Errorf("%s hashrates:\n got %v\nwant %v", c.interval, got.Hashrates, want)
		}
		wantDiff := []change{}
		if c.since == 0 {
			wantDiff = append(wantDiff, change{times[0], 0, regtestDiff, 0})
		}
		if !reflect.DeepEqual(got.Difficulty, wantDiff) {
			t.Errorf("%s difficulty: %v, want %v", c.interval, got.Difficulty, wantDiff)
		}
		if got.CurrentHashrate != hashps(1008, tip) || math.Abs(got.CurrentDifficulty-regtestDiff) > 1e-20 {
			t.Errorf("%s current: %v %v, want %v %v", c.interval, got.CurrentHashrate, got.CurrentDifficulty, hashps(1008, tip), regtestDiff)
		}
	}
	for _, bad := range []string{"5m", "ALL", "1", "x"} {
		f.wantError(t, "GET", "/api/v1/mining/hashrate/"+bad, "", 400, `{"error":"Invalid interval`)
	}
	if code, _ := f.get(t, "/api/v1/mining/hashrate/1m/x"); code != http.StatusNotFound {
		t.Errorf("hashrate/1m/x: %d", code)
	}
}

// mempool.space's backend serves the tip under /v1 as well.
func TestMempoolSpaceTip(t *testing.T) {
	f := newFixture(t, esploraOptions())
	tip := f.TipHeight()
	for path, want := range map[string]string{"/api/v1/blocks/tip/height": strconv.Itoa(tip),
		"/api/v1/blocks/tip/hash": f.Block(tip).BlockHash().String()} {
		if code, body := f.get(t, path); code != http.StatusOK || body != want {
			t.Errorf("%s: %d %q, want %q", path, code, body, want)
		}
	}
	if code, _ := f.get(t, "/api/v1/blocks/tip/other"); code != http.StatusNotFound {
		t.Errorf("blocks/tip/other: %d", code)
	}
}
