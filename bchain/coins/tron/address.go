// Package tron follows a java-tron node (its HTTP API and its
// Ethereum-compatible JSON-RPC) as Blockbook's bchain/coins/tron does, and
// turns its blocks into the account-model rows the index keeps. Tron is a
// chain type of its own (bchain.ChainTronType); what it shares with the
// Ethereum code is what Tron's VM really shares with Ethereum's: event
// logs and the token transfers decoded from them (eth.TokenTransfers).
package tron

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/address/v2/base58"

	"github.com/openexplorer/blockbook/bchain"
)

// AddressPrefix is the version byte of every Tron address: the 21-byte
// form is 0x41 ‖ the 20-byte EVM address, its base58check rendering
// starts with "T".
const AddressPrefix = 0x41

// addrLen is the length of a descriptor: the 20 bytes after the prefix,
// the same bytes an EVM log names, so logs and txs file under one key.
const addrLen = 20

// ErrInvalidAddress is returned for strings that are not Tron addresses.
var ErrInvalidAddress = errors.New("invalid Tron address")

// AddressParser reads the three forms Blockbook accepts: base58check
// "T…" (34 characters), the 41-prefixed hex of java-tron's HTTP API
// (42 hex digits) and the bare 20-byte hex of its JSON-RPC (40), the hex
// forms with or without 0x. It renders base58check only.
type AddressParser struct{}

// AddrDescFromAddress returns the 20-byte descriptor of addr.
func (AddressParser) AddrDescFromAddress(addr string) (bchain.AddrDesc, error) {
	return ParseAddress(addr)
}

// AddressesFromAddrDesc renders a descriptor as base58check.
func (AddressParser) AddressesFromAddrDesc(desc bchain.AddrDesc) ([]string, bool, error) {
	if len(desc) != addrLen {
		return nil, false, fmt.Errorf("%w: descriptor of %d bytes", ErrInvalidAddress, len(desc))
	}
	return []string{EncodeAddress(desc)}, true, nil
}

// ParseAddress decodes any accepted form into the 20-byte descriptor.
func ParseAddress(addr string) (bchain.AddrDesc, error) {
	s := strings.TrimSpace(addr)
	if len(s) == 34 && s[0] == 'T' {
		return decodeBase58(s)
	}
	s = strip0x(s)
	switch len(s) {
	case 2 * (addrLen + 1):
		b, err := hex.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("%w: %q is not hex", ErrInvalidAddress, addr)
		}
		if b[0] != AddressPrefix {
			return nil, fmt.Errorf("%w: hex address %q does not start with 41", ErrInvalidAddress, addr)
		}
		return bchain.AddrDesc(b[1:]), nil
	case 2 * addrLen:
		b, err := hex.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("%w: %q is not hex", ErrInvalidAddress, addr)
		}
		return bchain.AddrDesc(b), nil
	}
	return nil, fmt.Errorf("%w: %q", ErrInvalidAddress, addr)
}

func decodeBase58(s string) (bchain.AddrDesc, error) {
	b := base58.Decode(s)
	if len(b) != addrLen+5 || b[0] != AddressPrefix {
		return nil, fmt.Errorf("%w: %q is not base58check of a 41-prefixed address", ErrInvalidAddress, s)
	}
	sum := checksum(b[:addrLen+1])
	if !bytes.Equal(sum[:], b[addrLen+1:]) {
		return nil, fmt.Errorf("%w: bad checksum in %q", ErrInvalidAddress, s)
	}
	return bchain.AddrDesc(b[1 : addrLen+1]), nil
}

func checksum(payload []byte) [4]byte {
	a := sha256.Sum256(payload)
	b := sha256.Sum256(a[:])
	return [4]byte(b[:4])
}

// EncodeAddress renders a 20-byte descriptor (or a 21-byte 41-prefixed
// one) as base58check.
func EncodeAddress(desc []byte) string {
	if len(desc) == addrLen+1 && desc[0] == AddressPrefix {
		desc = desc[1:]
	}
	b := make([]byte, 0, addrLen+5)
	b = append(b, AddressPrefix)
	b = append(b, desc...)
	sum := checksum(b)
	return base58.Encode(append(b, sum[:]...))
}

func strip0x(s string) string {
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		return s[2:]
	}
	return s
}

// ParseID reads a txid or block hash in either form Blockbook accepts:
// 64 hex digits with or without 0x. Tron shows them without.
func ParseID(s string) (bchain.Hash, error) {
	return bchain.ParseHash(strings.ToLower(strip0x(strings.TrimSpace(s))))
}

// ethAddress reads an address of the node's answers (any accepted form)
// into the 20 bytes the shared account-model types use.
func ethAddress(s string) (bchain.EthAddress, error) {
	d, err := ParseAddress(s)
	if err != nil {
		return bchain.EthAddress{}, err
	}
	return bchain.EthAddress(d), nil
}
