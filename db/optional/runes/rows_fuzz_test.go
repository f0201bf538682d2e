package runes

import (
	"bytes"
	"errors"
	"testing"

	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/db/optional/runes/runestone"
)

// FuzzRows: any bytes decode to a value or give ErrCorrupt, and a value
// that decodes encodes back to the same bytes (one encoding per value).
func FuzzRows(f *testing.F) {
	sym := 'ᚠ'
	hs := uint64(5)
	e := &Entry{ID: RuneID{Block: 840000, Tx: 3}, Number: 7, Rune: runestone.Rune(runestone.U64(99)), Spacers: 5, Divisibility: 2,
		Symbol: &sym, Premine: runestone.MaxU128, Terms: &runestone.Terms{Amount: u(1), HeightStart: &hs}, Turbo: true, Mints: *u(3), Timestamp: -1}
	f.Add(packEntry(e))
	f.Add(packEntry(&Entry{}))
	f.Add(packBalances([]Balance{{RuneID{Block: 1}, runestone.MaxU128}, {RuneID{Block: 840000, Tx: 9}, *u(5)}}))
	f.Add(packUndo([]undoRow{{key: []byte("ok"), old: []byte{1}}, {key: []byte("e"), old: nil}}))
	f.Add(packID(RuneID{Block: 1 << 40, Tx: 0xffffffff}))
	f.Add(packTxRunes([]OutputRunes{{Vout: 2, Balances: []Balance{{RuneID{Block: 9, Tx: 1}, *u(300)}}}}, []Balance{{RuneID{Block: 9, Tx: 1}, *u(10)}}))
	f.Add(packHolders(300))
	f.Fuzz(func(t *testing.T, v []byte) {
		check := func(err error, again func() []byte) {
			t.Helper()
			if err != nil {
				if !errors.Is(err, db.ErrCorrupt) {
					t.Fatalf("%x: error not ErrCorrupt: %v", v, err)
				}
				return
			}
			if b := again(); !bytes.Equal(b, v) {
				t.Fatalf("%x decodes to a value that encodes to %x", v, b)
			}
		}
		en, err := unpackEntry(v)
		check(err, func() []byte { return packEntry(en) })
		bs, err := unpackBalances(v)
		check(err, func() []byte { return packBalances(bs) })
		id, err := unpackID(v)
		check(err, func() []byte { return packID(id) })
		un, err := unpackUndo(v)
		check(err, func() []byte { return packUndo(un) })
		outs, burned, err := unpackTxRunes(v)
		check(err, func() []byte { return packTxRunes(outs, burned) })
		hn, err := unpackHolders(v)
		check(err, func() []byte { return packHolders(hn) })
	})
}
