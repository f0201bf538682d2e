package runes

import (
	"fmt"
	"slices"
	"testing"

	"github.com/openexplorer/blockbook/db/optional/runes/runestone"
)

func balStr(bs []Balance) string {
	s := ""
	for _, b := range bs {
		s += fmt.Sprintf("%s=%s ", b.ID, b.Amount)
	}
	return s
}

// Pending txs over the scenario's index: a transfer from a confirmed
// output, its pending child's cenotaph burning what the transfer gave it,
// a mint, and an etching whose premine has no id yet. Nothing is written.
func TestApplyPending(t *testing.T) {
	g, _, id := scenario()
	x := newIndex(t)
	connectAll(t, x, g.blocks)
	r := x.DB()
	next := uint32(len(g.blocks))
	held := Pos{Height: 8, Index: 1, Vout: 1} // the transfer's remainder: addr(1)'s 700
	bal, err := ReadOutput(r, held)
	if err != nil || balStr(bal) != id.String()+"=700 " {
		t.Fatalf("the scenario's output %+v: %v %v", held, balStr(bal), err)
	}
	two := uint32(2)
	stone := (&runestone.Runestone{Pointer: &two, Edicts: []runestone.Edict{{ID: id, Amount: runestone.U64(200), Output: 1}}}).Encipher()
	tr := Tx{Inputs: []Input{{Prev: held, PrevScript: addr(1)}}, Outputs: [][]byte{stone, addr(5), addr(6)}}
	got, err := ApplyPending(r, runestone.Regtest, next, 0, tr, map[Pos][]Balance{held: bal})
	if err != nil || got == nil {
		t.Fatalf("transfer: %+v %v", got, err)
	}
	if len(got.Outputs) != 2 || got.Outputs[0].Vout != 1 || balStr(got.Outputs[0].Balances) != id.String()+"=200 " ||
		got.Outputs[1].Vout != 2 || balStr(got.Outputs[1].Balances) != id.String()+"=500 " || len(got.Burned) != 0 {
		t.Errorf("transfer: outputs %+v burned %v", got.Outputs, balStr(got.Burned))
	}
	// its child spends output 2 (a pending position) into a cenotaph
	parent := Pos{Height: PendingHeight, Index: 0}
	child := Tx{Inputs: []Input{{Prev: parent}}, Outputs: [][]byte{addr(5), runestone.Script([]byte{0x18, 0x01})}}
	got, err = ApplyPending(r, runestone.Regtest, next, 0, child, map[Pos][]Balance{parent: got.Outputs[1].Balances})
	if err != nil || got == nil || len(got.Outputs) != 0 || balStr(got.Burned) != id.String()+"=500 " {
		t.Errorf("cenotaph child: %+v %v", got, err)
	}
	// a mint (two of the cap of 3 are confirmed) gets the terms' amount
	mint := Tx{Inputs: []Input{{Prev: Pos{Height: 1, Index: 1, Vout: 4}}}, Outputs: [][]byte{(&runestone.Runestone{Mint: &id}).Encipher(), addr(5)}}
	got, err = ApplyPending(r, runestone.Regtest, next, 0, mint, nil)
	if err != nil || got == nil || len(got.Outputs) != 1 || balStr(got.Outputs[0].Balances) != id.String()+"=10 " {
		t.Errorf("mint: %+v %v", got, err)
	}
	// an etching's premine: no id before a block holds it
	premine := runestone.U64(100)
	etch := Tx{Inputs: []Input{{Prev: Pos{Height: 1, Index: 1, Vout: 5}}}, Outputs: [][]byte{addr(5), (&runestone.Runestone{Etching: &runestone.Etching{Premine: &premine}}).Encipher()}}
	if got, err = ApplyPending(r, runestone.Regtest, next, 0, etch, nil); err != nil || got != nil {
		t.Errorf("etching: %+v %v, want nothing", got, err)
	}
	// nothing was written: the entry still counts two mints
	if e, err := ReadEntry(r, id); err != nil || e.Mints.Lo != 2 || e.Burned.Lo != 320 {
		t.Errorf("entry after pending txs: %+v %v", e, err)
	}
}

// The number rows: ord's pages seek to the numbers they list, newest
// first, and a disconnect removes the rows its block wrote.
func TestNumberRows(t *testing.T) {
	g := newGen()
	g.mine() // 1
	var ids []RuneID
	for b := range 3 {
		for i := range b + 1 {
			premine := runestone.U64(uint64(10*b + i + 1))
			g.tx(nil, nil, addr(1), (&runestone.Runestone{Etching: &runestone.Etching{Premine: &premine}}).Encipher())
			ids = append(ids, RuneID{Block: uint64(2 + b), Tx: uint32(i + 1)})
		}
		g.mine() // 2, 3, 4
	}
	x := newIndex(t)
	connectAll(t, x, g.blocks)
	r := x.DB()
	if n, err := ReadCount(r); err != nil || n != uint64(len(ids)) {
		t.Fatalf("count %d %v, want %d", n, err, len(ids))
	}
	for hi := range uint64(len(ids)) {
		for n := 1; n <= len(ids)+1; n++ {
			got, err := ReadIDsByNumber(r, hi, n)
			if err != nil {
				t.Fatal(err)
			}
			lo := max(int(hi)+1-n, 0)
			want := slices.Clone(ids[lo : hi+1])
			slices.Reverse(want)
			if !slices.Equal(got, want) {
				t.Errorf("numbers %d down, %d of them: %v, want %v", hi, n, got, want)
			}
		}
	}
	for i, id := range ids {
		if e, err := ReadEntry(r, id); err != nil || e.Number != uint64(i) {
			t.Errorf("rune %s: number %+v %v, want %d", id, e, err, i)
		}
	}
	if _, _, err := x.DisconnectTip(nil); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadIDsByNumber(r, uint64(len(ids)-1), len(ids)); err != nil || !slices.Equal(got, []RuneID{ids[2], ids[1], ids[0]}) {
		t.Errorf("after the disconnect of the block of runes 3 to 5: %v %v", got, err)
	}
}

// ReadHistoryPage reads in one pass the page ReadHistory reads with the
// clamped page's offset, for every page size and page, past the end too.
func TestReadHistoryPage(t *testing.T) {
	g, _, _ := scenario()
	x := newIndex(t)
	connectAll(t, x, g.blocks)
	r := x.DB()
	_, n, err := ReadHistory(r, addr(3), 0, 0)
	if err != nil || n < 3 {
		t.Fatalf("addr(3) has %d history rows (%v): the test proves little", n, err)
	}
	for size := 0; size <= n+1; size++ {
		pages := 1
		if size > 0 {
			pages = max((n+size-1)/size, 1)
		}
		for page := 0; page <= pages+2; page++ {
			got, total, err := ReadHistoryPage(r, addr(3), page, size)
			if err != nil || total != n {
				t.Fatalf("page %d of %d: %d rows, %v", page, size, total, err)
			}
			clamped := min(max(page, 1), pages)
			want, _, _ := ReadHistory(r, addr(3), (clamped-1)*size, size)
			if !slices.Equal(got, want) {
				t.Errorf("page %d of %d: %v, want %v", page, size, got, want)
			}
		}
	}
}
