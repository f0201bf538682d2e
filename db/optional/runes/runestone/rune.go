package runestone

import (
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"unicode/utf8"
)

// Rune is a rune's name as a number: names count up in bijective base 26,
// A=0 … Z=25, AA=26, AB=27, and so on.
type Rune U128

// SubsidyHalvingInterval is Bitcoin's halving interval in blocks, which
// the runes protocol uses for its activation and its name unlocking on
// every network.
const SubsidyHalvingInterval = 210000

// unlocked is the name length free from the start; one length shorter is
// unlocked every unlockInterval blocks, over one halving period.
const (
	unlocked       = 12
	unlockInterval = SubsidyHalvingInterval / unlocked
)

// steps[i] is the first name of i+1 letters ("A" repeated i+1 times):
// the sum of 26^j for j in 1..i.
var steps = func() (s [28]U128) {
	p := U64(1)
	for i := 1; i < len(s); i++ {
		p, _ = p.Mul(U64(26))
		s[i], _ = s[i-1].Add(p)
	}
	return s
}()

// Reserved is the first reserved name (27 letters): etchings without a
// name get Reserved + (block<<32 | tx).
var Reserved = Rune(steps[26])

// ReservedRune is the name given to an unnamed etching at block:tx.
func ReservedRune(block uint64, tx uint32) Rune {
	v, _ := U128(Reserved).Add(U128{Hi: block >> 32, Lo: block<<32 | uint64(tx)})
	return Rune(v)
}

// IsReserved reports whether r is in the reserved range.
func (r Rune) IsReserved() bool { return U128(r).Cmp(U128(Reserved)) >= 0 }

// Network selects the activation height.
type Network int

const (
	Mainnet Network = iota
	Testnet3
	Testnet4
	Signet
	Regtest
)

// FirstRuneHeight is the first block whose runestones count: the fourth
// halving on mainnet (840000), the twelfth on testnet3, and the genesis
// elsewhere (testnet4, signet and regtest, as ord has it).
func FirstRuneHeight(n Network) uint32 {
	switch n {
	case Mainnet:
		return 4 * SubsidyHalvingInterval
	case Testnet3:
		return 12 * SubsidyHalvingInterval
	}
	return 0
}

// MinimumAtHeight is the smallest name an etching in a block of this
// height may take: 12 letters until activation, then the allowed length
// falls by one every unlockInterval blocks, sliding linearly through each
// length's range, until every name is open a halving period later.
func MinimumAtHeight(n Network, height uint32) Rune {
	offset := uint64(height) + 1
	start := uint64(FirstRuneHeight(n))
	end := start + SubsidyHalvingInterval
	if offset < start {
		return Rune(steps[unlocked])
	}
	if offset >= end {
		return Rune{}
	}
	progress := offset - start
	length := unlocked - progress/unlockInterval
	lo, hi := steps[length-1], steps[length]
	width, _ := hi.Sub(lo)
	scaled, _ := width.Mul(U64(progress % unlockInterval))
	q, _ := scaled.DivMod64(unlockInterval)
	v, _ := hi.Sub(q)
	return Rune(v)
}

// maxName is the name of 2^128-1, which the counting loop cannot reach.
const maxName = "BCGDENLQRQWDSLRUGSNLBTMFIJAV"

// String is the name in capital letters.
func (r Rune) String() string {
	n := U128(r)
	if n == MaxU128 {
		return maxName
	}
	n, _ = n.Add(U64(1))
	var rev []byte
	for !n.IsZero() {
		n, _ = n.Sub(U64(1))
		var d uint64
		n, d = n.DivMod64(26)
		rev = append(rev, byte('A'+d))
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return string(rev)
}

var errRuneRange = errors.New("rune name out of range")

// ParseRune reads a name of capital letters.
func ParseRune(s string) (Rune, error) {
	if s == "" {
		return Rune{}, errors.New("empty rune name")
	}
	var x U128
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 'A' || c > 'Z' {
			r, _ := utf8.DecodeRuneInString(s[i:])
			return Rune{}, fmt.Errorf("invalid character %q in rune name", r)
		}
		ok := true
		if i > 0 {
			x, ok = x.Add(U64(1))
		}
		var ok2, ok3 bool
		x, ok2 = x.Mul(U64(26))
		x, ok3 = x.Add(U64(uint64(c - 'A')))
		if !ok || !ok2 || !ok3 {
			return Rune{}, errRuneRange
		}
	}
	return Rune(x), nil
}

// Commitment is what an etching's input tapscript must push to commit to
// the name: its little-endian bytes without trailing zeros.
func (r Rune) Commitment() []byte {
	var b [16]byte
	for i := range 8 {
		b[i] = byte(r.Lo >> (8 * i))
		b[8+i] = byte(r.Hi >> (8 * i))
	}
	end := 16
	for end > 0 && b[end-1] == 0 {
		end--
	}
	return b[:end]
}

// SpacedRune is a name with its spacers: bit i set puts a • after the
// (i+1)th letter.
type SpacedRune struct {
	Rune    Rune
	Spacers uint32
}

// String is the name with • between the spaced letters.
func (s SpacedRune) String() string {
	name := s.Rune.String()
	var b strings.Builder
	for i := range len(name) {
		b.WriteByte(name[i])
		if i < len(name)-1 && i < 32 && s.Spacers&(1<<i) != 0 {
			b.WriteString("•")
		}
	}
	return b.String()
}

// ParseSpacedRune reads a name with • or . spacers.
func ParseSpacedRune(s string) (SpacedRune, error) {
	var name []byte
	var spacers uint32
	for _, c := range s {
		switch {
		case c >= 'A' && c <= 'Z':
			name = append(name, byte(c))
		case c == '.' || c == '•':
			if len(name) == 0 {
				return SpacedRune{}, errors.New("leading spacer in rune name")
			}
			if len(name) > 32 {
				return SpacedRune{}, errRuneRange
			}
			flag := uint32(1) << (len(name) - 1)
			if spacers&flag != 0 {
				return SpacedRune{}, errors.New("double spacer in rune name")
			}
			spacers |= flag
		default:
			return SpacedRune{}, fmt.Errorf("invalid character %q in rune name", c)
		}
	}
	if spacers != 0 && 32-bits.LeadingZeros32(spacers) >= len(name) {
		return SpacedRune{}, errors.New("trailing spacer in rune name")
	}
	r, err := ParseRune(string(name))
	if err != nil {
		return SpacedRune{}, err
	}
	return SpacedRune{Rune: r, Spacers: spacers}, nil
}
