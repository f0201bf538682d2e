package e2e

// Robinhood Chain (an Arbitrum Nitro chain) followed at its block time
// with Blockbook's shipped configs.

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/gethdev"
)

// TestEVMRobinhoodFollow serves a dev node under Robinhood Chain's chain
// id with its shipped config (disableMempoolSync, as Blockbook's) while
// the node seals a block every block time (100 ms, the testnet 250 ms),
// each with a payment sent through the server: the payment is in the
// mempool when sendtx answers (no pending-tx subscription), the index
// follows the blocks as they come (seen at most heights, the median
// latency from sealing to indexed under 2 s even on a loaded machine; it
// is about 100-200 ms on a quiet one) and ends on the node's tip with
// every payment confirmed and the mempool empty.
func TestEVMRobinhoodFollow(t *testing.T) {
	for _, c := range []struct {
		name   string
		period time.Duration
		blocks int
	}{{"Robinhood Archive", 100 * time.Millisecond, 20}, {"Robinhood Testnet", 250 * time.Millisecond, 8}} {
		t.Run(c.name, func(t *testing.T) { followAtBlockTime(t, c.name, c.period, c.blocks) })
	}
}

func followAtBlockTime(t *testing.T, name string, period time.Duration, blocks int) {
	net := evmNets[name]
	doc := evmConfig(t, net.file)
	if doc["averageBlockTimeMs"] != float64(period.Milliseconds()) || doc["disableMempoolSync"] != true {
		t.Fatalf("%s.json: averageBlockTimeMs %v disableMempoolSync %v, want %d and true", net.file, doc["averageBlockTimeMs"], doc["disableMempoolSync"], period.Milliseconds())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dev := startDevNode(t, gethdev.Options{ChainID: net.chainID})
	if _, err := dev.Commit(); err != nil {
		t.Fatal(err)
	}
	inst := startInProcess(t, writeEVMConfig(t, net.file, dev, nil), t.TempDir(), nil)
	h, hash := dev.Head()
	waitTip(t, inst.base, int32(h), hash.Hex(), inst.logs)
	var st api.SystemInfo
	getJSON(t, inst.base+"/api/v2", 200, &st)
	wantChain := "mainnet"
	if st.Blockbook.Coin != name {
		t.Errorf("status: coin %q, want %q", st.Blockbook.Coin, name)
	}
	if net.chainID == 46630 {
		wantChain = "testnet 46630"
	}
	if st.Backend.Chain != wantChain {
		t.Errorf("status: chain %q, want %q", st.Backend.Chain, wantChain)
	}

	// A poller notes when each height is first indexed.
	seen := map[uint64]time.Time{}
	var mu sync.Mutex
	pollCtx, stopPoll := context.WithCancel(ctx)
	var pollDone sync.WaitGroup
	pollDone.Go(func() {
		for pollCtx.Err() == nil {
			var s status
			if code, _ := tryGet(inst.base+"/api/v2", &s); code == 200 {
				mu.Lock()
				if _, ok := seen[uint64(s.Blockbook.BestHeight)]; !ok {
					seen[uint64(s.Blockbook.BestHeight)] = time.Now()
				}
				mu.Unlock()
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
	to := common.Address{0x4e, 0x63}
	sealed := map[uint64]time.Time{}
	tick := time.NewTicker(period)
	defer tick.Stop()
	for i := range blocks {
		tx := sendDevTransfer(t, dev, inst.base, to, int64(1000+i))
		var a api.Address
		getJSON(t, inst.base+"/api/v2/address/"+to.Hex()+"?details=txids", 200, &a)
		if a.UnconfirmedTxs != 1 || len(a.Txids) == 0 || a.Txids[0] != tx.Hash().Hex() {
			t.Fatalf("block %d: the sent tx %s is not in the mempool when sendtx answers: %+v", i, tx.Hash().Hex(), a)
		}
		<-tick.C
		if _, err := dev.Commit(); err != nil {
			t.Fatal(err)
		}
		n, _ := dev.Head()
		sealed[n] = time.Now()
	}
	h, hash = dev.Head()
	waitTipWithin(t, inst.base, int32(h), hash.Hex(), 10*time.Second, inst.logs)
	stopPoll()
	pollDone.Wait()

	// Heights the poller saw, as latencies from the block's sealing (the
	// poller may skip a height indexed between two polls).
	var lat []time.Duration
	for n, at := range sealed {
		if s, ok := seen[n]; ok {
			lat = append(lat, s.Sub(at))
		}
	}
	slices.Sort(lat)
	if len(lat) < blocks/2 {
		t.Fatalf("the index was seen at only %d of the %d heights: it did not follow block by block", len(lat), blocks)
	}
	median, worst := lat[len(lat)/2], lat[len(lat)-1]
	t.Logf("%s: %d blocks every %s, sealed-to-indexed latency median %s, worst %s (%d heights seen)", name, blocks, period, median.Round(time.Millisecond), worst.Round(time.Millisecond), len(lat))
	if median > 2*time.Second {
		t.Errorf("median latency %s at a %s block time: the index does not keep up", median, period)
	}
	waitStatus(t, inst.base, func(s *api.SystemInfo) bool { return s.Blockbook.MempoolSize == 0 })
	var a api.Address
	getJSON(t, inst.base+"/api/v2/address/"+to.Hex()+"?details=txids&pageSize=1000", 200, &a)
	if a.Txs != blocks || a.UnconfirmedTxs != 0 || a.Balance.String() != fmt.Sprint(blocks*1000+blocks*(blocks-1)/2) {
		t.Errorf("after %d blocks: %d txs, %d unconfirmed, balance %s", blocks, a.Txs, a.UnconfirmedTxs, a.Balance.String())
	}
	if net.chainID == 4663 {
		robinhoodGoldens(t, inst.base, to)
	}
}

// robinhoodGoldens samples Robinhood Chain's answers (testdata/eth, the
// wallet client's typings check them).
func robinhoodGoldens(t *testing.T, base string, to common.Address) {
	for name, path := range map[string]string{
		"status-robinhood":      "/api/v2",
		"address-robinhood-txs": "/api/v2/address/" + to.Hex() + "?details=txs&pageSize=2",
	} {
		var v any
		getJSON(t, base+path, 200, &v)
		goldenShape(t, "eth", "TestEVMRobinhoodFollow", name, v)
	}
	var info any
	newWS(t, base).ok("getInfo", nil, &info)
	goldenShape(t, "eth", "TestEVMRobinhoodFollow", "ws-getInfo-robinhood", info)
}
