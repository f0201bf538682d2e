package runestone

import "math"

const (
	opReturn = 0x6a
	// opMagic (OP_PUSHNUM_13) marks an OP_RETURN output as a runestone.
	opMagic     = 0x5d
	opPushdata1 = 0x4c
	opPushdata2 = 0x4d
	opPushdata4 = 0x4e
)

// IsOpReturn reports whether an output script starts with OP_RETURN (such
// outputs take no runes: runes sent there are burned).
func IsOpReturn(script []byte) bool { return len(script) > 0 && script[0] == opReturn }

// Decipher decodes the runestone of a tx given its output scripts: the
// first output that starts OP_RETURN OP_13. Nil means the tx has none.
func Decipher(outputs [][]byte) *Artifact {
	payload, flaw, found := findPayload(outputs)
	if !found {
		return nil
	}
	if flaw != FlawNone {
		return &Artifact{Cenotaph: &Cenotaph{Flaw: flaw}}
	}
	ints, err := integers(payload)
	if err != nil {
		return &Artifact{Cenotaph: &Cenotaph{Flaw: FlawVarint}}
	}
	return fromIntegers(ints, len(outputs))
}

// findPayload concatenates the pushes that follow OP_RETURN OP_13 in the
// first output so marked. Any other opcode, or a push running past the
// end, makes a cenotaph.
func findPayload(outputs [][]byte) (payload []byte, flaw Flaw, found bool) {
	for _, s := range outputs {
		if len(s) < 2 || s[0] != opReturn || s[1] != opMagic {
			continue
		}
		payload = []byte{}
		for i := 2; i < len(s); {
			_, data, next, ok := instruction(s, i)
			switch {
			case !ok:
				return nil, FlawInvalidScript, true
			case data == nil:
				return nil, FlawOpcode, true
			}
			payload = append(payload, data...)
			i = next
		}
		return payload, FlawNone, true
	}
	return nil, FlawNone, false
}

func integers(payload []byte) ([]U128, error) {
	var out []U128
	for i := 0; i < len(payload); {
		v, n, err := DecodeVarint(payload[i:])
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		i += n
	}
	return out, nil
}

// fields are the tag/value pairs before the body, each tag's values in
// order.
type fields map[U128][]U128

// take removes and returns the first n values of tag if there are n and
// check accepts them; otherwise it leaves them (an even tag left over
// makes a cenotaph).
func (f fields) take(tag uint64, n int, check func(v []U128) bool) []U128 {
	vs := f[U64(tag)]
	if len(vs) < n || !check(vs[:n]) {
		return nil
	}
	got := vs[:n:n]
	if len(vs) == n {
		delete(f, U64(tag))
	} else {
		f[U64(tag)] = vs[n:]
	}
	return got
}

func any1([]U128) bool { return true }

func fitsUint64(v []U128) bool { _, ok := v[0].Uint64(); return ok }

func (f fields) u128(tag uint64) *U128 {
	if v := f.take(tag, 1, any1); v != nil {
		return &v[0]
	}
	return nil
}

func (f fields) u64(tag uint64) *uint64 {
	if v := f.take(tag, 1, fitsUint64); v != nil {
		return &v[0].Lo
	}
	return nil
}

// fromIntegers reads the message: tag/value pairs up to the body tag, then
// edicts of four integers each.
func fromIntegers(ints []U128, nOutputs int) *Artifact {
	flaw := FlawNone
	setFlaw := func(f Flaw) {
		if flaw == FlawNone {
			flaw = f
		}
	}
	var edicts []Edict
	f := fields{}
	for i := 0; i < len(ints); i += 2 {
		tag := ints[i]
		if tag.IsZero() {
			edicts = readEdicts(ints[i+1:], nOutputs, setFlaw)
			break
		}
		if i+1 >= len(ints) {
			setFlaw(FlawTruncatedField)
			break
		}
		f[tag] = append(f[tag], ints[i+1])
	}

	var flags U128
	if v := f.u128(TagFlags); v != nil {
		flags = *v
	}
	takeFlag := func(bit uint) bool {
		mask := U128{Lo: 1 << bit}
		set := flags.Lo&mask.Lo != 0
		flags.Lo &^= mask.Lo
		return set
	}

	var etching *Etching
	if takeFlag(FlagEtching) {
		etching = readEtching(f, takeFlag)
	}
	var mint *RuneID
	if v := f.take(TagMint, 2, func(v []U128) bool {
		b, okB := v[0].Uint64()
		t, okT := v[1].Uint64()
		_, ok := newRuneID(b, t)
		return okB && okT && ok
	}); v != nil {
		id, _ := newRuneID(v[0].Lo, v[1].Lo)
		mint = &id
	}
	var pointer *uint32
	if v := f.take(TagPointer, 1, func(v []U128) bool {
		p, ok := v[0].Uint64()
		return ok && p <= math.MaxUint32 && p < uint64(nOutputs)
	}); v != nil {
		p := uint32(v[0].Lo)
		pointer = &p
	}

	if etching != nil {
		if _, ok := etching.Supply(); !ok {
			setFlaw(FlawSupplyOverflow)
		}
	}
	if !flags.IsZero() {
		setFlaw(FlawUnrecognizedFlag)
	}
	for tag := range f {
		if tag.Lo%2 == 0 {
			setFlaw(FlawUnrecognizedEvenTag)
			break
		}
	}
	if flaw != FlawNone {
		c := &Cenotaph{Flaw: flaw, Mint: mint}
		if etching != nil {
			c.Etching = etching.Rune
		}
		return &Artifact{Cenotaph: c}
	}
	return &Artifact{Runestone: &Runestone{Edicts: edicts, Etching: etching, Mint: mint, Pointer: pointer}}
}

func readEtching(f fields, takeFlag func(uint) bool) *Etching {
	e := &Etching{}
	if v := f.take(TagDivisibility, 1, func(v []U128) bool {
		d, ok := v[0].Uint64()
		return ok && d <= MaxDivisibility
	}); v != nil {
		d := uint8(v[0].Lo)
		e.Divisibility = &d
	}
	e.Premine = f.u128(TagPremine)
	if v := f.u128(TagRune); v != nil {
		r := Rune(*v)
		e.Rune = &r
	}
	if v := f.take(TagSpacers, 1, func(v []U128) bool {
		s, ok := v[0].Uint64()
		return ok && s <= MaxSpacers
	}); v != nil {
		s := uint32(v[0].Lo)
		e.Spacers = &s
	}
	if v := f.take(TagSymbol, 1, func(v []U128) bool {
		c, ok := v[0].Uint64()
		return ok && validChar(c)
	}); v != nil {
		c := rune(v[0].Lo)
		e.Symbol = &c
	}
	if takeFlag(FlagTerms) {
		e.Terms = &Terms{
			Cap:         f.u128(TagCap),
			HeightStart: f.u64(TagHeightStart),
			HeightEnd:   f.u64(TagHeightEnd),
			Amount:      f.u128(TagAmount),
			OffsetStart: f.u64(TagOffsetStart),
			OffsetEnd:   f.u64(TagOffsetEnd),
		}
	}
	e.Turbo = takeFlag(FlagTurbo)
	return e
}

// validChar reports whether c is a Unicode scalar value (not a surrogate,
// at most U+10FFFF).
func validChar(c uint64) bool {
	return c <= 0x10ffff && (c < 0xd800 || c > 0xdfff)
}

// readEdicts reads the body: four integers per edict (block delta, tx
// delta, amount, output). The first bad one stops the reading and flaws
// the runestone.
func readEdicts(ints []U128, nOutputs int, setFlaw func(Flaw)) []Edict {
	var edicts []Edict
	var id RuneID
	for i := 0; i < len(ints); i += 4 {
		if len(ints)-i < 4 {
			setFlaw(FlawTrailingIntegers)
			break
		}
		next, ok := id.next(ints[i], ints[i+1])
		if !ok {
			setFlaw(FlawEdictRuneID)
			break
		}
		out, ok := ints[i+3].Uint64()
		if !ok || out > uint64(nOutputs) || out > math.MaxUint32 {
			setFlaw(FlawEdictOutput)
			break
		}
		id = next
		edicts = append(edicts, Edict{ID: next, Amount: ints[i+2], Output: uint32(out)})
	}
	return edicts
}

// instruction reads the script instruction at i: its opcode, its pushed
// bytes (non-nil, maybe empty, for push opcodes; nil for any other) and
// where the next one starts. ok is false for a push running past the end.
func instruction(s []byte, i int) (op byte, data []byte, next int, ok bool) {
	op = s[i]
	i++
	var n int
	switch {
	case op <= 0x4b: // OP_0 (an empty push) and the direct pushes
		n = int(op)
	case op == opPushdata1, op == opPushdata2, op == opPushdata4:
		width := 1 << (op - opPushdata1) // 1, 2 or 4 length bytes
		if len(s)-i < width {
			return op, nil, 0, false
		}
		var l uint64
		for k := width - 1; k >= 0; k-- {
			l = l<<8 | uint64(s[i+k])
		}
		i += width
		if l > uint64(len(s)-i) {
			return op, nil, 0, false
		}
		n = int(l)
	default:
		return op, nil, i, true
	}
	if n > len(s)-i {
		return op, nil, 0, false
	}
	return op, s[i : i+n : i+n], i + n, true
}

// taprootAnnex starts the optional last witness element (BIP 341).
const taprootAnnex = 0x50

// Tapscript is the script a witness would reveal if it spent a taproot
// output by its script path: the element before the control block, after
// dropping an annex. It does not check that the spent output is taproot.
func Tapscript(witness [][]byte) []byte {
	n := len(witness)
	if n >= 3 && len(witness[n-1]) > 0 && witness[n-1][0] == taprootAnnex {
		return witness[n-3]
	}
	if n >= 2 {
		return witness[n-2]
	}
	return nil
}

// ScriptPushes calls fn with each push of a script, in order, until fn
// returns false or an instruction runs past the end.
func ScriptPushes(s []byte, fn func(push []byte) bool) {
	for i := 0; i < len(s); {
		_, data, next, ok := instruction(s, i)
		if !ok {
			return
		}
		if data != nil && !fn(data) {
			return
		}
		i = next
	}
}
