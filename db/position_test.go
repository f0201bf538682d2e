package db

import (
	"errors"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// A position another row names but blockTxids lacks is damage: the readers
// that resolve positions (address history, spends, undo data) report
// ErrCorrupt instead of serving a zero txid, and disconnecting the block
// refuses without changing the index.
func TestMissingPositionIsCorrupt(t *testing.T) {
	chain := newSynthChain(7)
	for i := 0; i < 12; i++ {
		chain.next("")
	}
	x := newTestIndex(t, openTestDB(t), 5, FilterParams{})
	connectAll(t, x, chain.blocks)
	tip := chain.blocks[len(chain.blocks)-1]
	// A tip tx that spends an output of an earlier block, and that output's
	// descriptor, whose history names the creating tx by position.
	var spender *bchain.Tx
	var prev *TxAddresses
	for i := range tip.Txs {
		tx := &tip.Txs[i]
		if tx.IsCoinbase() {
			continue
		}
		ta, err := ReadTxAddresses(x.db, tx.Vin[0].PrevTxid)
		if err != nil {
			t.Fatal(err)
		}
		if ta != nil && ta.Height < tip.Height && len(ta.Outputs[tx.Vin[0].PrevVout].Desc) > 0 {
			spender, prev = tx, ta
			break
		}
	}
	if spender == nil {
		t.Fatal("the chain's tip spends nothing from earlier blocks")
	}
	desc := prev.Outputs[spender.Vin[0].PrevVout].Desc
	b := x.db.NewBatch()
	b.del(CFBlockTxids, blockTxidKey(prev.Height, prev.Index))
	if err := x.db.write(b); err != nil {
		t.Fatal(err)
	}
	b.Destroy()
	before, _, err := ReadTip(x.db)
	if err != nil {
		t.Fatal(err)
	}

	err = IterateAddrTxs(x.db, desc, ^uint32(0), 0, func(AddrTxsAt) (bool, error) { return true, nil })
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("address history over a missing position: %v", err)
	}
	if err := IterateAddrTxPositions(x.db, desc, ^uint32(0), 0, func(AddrTxsAt) (bool, error) { return true, nil }); err != nil {
		t.Errorf("positions alone need no txid: %v", err)
	}
	if _, err := ReadBlockUndo(x.db, tip.Height); !errors.Is(err, ErrCorrupt) {
		t.Errorf("undo data over a missing position: %v", err)
	}
	if _, _, err := x.DisconnectTip(chain.refill); !errors.Is(err, ErrCorrupt) {
		t.Errorf("disconnect over a missing position: %v", err)
	}
	if after, _, err := ReadTip(x.db); err != nil || after != before {
		t.Errorf("failed disconnect moved the tip: %v %v", after, err)
	}
	// The spender's own position is intact, so its spend still resolves;
	// spends of the damaged tx's outputs name the spender, not the tx.
	if _, err := ReadSpends(x.db, spender.Txid); err != nil {
		t.Errorf("spends of an intact tx: %v", err)
	}
	if _, ok, err := ReadTxidAt(x.db, prev.Height, prev.Index); ok || err != nil {
		t.Errorf("ReadTxidAt of the removed row: %v %v", ok, err)
	}
}
