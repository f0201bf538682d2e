package api

import (
	"encoding/hex"
	"slices"
	"testing"

	"github.com/openexplorer/blockbook/db/optional/runes/runestone"
)

// stoneTx is a tx answer whose outputs have the scripts.
func stoneTx(scripts ...[]byte) *Tx {
	tx := &Tx{Txid: "00"}
	for i, s := range scripts {
		tx.Vout = append(tx.Vout, Vout{N: i, Hex: hex.EncodeToString(s)})
	}
	return tx
}

// The explorer's runestone: decoded from the answer's output scripts, with
// the rune ids it names in order (mint first, then the edicts').
func TestDecodeRunestone(t *testing.T) {
	pay := []byte{0x00, 0x14, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}
	name, _ := runestone.ParseSpacedRune("UNCOMMON•GOODS")
	spacers, div, sym, ptr := name.Spacers, uint8(2), '⧉', uint32(1)
	premine, amount, capv, start := runestone.U64(12345), runestone.U64(100), runestone.U64(10), uint64(840_000)
	mint := runestone.RuneID{Block: 840_000, Tx: 3}
	stone := &runestone.Runestone{Pointer: &ptr, Mint: &mint,
		Etching: &runestone.Etching{Rune: &name.Rune, Spacers: &spacers, Divisibility: &div, Symbol: &sym, Premine: &premine, Turbo: true,
			Terms: &runestone.Terms{Amount: &amount, Cap: &capv, HeightStart: &start}},
		Edicts: []runestone.Edict{{ID: mint, Amount: runestone.U64(7), Output: 2}, {ID: runestone.RuneID{Block: 840_001, Tx: 1}, Amount: runestone.U64(0), Output: 3}}}

	if info, _ := decodeRunestone(stoneTx(pay, pay)); info != nil {
		t.Errorf("no runestone: %+v", info)
	}
	info, ids := decodeRunestone(stoneTx(pay, stone.Encipher(), pay))
	if info == nil || info.Cenotaph || info.Vout != 1 || info.Outputs != 3 || info.Pointer == nil || *info.Pointer != 1 {
		t.Fatalf("runestone: %+v", info)
	}
	e := info.Etching
	if e == nil || e.Name != "UNCOMMON•GOODS" || e.Symbol != "⧉" || e.Divisibility != 2 || e.Premine != "12345" || !e.Turbo ||
		e.Supply != "13345" || e.Terms == nil || e.Terms.Amount != "100" || e.Terms.Cap != "10" || *e.Terms.HeightStart != start {
		t.Errorf("etching: %+v terms %+v", e, e.Terms)
	}
	if info.Mint == nil || info.Mint.ID != "840000:3" {
		t.Errorf("mint: %+v", info.Mint)
	}
	want := []EdictInfo{{Rune: RuneRef{ID: "840000:3"}, Amount: "7", Output: 2}, {Rune: RuneRef{ID: "840001:1"}, Amount: "0", Output: 3, All: true, Split: true}}
	if !slices.Equal(info.Edicts, want) {
		t.Errorf("edicts %+v, want %+v", info.Edicts, want)
	}
	if !slices.Equal(ids, []runestone.RuneID{mint, mint, {Block: 840_001, Tx: 1}}) {
		t.Errorf("ids %v", ids)
	}

	// a cenotaph (an unknown even tag) keeps its mint
	var payload []byte
	for _, v := range []uint64{20, 840_000, 20, 3, 24, 1} { // mint 840000:3, and the unknown even tag 24
		payload = runestone.AppendVarint(payload, runestone.U64(v))
	}
	ceno := runestone.Script(payload)
	bad := runestone.Script([]byte{0x18, 0x01})
	for _, c := range []struct {
		script []byte
		mint   string
	}{{bad, ""}, {ceno, "840000:3"}} {
		info, _ := decodeRunestone(stoneTx(c.script, pay))
		if info == nil || !info.Cenotaph || info.Flaw == "" || (info.Mint == nil) != (c.mint == "") || info.Mint != nil && info.Mint.ID != c.mint {
			t.Errorf("cenotaph %x: %+v", c.script, info)
		}
	}
	if got := RuneDecimal("12345", 2); got != "123.45" {
		t.Errorf("RuneDecimal = %q", got)
	}
}
