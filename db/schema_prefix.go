package db

// schema_prefix.go: the addressPrefix rows behind Esplora's address search
// (/api/address-prefix/:prefix), kept only by an index built with
// -esploraaddressprefix. Notation as in schema.go.

import (
	"bytes"
	"fmt"

	"github.com/openexplorer/blockbook/bchain"
)

// maxAddressLen bounds an addressPrefix key: the longest address a Bitcoin
// descriptor renders to (a bech32m witness program of 40 bytes is 74
// characters with a long HRP) with room to spare.
const maxAddressLen = 128

// stateKeyAddressPrefix marks an index whose addressPrefix rows are kept
// (value: one byte 1). It is written on an empty index only, so a marked
// index has the row of every address it holds.
var stateKeyAddressPrefix = []byte("addressPrefix")

// AddressNamer renders a descriptor as the one address an explorer shows
// for it; false for a script without an address.
type AddressNamer interface {
	DescAddress(desc bchain.AddrDesc) (string, bool)
}

// An addressPrefix key is the address itself (printable ASCII, as every
// Bitcoin address is), the value empty. The row exists exactly while the
// address's descriptor has an addressBalance row: it is written when that
// row is created and deleted with it (connect, disconnect and bulk load
// alike), so a reorged index has the same rows as a fresh sync, and the
// keys sort the addresses for a prefix scan.
func addressPrefixKey(addr string) []byte { return []byte(addr) }

// unpackAddressPrefix checks an addressPrefix row: a key of 1 to
// maxAddressLen printable ASCII characters and an empty value.
func unpackAddressPrefix(key, val []byte) (string, error) {
	d := newDecoder("addressPrefix", val)
	switch {
	case len(key) == 0 || len(key) > maxAddressLen:
		d.fail("address of %d bytes", len(key))
	case bytes.ContainsFunc(key, func(r rune) bool { return r <= ' ' || r > '~' }):
		d.fail("address %q is not printable ASCII", key)
	case len(val) != 0:
		d.fail("value of %d bytes", len(val))
	}
	if d.e != nil {
		return "", d.e
	}
	return string(key), nil
}

// EnableAddressPrefix makes the index keep the addressPrefix rows, naming
// descriptors with namer. An index that already holds blocks without them
// cannot start (its old addresses would be missing): ErrIncompatible.
// An index built with them keeps them whatever the flag says, so its rows
// never go stale; enabled reports whether they are kept.
func (x *UtxoIndex) EnableAddressPrefix(want bool, namer AddressNamer) (enabled bool, err error) {
	marked, err := x.db.get(CFDefault, stateKeyAddressPrefix)
	if err != nil {
		return false, err
	}
	if marked == nil && !want {
		return false, nil
	}
	if marked == nil {
		if n, err := x.db.countKeys(CFHeight, 1); err != nil {
			return false, err
		} else if n > 0 {
			return false, fmt.Errorf("%w: %s was indexed without the address-prefix rows (-esploraaddressprefix); "+
				"keeping them requires a reindex: point -datadir at an empty directory", ErrIncompatible, x.db.path)
		}
		b := x.db.NewBatch()
		defer b.Destroy()
		b.put(CFDefault, stateKeyAddressPrefix, []byte{1})
		if err := x.db.writeUncounted(b); err != nil {
			return false, err
		}
	}
	x.prefixNamer = namer
	return true, nil
}

// prefixRow is the addressPrefix key of desc, or nil when the rows are
// not kept or desc has no address.
func prefixRow(namer AddressNamer, desc bchain.AddrDesc) []byte {
	if namer == nil {
		return nil
	}
	addr, ok := namer.DescAddress(desc)
	if !ok || addr == "" || len(addr) > maxAddressLen {
		return nil
	}
	return addressPrefixKey(addr)
}

// AddressesWithPrefix lists up to limit indexed addresses beginning with
// prefix, in order.
func AddressesWithPrefix(r Reader, prefix string, limit int) ([]string, error) {
	var out []string
	if prefix == "" || limit <= 0 {
		return out, nil
	}
	err := r.iterate(CFAddressPrefix, nil, []byte(prefix), func(k, v []byte) (bool, error) {
		addr, err := unpackAddressPrefix(k, v)
		if err != nil {
			return false, err
		}
		out = append(out, addr)
		return len(out) < limit, nil
	})
	return out, err
}
