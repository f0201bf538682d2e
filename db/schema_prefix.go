package db

// schema_prefix.go: the addressPrefix rows behind Esplora's address search
// (/api/address-prefix/:prefix), kept only by an index built with
// -esploraaddressprefix. Notation as in schema.go.

import (
	"bytes"

	"github.com/openexplorer/blockbook/bchain"
)

// maxAddressLen bounds an addressPrefix key: the longest address a Bitcoin
// descriptor renders to (a bech32m witness program of 40 bytes is 74
// characters with a long HRP) with room to spare.
const maxAddressLen = 128

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

// AddressPrefixName is the address-prefix index's name and state key:
// the default key addressPrefix (one byte, 1) marks an index that keeps
// the rows.
const AddressPrefixName = "addressPrefix"

// AddressPrefixIndex is the optional index of the addressPrefix rows. Its
// rows follow the addressBalance rows (BalanceFollower); it writes nothing
// of its own per block.
type AddressPrefixIndex struct{ namer AddressNamer }

var (
	_ OptionalIndex   = (*AddressPrefixIndex)(nil)
	_ BalanceFollower = (*AddressPrefixIndex)(nil)
)

// NewAddressPrefixIndex returns the address-prefix index, naming
// descriptors with namer.
func NewAddressPrefixIndex(namer AddressNamer) *AddressPrefixIndex {
	return &AddressPrefixIndex{namer: namer}
}

func (*AddressPrefixIndex) Name() string { return AddressPrefixName }
func (*AddressPrefixIndex) CFs() []CF    { return []CF{CFAddressPrefix} }

func (*AddressPrefixIndex) ConnectBlock(RowWriter, *OptionalBlock) error    { return nil }
func (*AddressPrefixIndex) DisconnectBlock(RowWriter, *OptionalBlock) error { return nil }

// BalanceRow writes the address's row with its balance row, deletes it
// with it, and writes it (again, if it exists: the same row) when a bulk
// round does not know whether the balance row is new.
func (p *AddressPrefixIndex) BalanceRow(w RowWriter, desc bchain.AddrDesc, ev BalanceEvent) {
	addr, ok := p.namer.DescAddress(desc)
	if !ok || addr == "" || len(addr) > maxAddressLen {
		return
	}
	if ev == BalanceDeleted {
		w.Delete(CFAddressPrefix, addressPrefixKey(addr))
	} else {
		w.Put(CFAddressPrefix, addressPrefixKey(addr), nil)
	}
}

// EnableAddressPrefix makes the index keep the addressPrefix rows, naming
// descriptors with namer (EnableOptional: an index that already holds
// blocks without them cannot start, ErrIncompatible; an index built with
// them keeps them whatever the flag says). enabled reports whether they
// are kept.
func (x *UtxoIndex) EnableAddressPrefix(want bool, namer AddressNamer) (enabled bool, err error) {
	return x.EnableOptional(NewAddressPrefixIndex(namer), want)
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
