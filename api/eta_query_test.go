package api_test

import (
	"context"
	"testing"

	"github.com/openexplorer/blockbook/tools/apitest"
)

// A pending tx carries Blockbook's confirmation ETA: with fewer than 32
// pending txs the next block, and that many mean block periods of the last
// 100 intervals; a confirmed tx carries none.
func TestPendingTxConfirmationETA(t *testing.T) {
	f := apitest.Shared(t, apitest.Options{Mempool: true})
	svc := newService(f)
	ctx := context.Background()
	tip := f.TipHeight()
	period := (f.Block(tip).Header.Timestamp.Unix() - f.Block(tip-101).Header.Timestamp.Unix()) / 100
	if period <= 0 || len(f.Pending) >= 32 {
		t.Fatalf("fixture: mean block period %d, %d pending txs", period, len(f.Pending))
	}
	tx, err := svc.Tx(ctx, f.PendingChild.TxHash().String())
	if err != nil {
		t.Fatal(err)
	}
	if tx.ConfirmationETABlocks != 1 || tx.ConfirmationETASeconds != period {
		t.Errorf("pending tx: ETA %d blocks, %d s; want 1, %d", tx.ConfirmationETABlocks, tx.ConfirmationETASeconds, period)
	}
	mined, err := svc.Tx(ctx, f.Block(112).Transactions[1].TxHash().String())
	if err != nil {
		t.Fatal(err)
	}
	if mined.ConfirmationETABlocks != 0 || mined.ConfirmationETASeconds != 0 {
		t.Errorf("confirmed tx: ETA %d blocks, %d s", mined.ConfirmationETABlocks, mined.ConfirmationETASeconds)
	}
}
