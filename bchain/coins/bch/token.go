package bch

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
)

// CashTokens (CHIP-2022-02): an output's script may start with a token
// prefix, PREFIX_TOKEN (0xef), the 32-byte category, a bitfield, an
// optional length-prefixed NFT commitment and an optional fungible amount.
// The locking bytecode that decides who may spend follows the prefix.

const prefixToken = 0xef

// Bitfield flags of the token prefix.
const (
	tokenReserved      = 0x80
	tokenHasCommitment = 0x40
	tokenHasNFT        = 0x20
	tokenHasAmount     = 0x10
	tokenCapabilities  = 0x0f
)

// maxTokenAmount is the largest fungible amount consensus allows.
const maxTokenAmount = 1<<63 - 1

// TokenData is an output's token as the API shows it in the output's
// coinSpecific (the shape of Bitcoin Cash Node's tokenData).
type TokenData struct {
	// Category is the token's id in display (txid) byte order.
	Category string `json:"category"`
	// Amount is the fungible amount in decimal, "0" when none.
	Amount string    `json:"amount"`
	NFT    *TokenNFT `json:"nft,omitempty"`
}

// TokenNFT is the non-fungible part of a token.
type TokenNFT struct {
	// Capability is "none", "mutable" or "minting".
	Capability string `json:"capability"`
	// Commitment is the NFT's commitment in hex ("" when empty).
	Commitment string `json:"commitment"`
}

// OutputSpecific is an output's coinSpecific on Bitcoin Cash.
type OutputSpecific struct {
	TokenData *TokenData `json:"tokenData"`
}

var capabilityNames = [3]string{"none", "mutable", "minting"}

// splitToken separates a token prefix from the locking bytecode. ok is
// false when script has no token prefix; err is set when it has a malformed
// one (the output is then non-standard and indexed under its whole script).
func splitToken(script []byte) (tok *TokenData, locking []byte, ok bool, err error) {
	if len(script) == 0 || script[0] != prefixToken {
		return nil, script, false, nil
	}
	// prefix byte + category + bitfield
	if len(script) < 34 {
		return nil, nil, true, errors.New("token prefix too short")
	}
	cat := make([]byte, 32)
	for i := range cat {
		cat[i] = script[32-i] // display order is reversed
	}
	bits := script[33]
	rest := script[34:]
	capability := bits & tokenCapabilities
	switch {
	case bits&tokenReserved != 0:
		return nil, nil, true, errors.New("token prefix reserved bit set")
	case bits&(tokenHasNFT|tokenHasAmount) == 0:
		return nil, nil, true, errors.New("token prefix encodes no token")
	case bits&tokenHasNFT == 0 && (capability != 0 || bits&tokenHasCommitment != 0):
		return nil, nil, true, errors.New("token capability or commitment without an NFT")
	case int(capability) >= len(capabilityNames):
		return nil, nil, true, fmt.Errorf("token capability %d", capability)
	}
	tok = &TokenData{Category: hex.EncodeToString(cat), Amount: "0"}
	if bits&tokenHasNFT != 0 {
		tok.NFT = &TokenNFT{Capability: capabilityNames[capability]}
		if bits&tokenHasCommitment != 0 {
			n, used, err := compactSize(rest)
			if err != nil {
				return nil, nil, true, fmt.Errorf("token commitment length: %w", err)
			}
			rest = rest[used:]
			if n == 0 || n > uint64(len(rest)) {
				return nil, nil, true, fmt.Errorf("token commitment of %d bytes", n)
			}
			tok.NFT.Commitment = hex.EncodeToString(rest[:n])
			rest = rest[n:]
		}
	}
	if bits&tokenHasAmount != 0 {
		n, used, err := compactSize(rest)
		if err != nil {
			return nil, nil, true, fmt.Errorf("token amount: %w", err)
		}
		if n == 0 || n > maxTokenAmount {
			return nil, nil, true, fmt.Errorf("token amount %d out of range", n)
		}
		tok.Amount = strconv.FormatUint(n, 10)
		rest = rest[used:]
	}
	return tok, rest, true, nil
}

// compactSize reads a minimally encoded Bitcoin CompactSize integer.
func compactSize(b []byte) (uint64, int, error) {
	if len(b) == 0 {
		return 0, 0, errors.New("missing")
	}
	var n uint64
	var size int
	switch b[0] {
	case 0xfd:
		size = 3
	case 0xfe:
		size = 5
	case 0xff:
		size = 9
	default:
		return uint64(b[0]), 1, nil
	}
	if len(b) < size {
		return 0, 0, errors.New("truncated")
	}
	var least uint64
	switch size {
	case 3:
		n, least = uint64(binary.LittleEndian.Uint16(b[1:])), 0xfd
	case 5:
		n, least = uint64(binary.LittleEndian.Uint32(b[1:])), 0x10000
	default:
		n, least = binary.LittleEndian.Uint64(b[1:]), 0x100000000
	}
	if n < least {
		return 0, 0, errors.New("not minimally encoded")
	}
	return n, size, nil
}
