package db

import (
	"reflect"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// ReadManySpends gives every tx the spends ReadSpendsAt's prefix scan
// finds, over a synthetic chain where most outputs are spent, some in
// their own block.
func TestPageReadsMatchPerTxReads(t *testing.T) {
	chain := newSynthChain(11)
	for range 40 {
		chain.next("")
	}
	x := newTestIndex(t, openTestDB(t), 5, FilterParams{})
	connectAll(t, x, chain.blocks)
	var txids []bchain.Hash
	for _, b := range chain.blocks {
		for _, tx := range b.Txs {
			txids = append(txids, tx.Txid)
		}
	}
	absent := synthHash("not a tx")
	tas, err := ReadManyTxOutputs(x.db, append(txids, absent))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadManySpends(x.db, tas)
	if err != nil {
		t.Fatal(err)
	}
	if got[len(txids)] != nil {
		t.Errorf("spends of an absent tx: %v", got[len(txids)])
	}
	spent := 0
	for i, ta := range tas[:len(txids)] {
		want, err := ReadSpendsAt(x.db, ta.Height, ta.Index)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got[i], want) {
			t.Fatalf("tx %s: spends %v, want %v", txids[i], got[i], want)
		}
		spent += len(want)
	}
	if spent < len(txids)/2 {
		t.Fatalf("only %d spent outputs among %d txs: the chain tests little", spent, len(txids))
	}
}
