package api

import (
	"slices"
	"testing"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/memdb"
)

// scriptDescs classifies every script as its own descriptor.
type scriptDescs struct{}

func (scriptDescs) OutputAddrDesc(script []byte) bchain.AddrDesc { return script }

// blockPlaces gives each output, listed as the index lists them, its tx's
// place among the address's txs of the block, and 0 in a block whose
// outputs are all one tx's.
func TestBlockPlaces(t *testing.T) {
	d, err := memdb.Open(db.Options{Path: t.TempDir(), ChainType: bchain.ChainBitcoinType, Coin: "Test", Network: "test"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	x, err := db.NewUtxoIndex(d, scriptDescs{}, 10, db.FilterParams{})
	if err != nil {
		t.Fatal(err)
	}
	X, Y := bchain.AddrDesc("X-script"), bchain.AddrDesc("Y-script")
	hash := func(s string) bchain.Hash {
		var h bchain.Hash
		copy(h[:], s)
		return h
	}
	coinbase := []bchain.Vin{{Coinbase: true}}
	b0 := &bchain.Block{BlockHeader: bchain.BlockHeader{Height: 0, Time: 1_600_000_000, Hash: hash("b0")}}
	b0.Txs = []bchain.Tx{{Txid: hash("cb0"), Vin: coinbase, Vout: slices.Repeat([]bchain.Vout{{Value: 50, Script: Y}}, 5)}}
	// Block 1: X is paid by txs at block positions 1..5 (places 0..4),
	// at output indexes 0, 70 (past a 64-bit set) and 1; named so that
	// txid order differs from block order.
	b1 := &bchain.Block{BlockHeader: bchain.BlockHeader{Height: 1, Time: 1_600_000_600, Hash: hash("b1"), Prev: b0.Hash}}
	b1.Txs = []bchain.Tx{{Txid: hash("cb1"), Vin: coinbase, Vout: []bchain.Vout{{Value: 50, Script: Y}}}}
	names := []string{"t5", "t1", "t4", "t2", "t3"}
	for i, n := range names {
		outs := make([]bchain.Vout, 71)
		for k := range outs {
			outs[k] = bchain.Vout{Value: 1, Script: Y}
		}
		outs[0].Script, outs[70].Script, outs[1].Script = X, X, X
		if i%2 == 1 {
			outs[0].Script = Y
		}
		b1.Txs = append(b1.Txs, bchain.Tx{Txid: hash(n), Vin: []bchain.Vin{{PrevTxid: hash("cb0"), PrevVout: uint32(i)}}, Vout: outs})
	}
	// Block 2: one tx pays X twice.
	b2 := &bchain.Block{BlockHeader: bchain.BlockHeader{Height: 2, Time: 1_600_001_200, Hash: hash("b2"), Prev: b1.Hash}}
	b2.Txs = []bchain.Tx{{Txid: hash("cb2"), Vin: coinbase, Vout: []bchain.Vout{{Value: 50, Script: X}, {Value: 50, Script: X}}}}
	for _, b := range []*bchain.Block{b0, b1, b2} {
		if err := x.ConnectBlock(b); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := d.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	v := &view{snap: snap}
	var us []db.Utxo
	if err := db.IterateUtxos(snap, X, func(u *db.Utxo) (bool, error) { us = append(us, *u); return true, nil }); err != nil {
		t.Fatal(err)
	}
	if len(us) != 3*3+2*2+2 {
		t.Fatalf("%d outputs of X, want 15", len(us))
	}
	place := map[string]int32{"t5": 0, "t1": 1, "t4": 2, "t2": 3, "t3": 4, "cb2": 0}
	got, err := blockPlaces(v, X, us, utxoRef)
	if err != nil {
		t.Fatal(err)
	}
	for i, u := range us {
		name := string(u.Txid[:3])
		if name[2] == 0 {
			name = name[:2]
		}
		if got[i] != place[name] {
			t.Errorf("%s:%d at place %d, want %d", name, u.Vout, got[i], place[name])
		}
	}
}
