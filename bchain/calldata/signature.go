// Package calldata decodes the input data of Ethereum-type txs (contract
// calls) by 4-byte function selectors, as Blockbook's parsedData shows
// them: the signatures come from the index (the 4-byte directory and the
// ABIs of standard contracts, see Standard), the values from the ABI
// encoding of the call's arguments.
package calldata

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/sha3"
)

// MaxSignatureLen bounds a signature's text: longer ones are not kept.
const MaxSignatureLen = 2048

// ErrBadSignature is a text signature that is not name(type,...).
var ErrBadSignature = errors.New("invalid function signature")

// Signature is a function's name and the types of its parameters, as a
// canonical text signature spells them ("transfer(address,uint256)": a
// tuple parameter stays one "(…)" entry).
type Signature struct {
	Name   string
	Params []string
}

// ParseSignature reads a canonical text signature. The name must be an
// identifier and the types free of spaces, with balanced parentheses and
// brackets; types this package cannot decode are accepted (such a
// signature never matches a call, as in Blockbook).
func ParseSignature(text string) (Signature, error) {
	if len(text) > MaxSignatureLen {
		return Signature{}, fmt.Errorf("%w: %d bytes", ErrBadSignature, len(text))
	}
	open := strings.IndexByte(text, '(')
	if open <= 0 || !strings.HasSuffix(text, ")") || !isIdent(text[:open]) {
		return Signature{}, fmt.Errorf("%w: %q", ErrBadSignature, text)
	}
	s := Signature{Name: text[:open]}
	inner := text[open+1 : len(text)-1]
	if inner == "" {
		return s, nil
	}
	depth, bracket, start := 0, 0, 0
	for i := 0; i < len(inner); i++ {
		switch c := inner[i]; {
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == '[':
			bracket++
		case c == ']':
			bracket--
		case c == ',' && depth == 0 && bracket == 0:
			s.Params = append(s.Params, inner[start:i])
			start = i + 1
		case c == ',' || c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9':
		default:
			return Signature{}, fmt.Errorf("%w: character %q in %q", ErrBadSignature, c, text)
		}
		if depth < 0 || bracket < 0 || bracket > 1 {
			return Signature{}, fmt.Errorf("%w: %q", ErrBadSignature, text)
		}
	}
	s.Params = append(s.Params, inner[start:])
	if depth != 0 || bracket != 0 {
		return Signature{}, fmt.Errorf("%w: %q", ErrBadSignature, text)
	}
	for _, p := range s.Params {
		if p == "" {
			return Signature{}, fmt.Errorf("%w: empty parameter in %q", ErrBadSignature, text)
		}
	}
	return s, nil
}

func isIdent(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// Text is the canonical text signature.
func (s Signature) Text() string { return s.Name + "(" + strings.Join(s.Params, ",") + ")" }

// Function is the signature as Blockbook's parsedData.function shows it:
// the parameter types separated by ", ".
func (s Signature) Function() string { return s.Name + "(" + strings.Join(s.Params, ", ") + ")" }

// Selector is the first 4 bytes of the Keccak-256 of a text signature,
// as a big-endian number.
func Selector(text string) uint32 {
	h := sha3.NewLegacyKeccak256()
	h.Write([]byte(text))
	return binary.BigEndian.Uint32(h.Sum(nil))
}

// DisplayName is Blockbook's readable form of a function name: the first
// letter capitalized and a space before each capital that follows a
// lowercase letter or a digit (not the first letter), or that follows "ETH"
// ("addETHToContract" → "Add ETH To Contract").
func DisplayName(name string) string {
	var b strings.Builder
	split := false
	for i, r := range name {
		if i == 0 {
			// The first letter never allows a space after it (as Blockbook's).
			b.WriteString(strings.ToUpper(string(r)))
			continue
		}
		if split && r >= 'A' && r <= 'Z' {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
		split = r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || i >= 2 && name[i-2:i+1] == "ETH"
	}
	return b.String()
}
