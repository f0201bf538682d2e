package db

// addressAliases (Ethereum-type chains): the ENS names registered to
// addresses (NameRegistered logs, see eth.ENSName), kept only when the
// coin's config has address_aliases. Part of schema.go, kept apart for
// size.
//
//	'a' ‖ address ‖ u32be(^height) → name      a registration in that block
//	                                          (the last of the block's wins)
//	'b' ‖ u32be(height)             → address × n  the addresses with an 'a'
//	                                          row of that block, ascending
//
// The newest 'a' row of an address (the first in key order) is its alias.
// Disconnecting a block deletes the rows its 'b' row lists and the 'b' row
// itself, so the family is what a fresh sync of the shorter chain makes.
// Names are 1..maxAliasLen bytes, stored as the log gave them.

import (
	"bytes"
	"slices"

	"github.com/openexplorer/blockbook/bchain"
)

const (
	aliasKindName  = 'a'
	aliasKindBlock = 'b'
	// maxAliasLen bounds a stored name (eth.ENSName keeps no longer ones).
	maxAliasLen = 1024
)

// aliasPrefix is the common prefix of an address's 'a' rows.
func aliasPrefix(addr bchain.AddrDesc) []byte {
	return append([]byte{aliasKindName}, addr...)
}

func aliasKey(addr bchain.AddrDesc, height uint32) []byte {
	e := encoder{b: aliasPrefix(addr)}
	e.u32be(^height)
	return e.b
}

func unpackAliasKey(k []byte) (bchain.AddrDesc, uint32, error) {
	d := newDecoder("addressAliases key", k)
	if p := d.bytes(1); p != nil && p[0] != aliasKindName {
		d.fail("unknown key kind %#x", p[0])
	}
	addr := d.bytes(EthAddrLen)
	h := ^d.u32be()
	if err := d.done(); err != nil {
		return nil, 0, err
	}
	return bchain.AddrDesc(slices.Clone(addr)), h, nil
}

func packAliasName(name string) []byte { return []byte(name) }

func unpackAliasName(b []byte) (string, error) {
	d := newDecoder("addressAliases name", b)
	if len(b) == 0 || len(b) > maxAliasLen {
		d.fail("name of %d bytes", len(b))
		return "", d.done()
	}
	return string(b), nil
}

func aliasBlockKey(height uint32) []byte {
	e := encoder{b: []byte{aliasKindBlock}}
	e.u32be(height)
	return e.b
}

// packAliasBlock packs the addresses of a block's 'a' rows, which must be
// sorted ascending without duplicates.
func packAliasBlock(addrs []bchain.AddrDesc) []byte {
	out := make([]byte, 0, len(addrs)*EthAddrLen)
	for _, a := range addrs {
		out = append(out, a...)
	}
	return out
}

func unpackAliasBlock(b []byte) ([]bchain.AddrDesc, error) {
	d := newDecoder("addressAliases block", b)
	if len(b) == 0 || len(b)%EthAddrLen != 0 {
		d.fail("%d bytes is not a list of addresses", len(b))
		return nil, d.done()
	}
	var out []bchain.AddrDesc
	for d.more() {
		a := bchain.AddrDesc(slices.Clone(d.bytes(EthAddrLen)))
		if n := len(out); n > 0 && bytes.Compare(out[n-1], a) >= 0 {
			d.fail("addresses not strictly ascending")
			break
		}
		out = append(out, a)
	}
	if err := d.done(); err != nil {
		return nil, err
	}
	return out, nil
}
