package db

import (
	"errors"
	"slices"
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
	b.del(CFBlockTxids, blockTxidKey(prev.Height, prev.Index/txidsPerRow))
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
	// Its inputs name the damaged tx's outputs by position.
	if _, err := ReadTxAddresses(x.db, spender.Txid); !errors.Is(err, ErrCorrupt) {
		t.Errorf("inputs over a missing position: %v", err)
	}
	if ta, err := ReadTxOutputs(x.db, spender.Txid); err != nil || ta == nil {
		t.Errorf("outputs of the spender: %v %v", ta, err)
	}
	if _, ok, err := ReadTxidAt(x.db, prev.Height, prev.Index); ok || err != nil {
		t.Errorf("ReadTxidAt of the removed row: %v %v", ok, err)
	}
}

// Address rows are read in batches of addrRowsBatch with no scan open while
// the caller's function runs; across batch boundaries every row comes once,
// newest first, within the height bounds, and stopping early stops.
func TestAddrRowsAcrossBatches(t *testing.T) {
	defer func(n int) { addrRowsBatch = n }(addrRowsBatch)
	addrRowsBatch = 3
	chain := newSynthChain(3)
	for i := 0; i < 40; i++ {
		chain.next("")
	}
	x := newTestIndex(t, openTestDB(t), 5, FilterParams{})
	connectAll(t, x, chain.blocks)
	// The descriptor with the most rows, and its heights straight from the
	// column family.
	heights := map[string][]uint32{}
	err := x.db.iterate(CFAddresses, nil, nil, func(k, _ []byte) (bool, error) {
		desc, h, err := unpackAddressesKey(k)
		heights[string(desc)] = append(heights[string(desc)], h)
		return true, err
	})
	if err != nil {
		t.Fatal(err)
	}
	var desc string
	for d, hs := range heights {
		if len(hs) > len(heights[desc]) {
			desc = d
		}
	}
	want := heights[desc]
	var got []uint32
	err = IterateAddrRows(x.db, bchain.AddrDesc(desc), func(h uint32, txs []AddrTx) (bool, error) {
		got = append(got, h)
		for _, tx := range txs {
			if id, _, _ := ReadTxidAt(x.db, h, tx.Index); tx.Txid != id || id == (bchain.Hash{}) {
				t.Fatalf("height %d tx %d: txid %s, blockTxids %s", h, tx.Index, tx.Txid, id)
			}
		}
		return true, nil
	})
	if err != nil || len(got) != len(want) {
		t.Fatalf("IterateAddrRows: %d rows, want %d (%v)", len(got), len(want), err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("IterateAddrRows heights %v, want %v", got, want)
	}
	// Bounded and stopped early: from the 2nd row's height down to the
	// last but one's, stopping after 2·batch+1 rows (into the third batch).
	from, to := want[1], want[len(want)-2]
	stop := 2*addrRowsBatch + 1
	if len(want) < stop+4 {
		t.Fatalf("busiest descriptor has %d rows, too few", len(want))
	}
	got = got[:0]
	err = IterateAddrTxs(x.db, bchain.AddrDesc(desc), from, to, func(row AddrTxsAt) (bool, error) {
		got = append(got, row.Height)
		return len(got) < stop, nil
	})
	if err != nil || !slices.Equal(got, want[1:1+stop]) {
		t.Fatalf("bounded scan stopped after %d: %v, want %v, err %v", stop, got, want[1:1+stop], err)
	}
	got = got[:0]
	err = IterateAddrTxPositions(x.db, bchain.AddrDesc(desc), from, to, func(row AddrTxsAt) (bool, error) {
		got = append(got, row.Height)
		return true, nil
	})
	if err != nil || !slices.Equal(got, want[1:len(want)-1]) {
		t.Fatalf("positions from %d to %d: %v, want %v, err %v", from, to, got, want[1:len(want)-1], err)
	}
	// Expecting some entries only sizes the first batch: every row still
	// comes once, in order, with the same entries.
	var all []AddrTxsAt
	if err := IterateAddrTxPositions(x.db, bchain.AddrDesc(desc), from, to, func(row AddrTxsAt) (bool, error) {
		all = append(all, row)
		return true, nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, expect := range []int{1, 2, 5, 17, 1000} {
		var rows []AddrTxsAt
		err = IterateAddrTxPositionsWant(x.db, bchain.AddrDesc(desc), from, to, expect, func(row AddrTxsAt) (bool, error) {
			rows = append(rows, row)
			return true, nil
		})
		if err != nil || !slices.EqualFunc(rows, all, func(a, b AddrTxsAt) bool {
			return a.Height == b.Height && slices.EqualFunc(a.Txs, b.Txs, func(x, y AddrTx) bool {
				return x.Index == y.Index && slices.Equal(x.Indexes, y.Indexes)
			})
		}) {
			t.Fatalf("expecting %d entries: %d rows, want %d (%v)", expect, len(rows), len(all), err)
		}
	}
}

// fillTxids resolves positions in any order, one or many at a time, and
// reports a position past the block's end as ErrCorrupt.
func TestFillTxids(t *testing.T) {
	chain := newSynthChain(5)
	for i := 0; i < 80; i++ {
		chain.next("")
	}
	x := newTestIndex(t, openTestDB(t), 5, FilterParams{})
	connectAll(t, x, chain.blocks)
	blk := chain.blocks[0]
	for _, b := range chain.blocks {
		if len(b.Txs) > len(blk.Txs) {
			blk = b
		}
	}
	n := uint32(len(blk.Txs))
	if n < 5 {
		t.Fatalf("largest block has %d txs", n)
	}
	for name, idx := range map[string][]uint32{
		"many, descending": {n - 1, n - 2, 2, 1, 0},
		"many, mixed":      {2, n - 1, 0, 1},
		"two":              {n - 1, 0},
		"one":              {1},
		"none":             {},
	} {
		txs := make([]AddrTx, len(idx))
		for i := range idx {
			txs[i].Index = idx[i]
		}
		if err := fillTxids(x.db, blk.Height, txs); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i := range txs {
			if txs[i].Txid != blk.Txs[idx[i]].Txid {
				t.Fatalf("%s: tx %d is %s, want %s", name, idx[i], txs[i].Txid, blk.Txs[idx[i]].Txid)
			}
		}
	}
	for name, idx := range map[string][]uint32{
		"many past the end": {n, n - 1, n - 2, n - 3},
		"one past the end":  {n},
	} {
		txs := make([]AddrTx, len(idx))
		for i := range idx {
			txs[i].Index = idx[i]
		}
		if err := fillTxids(x.db, blk.Height, txs); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

// A block of 150 txs spans three blockTxids rows (64, 64, 22 txids): every
// accessor finds each tx across the row boundaries, a position past the
// block's end is absent, and disconnecting the block removes its rows.
func TestBlockTxidsAcrossRows(t *testing.T) {
	const ntx = 150
	script := []byte{0x00, 0x14, 7, 7}
	cb0 := bchain.Tx{Txid: synthHash("cb", 0), Vin: []bchain.Vin{{Coinbase: true}}}
	for i := 0; i < ntx; i++ {
		cb0.Vout = append(cb0.Vout, bchain.Vout{Value: 1000, Script: []byte{0x00, 0x14, 1, byte(i)}})
	}
	b0 := &bchain.Block{BlockHeader: bchain.BlockHeader{Height: 0, Hash: synthHash("block", 0)}, Txs: []bchain.Tx{cb0}}
	b1 := &bchain.Block{BlockHeader: bchain.BlockHeader{Height: 1, Hash: synthHash("block", 1), Prev: b0.Hash}}
	b1.Txs = append(b1.Txs, bchain.Tx{Txid: synthHash("cb", 1), Vin: []bchain.Vin{{Coinbase: true}}, Vout: []bchain.Vout{{Value: 50, Script: script}}})
	for i := 1; i < ntx; i++ {
		b1.Txs = append(b1.Txs, bchain.Tx{Txid: synthHash("tx", 1, i), Vin: []bchain.Vin{{PrevTxid: cb0.Txid, PrevVout: uint32(i)}},
			Vout: []bchain.Vout{{Value: 900, Script: script}}})
	}
	x := newTestIndex(t, openTestDB(t), 5, FilterParams{})
	connectAll(t, x, []*bchain.Block{b0, b1})

	txids, err := ReadBlockTxids(x.db, 1)
	if err != nil || len(txids) != ntx {
		t.Fatalf("block txids: %d, %v", len(txids), err)
	}
	for i, id := range txids {
		if id != b1.Txs[i].Txid {
			t.Fatalf("tx %d is %s, want %s", i, id, b1.Txs[i].Txid)
		}
	}
	for _, i := range []uint32{0, 63, 64, 127, 128, ntx - 1, ntx, 191, 192, 1000} {
		id, ok, err := ReadTxidAt(x.db, 1, i)
		if err != nil || ok != (i < ntx) || (ok && id != b1.Txs[i].Txid) {
			t.Fatalf("tx %d: %s %v %v", i, id, ok, err)
		}
	}
	// The address history: every tx of block 1 pays the script.
	var got []bchain.Hash
	err = IterateAddrTxs(x.db, script, ^uint32(0), 0, func(row AddrTxsAt) (bool, error) {
		for _, tx := range row.Txs {
			got = append(got, tx.Txid)
		}
		return true, nil
	})
	if err != nil || len(got) != ntx {
		t.Fatalf("history: %d txs, %v", len(got), err)
	}
	for _, id := range got {
		if !slices.Contains(txids, id) {
			t.Fatalf("history names %s, not a tx of block 1", id)
		}
	}
	if err := fillTxids(x.db, 1, []AddrTx{{Index: 130}, {Index: ntx}}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a position past the end of the block's last row: %v", err)
	}
	if _, _, err := x.DisconnectTip(nil); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, x.db, CFBlockTxids); n != 1 {
		t.Fatalf("%d blockTxids rows after disconnecting block 1, want block 0's one", n)
	}
	b := x.db.NewBatch()
	defer b.Destroy()
	b.put(CFBlockTxids, blockTxidKey(0, 0), make([]byte, 33))
	if err := x.db.write(b); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadTxidAt(x.db, 0, 0); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a 33-byte blockTxids row: %v", err)
	}
	if err := fillTxids(x.db, 0, []AddrTx{{Index: 0}, {Index: 1}}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a 33-byte blockTxids row, read together: %v", err)
	}
}
