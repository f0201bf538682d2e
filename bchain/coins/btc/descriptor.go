package btc

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/openexplorer/blockbook/bchain"
)

// Output descriptors (BIP380-386, BIP389) of single-key accounts: pkh(KEY),
// sh(wpkh(KEY)), wpkh(KEY) and tr(KEY), where KEY is an optional key origin
// [fingerprint/path] and an extended public key followed by the chains to
// derive: /<0;1>/* (BIP389), /{0,1}/* (Blockbook's older notation), /N/*, or
// nothing (receive and change). An appended #checksum is verified.

// descChecksumLen is the length of a BIP380 checksum.
const descChecksumLen = 8

// descInputCharset is BIP380's INPUT_CHARSET: the position of a character
// gives the symbols it contributes to the checksum.
const descInputCharset = "0123456789()[],'/*abcdefgh@:$%{}" +
	"IJKLMNOPQRSTUVWXYZ&+-.;<=>?!^_|~" +
	"ijklmnopqrstuvwxyzABCDEFGH`#\"\\ "

// descChecksumCharset is the alphabet of checksum characters.
const descChecksumCharset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"

// descPolymod is BIP380's checksum polynomial step over 5-bit symbols.
func descPolymod(c uint64, val int) uint64 {
	top := c >> 35
	c = (c&0x7ffffffff)<<5 ^ uint64(val)
	for i, g := range [5]uint64{0xf5dee51989, 0xa9fdca3312, 0x1bab10e32d, 0x3706b1677a, 0x644d626ffd} {
		if top>>i&1 == 1 {
			c ^= g
		}
	}
	return c
}

// DescriptorChecksum returns the BIP380 checksum of a descriptor (without
// its #checksum), or an error for characters outside the descriptor set.
func DescriptorChecksum(desc string) (string, error) {
	c := uint64(1)
	cls, clsCount := 0, 0
	for i := 0; i < len(desc); i++ {
		pos := strings.IndexByte(descInputCharset, desc[i])
		if pos < 0 {
			return "", fmt.Errorf("character %q at position %d is not allowed in a descriptor", desc[i], i)
		}
		c = descPolymod(c, pos&31)
		cls = cls*3 + pos>>5
		if clsCount++; clsCount == 3 {
			c = descPolymod(c, cls)
			cls, clsCount = 0, 0
		}
	}
	if clsCount > 0 {
		c = descPolymod(c, cls)
	}
	for range descChecksumLen {
		c = descPolymod(c, 0)
	}
	c ^= 1
	out := make([]byte, descChecksumLen)
	for i := range out {
		out[i] = descChecksumCharset[c>>(5*(7-i))&31]
	}
	return string(out), nil
}

// parsedDescriptor is the syntax of a supported descriptor.
type parsedDescriptor struct {
	scriptType bchain.XpubScriptType
	purpose    string // BIP number implied by the script type
	origin     string // the key origin's path as m/..., "" when absent
	key        string // the extended key
	changes    []uint32
}

// descriptorTypes maps a descriptor's opening to its script type, closing
// parentheses and implied purpose.
var descriptorTypes = []struct {
	open, close string
	st          bchain.XpubScriptType
	purpose     string
}{
	{"sh(wpkh(", "))", bchain.XpubP2SHP2WPKH, "49"},
	{"pkh(", ")", bchain.XpubP2PKH, "44"},
	{"wpkh(", ")", bchain.XpubP2WPKH, "84"},
	{"tr(", ")", bchain.XpubP2TR, "86"},
}

// invalidXpub returns a user-facing ErrInvalidXpub.
func invalidXpub(format string, args ...any) error {
	return fmt.Errorf("%w: %s", bchain.ErrInvalidXpub, fmt.Sprintf(format, args...))
}

// parseDescriptor checks the checksum (if any) and the syntax of a
// descriptor.
func parseDescriptor(s string) (*parsedDescriptor, error) {
	body := s
	if i := strings.IndexByte(s, '#'); i >= 0 {
		body = s[:i]
		sum := s[i+1:]
		if len(sum) != descChecksumLen {
			return nil, invalidXpub("descriptor checksum %q must be %d characters", sum, descChecksumLen)
		}
		want, err := DescriptorChecksum(body)
		if err != nil {
			return nil, invalidXpub("%v", err)
		}
		if sum != want {
			return nil, invalidXpub("descriptor checksum %q does not match the descriptor (computed %q)", sum, want)
		}
	} else if _, err := DescriptorChecksum(body); err != nil {
		return nil, invalidXpub("%v", err)
	}
	var d parsedDescriptor
	inner := ""
	for _, t := range descriptorTypes {
		if strings.HasPrefix(body, t.open) {
			if !strings.HasSuffix(body, t.close) {
				return nil, invalidXpub("descriptor %s…%s is not closed", t.open, t.close)
			}
			inner = body[len(t.open) : len(body)-len(t.close)]
			d.scriptType, d.purpose = t.st, t.purpose
			break
		}
	}
	if d.scriptType == 0 {
		name := body
		if i := strings.IndexByte(body, '('); i >= 0 {
			name = body[:i]
		}
		if strings.HasPrefix(body, "sh(") {
			name = "sh(" + strings.SplitN(body[3:], "(", 2)[0]
		}
		return nil, invalidXpub("descriptor %s() is not supported: use pkh(), sh(wpkh()), wpkh() or tr() of an extended public key", name)
	}
	if strings.ContainsAny(inner, "()") {
		return nil, invalidXpub("descriptor with several keys or scripts is not supported: use one extended public key")
	}
	if strings.HasPrefix(inner, "[") {
		end := strings.IndexByte(inner, ']')
		if end < 0 {
			return nil, invalidXpub("key origin is not closed with ]")
		}
		origin, err := parseKeyOrigin(inner[1:end])
		if err != nil {
			return nil, err
		}
		d.origin, inner = origin, inner[end+1:]
	}
	parts := strings.Split(inner, "/")
	d.key = parts[0]
	if strings.Contains(d.key, ",") {
		return nil, invalidXpub("descriptor with several keys or scripts is not supported: use one extended public key")
	}
	switch {
	case len(parts) == 1:
		d.changes = []uint32{0, 1}
	case len(parts) == 3 && parts[2] == "*":
		chains, err := parseChains(parts[1])
		if err != nil {
			return nil, err
		}
		d.changes = chains
	case strings.HasSuffix(inner, "*'") || strings.HasSuffix(inner, "*h") || strings.HasSuffix(inner, "*H"):
		return nil, invalidXpub("hardened derivation (*') cannot be done from a public key")
	default:
		return nil, invalidXpub("key path %q is not supported: use KEY/<0;1>/*, KEY/{0,1}/*, KEY/N/* or KEY alone", strings.TrimPrefix(inner, d.key))
	}
	return &d, nil
}

// parseKeyOrigin checks [fingerprint/path] and returns the path as m/….
func parseKeyOrigin(o string) (string, error) {
	steps := strings.Split(o, "/")
	if fp := steps[0]; len(fp) != 8 || strings.Trim(strings.ToLower(fp), "0123456789abcdef") != "" {
		return "", invalidXpub("key origin fingerprint %q must be 8 hex characters", fp)
	}
	path := "m"
	for _, st := range steps[1:] {
		hardened := ""
		if n := len(st); n > 0 && (st[n-1] == '\'' || st[n-1] == 'h' || st[n-1] == 'H') {
			st, hardened = st[:n-1], "'"
		}
		v, err := strconv.ParseUint(st, 10, 31)
		if err != nil {
			return "", invalidXpub("key origin step %q is not an index", st)
		}
		path += "/" + strconv.FormatUint(v, 10) + hardened
	}
	return path, nil
}

// parseChains reads the chain step of KEY/<chain>/*: one index, <a;b;…> or
// {a,b,…}, each an unhardened index, at most 16 of them.
func parseChains(s string) ([]uint32, error) {
	var items []string
	switch {
	case strings.HasPrefix(s, "<") && strings.HasSuffix(s, ">"):
		items = strings.Split(s[1:len(s)-1], ";")
	case strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}"):
		items = strings.Split(s[1:len(s)-1], ",")
	default:
		items = []string{s}
	}
	if len(items) > 16 {
		return nil, invalidXpub("too many chains in %q (at most 16)", s)
	}
	out := make([]uint32, 0, len(items))
	for _, it := range items {
		if strings.HasSuffix(it, "'") || strings.HasSuffix(it, "h") || strings.HasSuffix(it, "H") {
			return nil, invalidXpub("hardened chain %q cannot be derived from a public key", it)
		}
		v, err := strconv.ParseUint(it, 10, 31)
		if err != nil {
			return nil, invalidXpub("chain %q is not an index", it)
		}
		for _, seen := range out {
			if seen == uint32(v) {
				return nil, invalidXpub("chain %d is listed twice", v)
			}
		}
		out = append(out, uint32(v))
	}
	return out, nil
}
