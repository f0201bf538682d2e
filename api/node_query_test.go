package api_test

import (
	"context"
	"encoding/hex"
	"strconv"
	"testing"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/tools/apitest"
)

// Answers built from the index tip and the node: getInfo, status, fee
// estimates and sending.
func TestInfoAndStatus(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	svc := newService(f)
	ctx := context.Background()
	info, err := svc.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := api.WsInfo{Name: "Regtest", Shortcut: "rBTC", Network: "rBTC", Decimals: 8, Version: "test",
		BestHeight: uint32(f.TipHeight()), BestHash: f.BlockHash(f.TipHeight()), Block0Hash: f.BlockHash(0), Testnet: true,
		Backend: api.WsBackendInfo{Version: "260200", Subversion: "/apitest:0.1/"}}
	if *info != want {
		t.Fatalf("getInfo %+v\nwant %+v", *info, want)
	}
	st, err := svc.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if bb := st.Blockbook; bb.BestHeight != uint32(f.TipHeight()) || bb.Coin != "Regtest" || bb.Host != "apitest" || bb.InSyncMempool || bb.MempoolSize != 0 {
		t.Fatalf("status %+v", bb)
	}
	if be := st.Backend; be.Error != "" || be.Chain != "regtest" || be.Blocks != f.TipHeight() || be.BestBlockHash != f.BlockHash(f.TipHeight()) {
		t.Fatalf("status backend %+v", be)
	}
}

func TestFeeEstimates(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	svc := newService(f)
	ctx := context.Background()
	fees := svc.Capabilities().FeeEstimates
	r, err := fees.EstimateFee(ctx, 2, true)
	// FeeRate(2) = 11000 sat per 1000 vbytes = 0.00011 coins per kB.
	if err != nil || apitest.FeeRate(2) != 11000 || r.Result != "0.00011" {
		t.Fatalf("estimatefee 2: %+v %v", r, err)
	}
	for _, bad := range []string{"0", "-1", "1009", "x", ""} {
		_, err := api.ParseFeeBlocks(bad)
		wantUserError(t, err, "Invalid number of blocks")
	}
	est, err := fees.FeeEstimates(ctx, []int{1, 5}, api.FeeQuery{Conservative: true, TxSize: 250})
	if err != nil || len(est) != 2 {
		t.Fatalf("estimateFee: %+v %v", est, err)
	}
	for i, b := range []int{1, 5} {
		rate := apitest.FeeRate(b)
		if est[i].FeePerUnit != strconv.FormatInt(rate, 10) || est[i].FeePerTx != strconv.FormatInt((rate*250+500)/1000, 10) {
			t.Errorf("estimateFee %d blocks: %+v", b, est[i])
		}
	}
	wantUserError(t, svc.CheckFeeTargets([]int{0}), "Invalid number of blocks")
}

func TestSendTx(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	svc := newService(f)
	ctx := context.Background()
	confirmed := f.Block(112).Transactions[1]
	fresh := confirmed.Copy()
	fresh.LockTime++ // a tx the node has not seen (it does not verify scripts)
	sent := len(f.Node.Sent())
	r, err := svc.SendTx(ctx, " "+hex.EncodeToString(serialized(t, fresh))+"\n")
	if err != nil || r.Result != fresh.TxHash().String() || len(f.Node.Sent()) != sent+1 {
		t.Fatalf("sendtx: %+v %v", r, err)
	}
	for _, tc := range []struct{ hex, msg string }{
		{hex.EncodeToString(serialized(t, confirmed)), "Transaction already in block chain"},
		{hex.EncodeToString(serialized(t, f.PendingChild)), "txn-already-in-mempool"},
		{"", "Missing tx blob"},
		{"zz", "Invalid transaction hex"},
		{"00", "Invalid transaction"},
	} {
		_, err := svc.SendTx(ctx, tc.hex)
		wantUserError(t, err, tc.msg)
	}
}
