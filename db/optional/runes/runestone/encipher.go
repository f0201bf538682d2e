package runestone

import "sort"

// Encipher builds the OP_RETURN OP_13 script of a runestone: its fields,
// then its edicts sorted by id and delta-encoded, in pushes of at most
// 520 bytes (the standard push limit).
func (r *Runestone) Encipher() []byte {
	var p []byte
	put := func(tag uint64, v U128) {
		p = AppendVarint(p, U64(tag))
		p = AppendVarint(p, v)
	}
	putOpt := func(tag uint64, v *U128) {
		if v != nil {
			put(tag, *v)
		}
	}
	putOpt64 := func(tag uint64, v *uint64) {
		if v != nil {
			put(tag, U64(*v))
		}
	}
	if e := r.Etching; e != nil {
		flags := uint64(1) << FlagEtching
		if e.Terms != nil {
			flags |= 1 << FlagTerms
		}
		if e.Turbo {
			flags |= 1 << FlagTurbo
		}
		put(TagFlags, U64(flags))
		if e.Rune != nil {
			put(TagRune, U128(*e.Rune))
		}
		if e.Divisibility != nil {
			put(TagDivisibility, U64(uint64(*e.Divisibility)))
		}
		if e.Spacers != nil {
			put(TagSpacers, U64(uint64(*e.Spacers)))
		}
		if e.Symbol != nil {
			put(TagSymbol, U64(uint64(*e.Symbol)))
		}
		putOpt(TagPremine, e.Premine)
		if t := e.Terms; t != nil {
			putOpt(TagAmount, t.Amount)
			putOpt(TagCap, t.Cap)
			putOpt64(TagHeightStart, t.HeightStart)
			putOpt64(TagHeightEnd, t.HeightEnd)
			putOpt64(TagOffsetStart, t.OffsetStart)
			putOpt64(TagOffsetEnd, t.OffsetEnd)
		}
	}
	if r.Mint != nil {
		p = AppendVarint(p, U64(TagMint))
		p = AppendVarint(p, U64(r.Mint.Block))
		p = AppendVarint(p, U64(TagMint))
		p = AppendVarint(p, U64(uint64(r.Mint.Tx)))
	}
	if r.Pointer != nil {
		put(TagPointer, U64(uint64(*r.Pointer)))
	}
	if len(r.Edicts) > 0 {
		p = AppendVarint(p, U64(TagBody))
		edicts := append([]Edict(nil), r.Edicts...)
		sort.SliceStable(edicts, func(i, j int) bool { return edicts[i].ID.less(edicts[j].ID) })
		var prev RuneID
		for _, e := range edicts {
			db := e.ID.Block - prev.Block
			dt := uint64(e.ID.Tx)
			if db == 0 {
				dt -= uint64(prev.Tx)
			}
			p = AppendVarint(p, U64(db))
			p = AppendVarint(p, U64(dt))
			p = AppendVarint(p, e.Amount)
			p = AppendVarint(p, U64(uint64(e.Output)))
			prev = e.ID
		}
	}
	return Script(p)
}

// Script wraps a payload as OP_RETURN OP_13 and pushes of at most 520
// bytes.
func Script(payload []byte) []byte {
	s := []byte{opReturn, opMagic}
	for len(payload) > 0 {
		n := min(len(payload), 520)
		switch {
		case n <= 0x4b:
			s = append(s, byte(n))
		case n <= 0xff:
			s = append(s, opPushdata1, byte(n))
		default:
			s = append(s, opPushdata2, byte(n), byte(n>>8))
		}
		s = append(s, payload[:n]...)
		payload = payload[n:]
	}
	return s
}

func (id RuneID) less(o RuneID) bool {
	return id.Block < o.Block || (id.Block == o.Block && id.Tx < o.Tx)
}
