package e2e

import (
	"fmt"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/openexplorer/blockbook/tools/chaingen"
)

// checkMiningRoutes checks mempool.space's mining/blocks/timestamp and
// mining/hashrate/all on the stack's btcd chain against the generator's
// blocks: a scan for the block at a time, getnetworkhashps by chaingen.NetworkHashPs (btcd's work).
func checkMiningRoutes(t *testing.T, st *demoStack, base string) {
	t.Helper()
	start := time.Now()
	defer func() { t.Logf("mining routes checked in %v", time.Since(start).Round(time.Millisecond)) }()
	blocks := st.g.Blocks()
	times := make([]int64, len(blocks))
	for h, b := range blocks {
		times[h] = b.Header.Timestamp.Unix()
	}
	tip := len(blocks) - 1
	type atTime struct {
		Height    int    `json:"height"`
		Hash      string `json:"hash"`
		Timestamp string `json:"timestamp"`
	}
	for _, h := range []int{0, 1, tip / 2, tip} {
		for _, ts := range []int64{times[h], times[h] + 1} {
			best := -1
			for i, bt := range times {
				if bt <= ts && (best < 0 || bt >= times[best]) {
					best = i
				}
			}
			var got atTime
			esploraJSON(t, fmt.Sprintf("%s/api/v1/mining/blocks/timestamp/%d", base, ts), &got)
			want := atTime{best, blocks[best].BlockHash().String(), time.Unix(times[best], 0).UTC().Format("2006-01-02T15:04:05.000Z")}
			if got != want {
				t.Errorf("blocks/timestamp/%d: %+v, want %+v", ts, got, want)
			}
		}
	}
	if code, body := esploraGet(t, fmt.Sprintf("%s/api/v1/mining/blocks/timestamp/%d", base, times[0]-1)); code != http.StatusNotFound {
		t.Errorf("a time before genesis: %d %s", code, body)
	}
	if code, body := esploraGet(t, base+"/api/v1/mining/blocks/timestamp/1700000000000"); code != http.StatusBadRequest {
		t.Errorf("milliseconds: %d %s", code, body)
	}

	hashps := func(lookup, last int) float64 { return chaingen.NetworkHashPs(blocks, lookup, last) }
	type sample struct {
		Timestamp   int64   `json:"timestamp"`
		AvgHashrate float64 `json:"avgHashrate"`
	}
	var got struct {
		Hashrates       []sample `json:"hashrates"`
		CurrentHashrate float64  `json:"currentHashrate"`
	}
	esploraJSON(t, base+"/api/v1/mining/hashrate/all", &got)
	// The days that hold blocks (the answer also has a zero row for each
	// empty day back to genesis).
	want := map[int64]float64{times[0]: hashps(1, 1)}
	for _, bt := range times[1:] {
		to := (bt + 86399) / 86400 * 86400
		if to > time.Now().Unix() {
			continue // today's day is not closed
		}
		n, last := 0, 0
		for h, t := range times {
			if t >= to-86400 && t <= to {
				n, last = n+1, h
			}
		}
		want[to] = hashps(n, last)
	}
	if len(want) < 2 {
		t.Fatalf("the chain has no block in a closed day: nothing to check in %v", want)
	}
	gotDays := map[int64]float64{}
	for _, s := range got.Hashrates {
		if want[s.Timestamp] != 0 || s.AvgHashrate != 0 {
			gotDays[s.Timestamp] = s.AvgHashrate
		}
	}
	for k, v := range want {
		if v == 0 {
			delete(want, k)
		}
	}
	if !reflect.DeepEqual(gotDays, want) || got.CurrentHashrate != hashps(1008, tip) {
		t.Errorf("hashrate/all: days %v current %v, want %v %v", gotDays, got.CurrentHashrate, want, hashps(1008, tip))
	}
	if code, body := esploraGet(t, base+"/api/v1/mining/hashrate/5m"); code != http.StatusBadRequest {
		t.Errorf("hashrate/5m: %d %s", code, body)
	}
}
