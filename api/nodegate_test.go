package api_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/tools/apitest"
)

// downProbe is a liveness probe that has found the node unresponsive.
type downProbe struct{ info *bchain.ChainInfo }

func (downProbe) Check() error { return fmt.Errorf("frozen: %w", bchain.ErrNodeUnavailable) }

func (p downProbe) State() bchain.NodeLiveness {
	return bchain.NodeLiveness{Responding: false, Info: p.info, Err: "timeout"}
}

func (downProbe) WaitInfo(context.Context) {}

// With the probe saying the node is down, node-bound queries fail with
// ErrNodeUnavailable (the servers' 503) without reaching the node, the
// index keeps answering (an address summary), and status reports the node's error with empty
// node fields and inSync false.
func TestNodeGateFailsFast(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{})
	ctx := context.Background()
	up := newService(f)
	blk, err := up.Block(ctx, f.BlockHash(f.TipHeight()), 1, 1)
	if err != nil || len(blk.Txs) == 0 || len(blk.Txs[0].Vout) == 0 || len(blk.Txs[0].Vout[0].Addresses) == 0 {
		t.Fatalf("block with the node up: %+v %v", blk, err)
	}
	txid, addr := blk.Txs[0].Txid, blk.Txs[0].Vout[0].Addresses[0]
	raw, err := up.Capabilities().RawTxs.RawTx(ctx, txid)
	if err != nil {
		t.Fatal(err)
	}
	svc := newService(f, func(c *api.Config) { c.Node = downProbe{info: &bchain.ChainInfo{Chain: "regtest", Blocks: 1}} })
	if _, err := svc.Address(ctx, addr, api.AddressQuery{}); err != nil {
		t.Errorf("address summary with the node down: %v", err)
	}
	caps := svc.Capabilities()
	checks := map[string]error{}
	_, checks["sendtx"] = svc.SendTx(ctx, raw)
	_, checks["tx-specific"] = caps.TxSpecific.TxSpecific(ctx, txid)
	_, checks["estimatefee"] = caps.FeeEstimates.EstimateFee(ctx, 2, true)
	for name, err := range checks {
		if !errors.Is(err, bchain.ErrNodeUnavailable) {
			t.Errorf("%s with the node down: %v, want ErrNodeUnavailable", name, err)
		}
	}
	st, err := svc.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Backend.Error == "" || st.Backend.Chain != "" || st.Blockbook.InSync {
		t.Fatalf("status with the node down: backend %+v, inSync %v", st.Backend, st.Blockbook.InSync)
	}
}
