package runes

import (
	"testing"

	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/optional/runes/runestone"
)

// runesBytes sums the keys and values of the runes family, and those of
// the undo rows.
func runesBytes(t *testing.T, x *db.UtxoIndex) (all, undo int64) {
	t.Helper()
	err := db.Iterate(x.DB(), db.CFRunes, nil, nil, func(k, v []byte) (bool, error) {
		all += int64(len(k) + len(v))
		if k[0] == kindUndo {
			undo += int64(len(k) + len(v))
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return all, undo
}

// The runes family's growth per block when an address holding n runes is
// touched every block (a custodial address): the address row holds all n,
// a touch rewrites it, and the block's undo row keeps the old one, for
// good. docs/performance.md ("Runes rows") quotes the figures:
// go test -v -run TestRowGrowthPerTouchedBlock ./db/optional/runes/
func TestRowGrowthPerTouchedBlock(t *testing.T) {
	for _, n := range []int{10, 1000} {
		g := newGen()
		var funds []outpoint
		for range n {
			funds = append(funds, g.tx(nil, nil, addr(2))...)
		}
		g.mine() // 1
		premine := runestone.U64(2_100_000_000_000_000)
		var held []outpoint // an output of addr(1) holding one rune each
		for _, f := range funds {
			et := &runestone.Runestone{Etching: &runestone.Etching{Premine: &premine}} // unnamed: a reserved name
			held = append(held, g.tx([]outpoint{f}, nil, addr(1), et.Encipher())[0])
		}
		g.mine() // 2: addr(1) holds n runes
		touched := min(20, n)
		for i := range touched {
			g.tx(held[i:i+1], nil, addr(1)) // the rune moves to a new output of the same address
			g.mine()
		}
		x := newIndex(t)
		connectAll(t, x, g.blocks[:3])
		row, err := db.Get(x.DB(), db.CFRunes, addressKey(addr(1)))
		if err != nil || row == nil {
			t.Fatalf("address row: %v", err)
		}
		before, undoBefore := runesBytes(t, x)
		connectAll(t, x, g.blocks[3:])
		after, undoAfter := runesBytes(t, x)
		perBlock := (after - before) / int64(touched)
		t.Logf("%d runes at the address: address row %d B (%.1f B a rune), growth %d B a touched block, of which undo rows %d B",
			n, len(row), float64(len(row))/float64(n), perBlock, (undoAfter-undoBefore)/int64(touched))
		// Each touch keeps the whole old row in the block's undo row.
		if perBlock < int64(len(row)) {
			t.Fatalf("growth %d B a block, below the address row's %d B", perBlock, len(row))
		}
	}
	// The same row with mainnet-sized ids (etched from 840,000 on).
	var bs []Balance
	for i := range 1000 {
		bs = append(bs, Balance{ID: RuneID{Block: 840_000 + uint64(i)*50, Tx: uint32(i % 3000)}, Amount: runestone.U64(2_100_000_000_000_000)})
	}
	t.Logf("1000 runes with mainnet ids: address row %d B", len(packBalances(bs)))
}
