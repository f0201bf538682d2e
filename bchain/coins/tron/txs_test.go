package tron

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/tools/trondouble"
)

// A tx is found on the solidity node once solidified, on the full node
// before, in the pending pool before it is mined; unknown ones are
// ErrTxNotFound. The pending list is the pool's.
func TestTxLookupAndPending(t *testing.T) {
	n, c, _ := doubleChain(t, trondouble.Options{Seed: 6, SolidDepth: 4}, 10, 4)
	ctx := context.Background()
	pending := c.Pend(3)
	ids, err := n.MempoolTxids(ctx)
	if err != nil || len(ids) != 3 {
		t.Fatalf("pending %v %v", ids, err)
	}
	for i, p := range pending {
		if ids[i] != bchain.Hash(p.ID) {
			t.Errorf("pending %d: %s", i, ids[i])
		}
		nt, err := n.LookupTx(ctx, bchain.Hash(p.ID))
		if err != nil || nt.Info != nil || nt.Tx.TxID != bchain.Hash(p.ID).String() {
			t.Errorf("pending tx %x: %+v %v", p.ID, nt, err)
		}
	}
	c.Mine(1, 0)
	if ids, err := n.MempoolTxids(ctx); err != nil || len(ids) != 0 {
		t.Errorf("pending after mining: %v %v", ids, err)
	}
	solid := c.Solidified()
	checked := map[bool]bool{}
	for _, blk := range c.Blocks() {
		for _, tx := range blk.Txs {
			nt, err := n.LookupTx(ctx, bchain.Hash(tx.ID))
			if err != nil || nt.Info == nil || nt.Info.BlockNumber != blk.Number || nt.Solidified != (blk.Number <= solid) {
				t.Fatalf("tx %x in block %d (solid %d): %+v %v", tx.ID, blk.Number, solid, nt, err)
			}
			checked[nt.Solidified] = true
		}
	}
	if !checked[true] || !checked[false] {
		t.Errorf("lookups on one side only: %v", checked)
	}
	if !slices.Contains(c.Blocks()[len(c.Blocks())-1].Txs, pending[0]) {
		t.Error("the pending txs were not mined in the next block")
	}
	if _, err := n.LookupTx(ctx, bchain.Hash{1}); !errors.Is(err, bchain.ErrTxNotFound) {
		t.Errorf("unknown tx: %v", err)
	}
}
