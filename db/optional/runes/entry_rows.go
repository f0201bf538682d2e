package runes

import (
	"encoding/binary"

	"github.com/openexplorer/blockbook/db/optional/runes/runestone"
)

// entry = uv(block) ‖ uv(tx) ‖ etching txid ‖ uv(number) ‖ v128(rune) ‖
// uv(spacers) ‖ u8(divisibility) ‖ uv(symbol + 1, 0 for none) ‖
// v128(premine) ‖ u8(flags) ‖ terms ‖ v128(mints) ‖ v128(burned) ‖
// sv(timestamp). flags: bit 0 turbo, bit 1 terms, bits 2..7 which terms
// follow (amount, cap as v128; height start, height end, offset start,
// offset end as uv), in that order.
const (
	flagTurbo = 1 << 0
	flagTerms = 1 << 1
	termsBit0 = 2
)

func packEntry(e *Entry) []byte {
	v := packID(e.ID)
	v = append(v, e.Etching[:]...)
	v = binary.AppendUvarint(v, e.Number)
	v = runestone.AppendVarint(v, runestone.U128(e.Rune))
	v = binary.AppendUvarint(v, uint64(e.Spacers))
	v = append(v, e.Divisibility)
	var sym uint64
	if e.Symbol != nil {
		sym = uint64(*e.Symbol) + 1
	}
	v = binary.AppendUvarint(v, sym)
	v = runestone.AppendVarint(v, e.Premine)
	var flags byte
	if e.Turbo {
		flags |= flagTurbo
	}
	var terms []byte
	if t := e.Terms; t != nil {
		flags |= flagTerms
		bit := termsBit0
		for _, x := range []*U128{t.Amount, t.Cap} {
			if x != nil {
				flags |= 1 << bit
				terms = runestone.AppendVarint(terms, *x)
			}
			bit++
		}
		for _, x := range []*uint64{t.HeightStart, t.HeightEnd, t.OffsetStart, t.OffsetEnd} {
			if x != nil {
				flags |= 1 << bit
				terms = binary.AppendUvarint(terms, *x)
			}
			bit++
		}
	}
	v = append(append(v, flags), terms...)
	v = runestone.AppendVarint(v, e.Mints)
	v = runestone.AppendVarint(v, e.Burned)
	return binary.AppendVarint(v, e.Timestamp)
}

func unpackEntry(v []byte) (*Entry, error) {
	r := &reader{b: v}
	e := &Entry{ID: RuneID{Block: r.uv(), Tx: r.u32()}}
	copy(e.Etching[:], r.bytes(32))
	e.Number = r.uv()
	e.Rune = runestone.Rune(r.v128())
	e.Spacers = r.u32()
	if d := r.bytes(1); d != nil {
		e.Divisibility = d[0]
	}
	if sym := r.uv(); sym != 0 {
		c := rune(sym - 1)
		if sym-1 > 0x10ffff {
			r.err = corrupt("symbol")
		}
		e.Symbol = &c
	}
	e.Premine = r.v128()
	var flags byte
	if f := r.bytes(1); f != nil {
		flags = f[0]
	}
	e.Turbo = flags&flagTurbo != 0
	if flags&flagTerms != 0 {
		t := &runestone.Terms{}
		bit := termsBit0
		for _, x := range []**U128{&t.Amount, &t.Cap} {
			if flags&(1<<bit) != 0 {
				v := r.v128()
				*x = &v
			}
			bit++
		}
		for _, x := range []**uint64{&t.HeightStart, &t.HeightEnd, &t.OffsetStart, &t.OffsetEnd} {
			if flags&(1<<bit) != 0 {
				v := r.uv()
				*x = &v
			}
			bit++
		}
		e.Terms = t
	} else if flags&^flagTurbo != 0 {
		r.err = corrupt("entry flags")
	}
	e.Mints = r.v128()
	e.Burned = r.v128()
	if r.err == nil {
		ts, n := binary.Varint(r.b)
		if n <= 0 || n != len(binary.AppendVarint(nil, ts)) {
			r.err = corrupt("timestamp")
		} else {
			e.Timestamp, r.b = ts, r.b[n:]
		}
	}
	return e, r.done()
}
