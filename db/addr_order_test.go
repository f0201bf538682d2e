package db

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// An address's txs inside one block come back in Blockbook's order.
//
// Blockbook's connect (processAddressesBitcoinType) makes two passes over
// the block: first the outputs of every tx in block order, then the inputs
// of every tx in block order. Each time it meets the address it appends
// the tx to the address's list, or, when the tx is already there, only
// appends the index (addToAddressesMap). packTxIndexes then stores the
// list reversed ("for ordering from newest to oldest"), each tx's indexes
// as they are, and reads return the row as stored
// (GetAddrDescTransactions; its api's getAddressTxids neither sorts nor
// reverses).
//
// Block 1 below, seen from address X (tx0 is the coinbase):
//
//	tx1  spends X's output of block 0          (input 0)
//	tx2  pays X                                (output 0)
//	tx3  spends tx2's output, pays change to X (input 0, output 1)
//	tx4  spends tx3's change                   (input 0)
//	tx5  pays X twice, spends nothing of X     (outputs 0 and 2)
//
// Pass 1 (outputs): tx2 [0], tx3 [1], tx5 [0 2].
// Pass 2 (inputs):  tx1 new → appended [^0]; tx3 known → [1 ^0];
// tx4 new → appended [^0].
// The list tx2, tx3, tx5, tx1, tx4 is stored reversed, so Blockbook
// answers tx4, tx1, tx5, tx3, tx2, with tx3's indexes output 1 then
// input 0: the txs only spending from X newest first, then those paying
// to it newest first. (Newest first would be tx5, tx4, tx3, tx2, tx1;
// block order tx1 … tx5.)
func TestAddrTxsInBlockbookOrder(t *testing.T) {
	d := openTestDB(t)
	x := newTestIndex(t, d, 10, FilterParams{})
	X := []byte{0x00, 0x14, 'X'}
	Y := []byte{0x00, 0x14, 'Y'}
	b0 := &bchain.Block{BlockHeader: bchain.BlockHeader{Height: 0, Time: 1_600_000_000, Hash: synthHash("b0")}}
	cb0 := bchain.Tx{Txid: synthHash("cb0"), Vin: []bchain.Vin{{Coinbase: true}},
		Vout: []bchain.Vout{{Value: 5000, Script: X}, {Value: 5000, Script: Y}}}
	b0.Txs = []bchain.Tx{cb0}
	b1 := &bchain.Block{BlockHeader: bchain.BlockHeader{Height: 1, Time: 1_600_000_600, Hash: synthHash("b1"), Prev: b0.Hash}}
	tx := func(name string, ins []bchain.Vin, outs ...bchain.Vout) bchain.Tx {
		return bchain.Tx{Txid: synthHash(name), Vin: ins, Vout: outs}
	}
	in := func(txid bchain.Hash, vout uint32) []bchain.Vin {
		return []bchain.Vin{{PrevTxid: txid, PrevVout: vout}}
	}
	cb1 := tx("cb1", []bchain.Vin{{Coinbase: true}}, bchain.Vout{Value: 5000, Script: Y})
	tx1 := tx("tx1", in(cb0.Txid, 0), bchain.Vout{Value: 4000, Script: Y})
	tx2 := tx("tx2", in(cb0.Txid, 1), bchain.Vout{Value: 4000, Script: X})
	tx3 := tx("tx3", in(tx2.Txid, 0), bchain.Vout{Value: 1000, Script: Y}, bchain.Vout{Value: 2900, Script: X})
	tx4 := tx("tx4", in(tx3.Txid, 1), bchain.Vout{Value: 2800, Script: Y})
	tx5 := tx("tx5", in(cb1.Txid, 0), bchain.Vout{Value: 1000, Script: X}, bchain.Vout{Value: 1000, Script: Y}, bchain.Vout{Value: 1000, Script: X})
	b1.Txs = []bchain.Tx{cb1, tx1, tx2, tx3, tx4, tx5}
	connectAll(t, x, []*bchain.Block{b0, b1})

	type entry struct {
		txid    bchain.Hash
		indexes []int32
	}
	want := []entry{
		{tx4.Txid, []int32{^0}}, {tx1.Txid, []int32{^0}},
		{tx5.Txid, []int32{0, 2}}, {tx3.Txid, []int32{1, ^0}}, {tx2.Txid, []int32{0}},
	}
	var got []entry
	var heights []uint32
	err := IterateAddrTxs(d, X, ^uint32(0), 0, func(row AddrTxsAt) (bool, error) {
		heights = append(heights, row.Height)
		if row.Height == 1 {
			for _, t := range row.Txs {
				got = append(got, entry{t.Txid, t.Indexes})
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(heights, []uint32{1, 0}) {
		t.Errorf("rows at heights %v, want newest block first [1 0]", heights)
	}
	names := map[bchain.Hash]string{tx1.Txid: "tx1", tx2.Txid: "tx2", tx3.Txid: "tx3", tx4.Txid: "tx4", tx5.Txid: "tx5"}
	if len(got) != len(want) {
		t.Fatalf("%d txs in block 1, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].txid != want[i].txid || !slices.Equal(got[i].indexes, want[i].indexes) {
			t.Errorf("position %d: %s %v, want %s %v", i, names[got[i].txid], got[i].indexes, names[want[i].txid], want[i].indexes)
		}
	}

	// The places that order UTXOs: block order among X's txs of the block
	// (tx1 … tx5 → 0 … 4), for the txs paying an output pays accepts;
	// heights without a row (2) have none.
	all, err := AddrPayingTxs(d, X, []uint32{1}, func(int, uint32) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	named := func(txs []PayingTx) map[string]int32 {
		out := map[string]int32{}
		for _, t := range txs {
			out[names[t.Txid]] = t.Place
		}
		return out
	}
	// tx1 and tx4 pay X nothing; the others keep their places among all five.
	if got, want := named(all[0]), map[string]int32{"tx2": 1, "tx3": 2, "tx5": 4}; !maps.Equal(got, want) {
		t.Errorf("places of the txs paying X: %v, want %v", got, want)
	}
	paysOutput0 := func(i int, vout uint32) bool { return i == 0 && vout == 0 }
	paying, err := AddrPayingTxs(d, X, []uint32{1, 2}, paysOutput0)
	if err != nil {
		t.Fatal(err)
	}
	if len(paying) != 2 || len(paying[1]) != 0 {
		t.Fatalf("paying %v, want two heights, none at 2", paying)
	}
	if got, want := named(paying[0]), map[string]int32{"tx2": 1, "tx5": 4}; !maps.Equal(got, want) {
		t.Errorf("places of the txs paying output 0: %v, want %v", got, want)
	}
}

// AddrPayingTxs gives a tx's place per height: one txid at two heights
// (Bitcoin's duplicate coinbases, BIP30; here a fully spent tx repeated)
// has its own place in each block.
func TestAddrPayingTxsPerHeight(t *testing.T) {
	d := openTestDB(t)
	x := newTestIndex(t, d, 10, FilterParams{})
	X := []byte{0x00, 0x14, 'X'}
	Y := []byte{0x00, 0x14, 'Y'}
	tx := func(name string, ins []bchain.Vin, outs ...bchain.Vout) bchain.Tx {
		return bchain.Tx{Txid: synthHash(name), Vin: ins, Vout: outs}
	}
	in := func(txid bchain.Hash, vout uint32) []bchain.Vin {
		return []bchain.Vin{{PrevTxid: txid, PrevVout: vout}}
	}
	coinbase := []bchain.Vin{{Coinbase: true}}
	block := func(h uint32, prev *bchain.Block, txs ...bchain.Tx) *bchain.Block {
		b := &bchain.Block{BlockHeader: bchain.BlockHeader{Height: h, Time: 1_600_000_000 + int64(h)*600, Hash: synthHash(fmt.Sprint("b", h))}, Txs: txs}
		if prev != nil {
			b.Prev = prev.Hash
		}
		return b
	}
	cb0 := tx("cb0", coinbase, bchain.Vout{Value: 5000, Script: X})
	b0 := block(0, nil, cb0)
	// Block 1: dup pays X, s spends that at once (dup is fully spent).
	dup := tx("dup", in(cb0.Txid, 0), bchain.Vout{Value: 4000, Script: X})
	s := tx("s", in(dup.Txid, 0), bchain.Vout{Value: 3000, Script: Y})
	b1 := block(1, b0, tx("cb1", coinbase, bchain.Vout{Value: 5000, Script: Y}), dup, s)
	// Block 2: a pays X, then dup's txid again, second of X's txs.
	cb2 := tx("cb2", coinbase, bchain.Vout{Value: 5000, Script: Y})
	a := tx("a", in(b1.Txs[0].Txid, 0), bchain.Vout{Value: 4000, Script: X})
	dup2 := bchain.Tx{Txid: dup.Txid, Vin: in(a.Txid, 0), Vout: []bchain.Vout{{Value: 3000, Script: X}}}
	b2 := block(2, b1, cb2, a, dup2)
	connectAll(t, x, []*bchain.Block{b0, b1, b2})

	paying, err := AddrPayingTxs(d, X, []uint32{1, 2}, func(int, uint32) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	// s pays X nothing: only dup is kept at height 1.
	want := [][]PayingTx{{{dup.Txid, 0}}, {{dup.Txid, 1}, {a.Txid, 0}}}
	if !slices.EqualFunc(paying, want, slices.Equal) {
		t.Fatalf("paying %v, want %v", paying, want)
	}
}
