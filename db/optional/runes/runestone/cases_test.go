package runestone

import (
	"encoding/hex"
	"math/rand/v2"
)

func ptr[T any](v T) *T { return &v }

// payloadOf encodes integers as varints.
func payloadOf(ints ...uint64) []byte {
	var p []byte
	for _, v := range ints {
		p = AppendVarint(p, U64(v))
	}
	return p
}

// craftedCases are hand-made txs (output scripts): one per rule.
func craftedCases() [][][]byte {
	p2wpkh, _ := hex.DecodeString("0014" + "11223344556677889900aabbccddeeff00112233")
	name, _ := ParseRune("UNCOMMONGOODS")
	full := &Runestone{
		Etching: &Etching{Divisibility: ptr(uint8(2)), Premine: ptr(U64(5)), Rune: &name, Spacers: ptr(uint32(128)),
			Symbol: ptr('⧉'), Turbo: true, Terms: &Terms{Amount: ptr(U64(1)), Cap: ptr(U128{Hi: 1}),
				HeightStart: ptr(uint64(840000)), HeightEnd: ptr(uint64(1050000)), OffsetStart: ptr(uint64(1)), OffsetEnd: ptr(uint64(9))}},
		Mint: &RuneID{1, 0}, Pointer: ptr(uint32(1)),
		Edicts: []Edict{{RuneID{840000, 3}, U64(7), 1}, {RuneID{840000, 1}, U64(0), 2}, {RuneID{2, 9}, MaxU128, 0}},
	}
	maxVarint := AppendVarint(nil, MaxU128)
	overflow := append(append([]byte{}, maxVarint[:18]...), 0x04)
	overlong := append(append([]byte{}, maxVarint[:18]...), 0x80, 0x00)
	txs := [][][]byte{
		{full.Encipher(), p2wpkh},
		{full.Encipher(), p2wpkh, p2wpkh},
		{(&Runestone{Mint: &RuneID{840000, 5}}).Encipher(), p2wpkh},
		{(&Runestone{Etching: &Etching{}}).Encipher()},
		{p2wpkh},
		{{opReturn}},
		{{opReturn, 0x01, opMagic}},
		{{opReturn, opMagic}},
		{{opReturn, opMagic, 0x00, opPushdata1, 0x01, 0x02, 0x01}, p2wpkh}, // OP_0 and a non-minimal push
		{{opReturn, opMagic, opPushdata2, 0x02, 0x00, 0x16, 0x00}, p2wpkh},
		{{opReturn, opMagic, opPushdata4, 0x02, 0x00, 0x00, 0x00, 0x16, 0x00}, p2wpkh},
		{p2wpkh, Script(payloadOf(22, 0)), Script(payloadOf(99))}, // the first marked output counts
		{Script(maxVarint)},
		{Script(append(payloadOf(0, 1, 0), maxVarint...)), p2wpkh},
		// flaws
		{Script(payloadOf(0, 1, 0, 5, 3)), p2wpkh}, // edict output > outputs
		{Script(payloadOf(0, 1, 0, 5, 2)), p2wpkh}, // output == outputs: valid
		{Script(payloadOf(0, 0, 1, 5, 0)), p2wpkh}, // edict id 0:1
		{{opReturn, opMagic, 0x04, 0x02, 0x01}},    // push past the end
		{{opReturn, opMagic, opPushdata1}},         // missing length
		{{opReturn, opMagic, 0x01, 0x02, 0x51}},    // OP_1
		{{opReturn, opMagic, 0x6a}},                // OP_RETURN again
		{Script(append(payloadOf(2, 3, 6), append(maxVarint, append(payloadOf(8), append(maxVarint, payloadOf(10, 2)...)...)...)...))},
		{Script(payloadOf(0, 1, 0, 5))},     // trailing integers
		{Script(payloadOf(2))},              // truncated field
		{Script(payloadOf(24, 1))},          // unrecognized even tag
		{Script(payloadOf(25, 1)), p2wpkh},  // odd: ignored
		{Script(payloadOf(TagCenotaph, 0))}, // the cenotaph tag
		{Script(payloadOf(2, 8))},           // unrecognized flag
		{Script(append(payloadOf(2), AppendVarint(nil, U128{Hi: 1 << 63})...))},
		{Script([]byte{0xff})}, // unterminated varint
		{Script(overflow)},
		{Script(overlong)},
		{Script(payloadOf(2, 1, 2, 1))},                           // flags twice: even tag left
		{Script(payloadOf(2, 3, 1, 39, 3, 1<<27, 5, 0xd800))},     // out-of-range values stay as fields
		{Script(payloadOf(20, 0, 20, 1))},                         // mint 0:1
		{Script(payloadOf(22, 1)), p2wpkh},                        // pointer out of range
		{Script(payloadOf(2, 1, 4, 5, 20, 840000, 20, 3, 24, 0))}, // cenotaph keeping etching and mint
	}
	return txs
}

var knownTags = []uint64{0, 1, 2, 3, 4, 5, 6, 8, 10, 12, 14, 16, 18, 20, 22, 126, 127}

func randValue(rng *rand.Rand) U128 {
	switch rng.IntN(6) {
	case 0:
		return U64(rng.Uint64N(4))
	case 1:
		return U64(rng.Uint64N(300))
	case 2:
		return U64(rng.Uint64())
	case 3:
		return U128{Hi: rng.Uint64() >> rng.IntN(64), Lo: rng.Uint64()}
	case 4:
		return U64(rng.Uint64N(1 << 33))
	}
	return U64(rng.Uint64N(8))
}

// randomCases are random messages over the known tags, some damaged.
func randomCases(n int) [][][]byte {
	rng := rand.New(rand.NewPCG(43, 43))
	p2tr, _ := hex.DecodeString("5120" + "aa00000000000000000000000000000000000000000000000000000000000001")
	var txs [][][]byte
	for range n {
		var p []byte
		fields := rng.IntN(8)
		for range fields {
			tag := knownTags[rng.IntN(len(knownTags))]
			switch rng.IntN(10) {
			case 0:
				tag = rng.Uint64N(200)
			case 1, 2:
				tag = 2 // flags are what most rules hang on
			}
			if tag == 0 {
				continue
			}
			p = AppendVarint(p, U64(tag))
			v := randValue(rng)
			if tag == 2 {
				v = U64(rng.Uint64N(8) | 1)
			}
			p = AppendVarint(p, v)
		}
		if rng.IntN(2) == 0 {
			p = AppendVarint(p, U64(0))
			for range rng.IntN(4) * 4 {
				p = AppendVarint(p, U64(rng.Uint64N(3)))
			}
			if rng.IntN(4) == 0 {
				p = AppendVarint(p, randValue(rng))
			}
		}
		if rng.IntN(10) == 0 && len(p) > 0 {
			p[rng.IntN(len(p))] ^= byte(rng.IntN(256))
		}
		script := Script(p)
		if rng.IntN(20) == 0 {
			script = append(script, byte(0x51+rng.IntN(16)))
		}
		outs := [][]byte{script}
		for range rng.IntN(3) {
			outs = append(outs, p2tr)
		}
		if rng.IntN(4) == 0 {
			outs[0], outs[len(outs)-1] = outs[len(outs)-1], outs[0]
		}
		txs = append(txs, outs)
	}
	return txs
}

// judgeCases are the judged txs as hex scripts.
func judgeCases() [][]string {
	var out [][]string
	for _, tx := range append(craftedCases(), randomCases(600)...) {
		h := make([]string, len(tx))
		for i, s := range tx {
			h[i] = hex.EncodeToString(s)
		}
		out = append(out, h)
	}
	return out
}
