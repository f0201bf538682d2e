package db

import (
	"testing"

	"github.com/openexplorer/blockbook/bchain"
)

// Fuzz targets of the addressAliases rows (schema_eth_alias.go), with the
// properties of schema_eth_fuzz_test.go's.

func FuzzUnpackAliasKey(f *testing.F) {
	f.Add(aliasKey(bchain.EthAddress{1, 2}.AddrDesc(), 12345))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, h, err := unpackAliasKey(b)
		checkCanonical(t, b, err, func() []byte { return aliasKey(a, h) })
	})
}

func FuzzUnpackAliasName(f *testing.F) {
	f.Add(packAliasName("vitalik"))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := unpackAliasName(b)
		checkCanonical(t, b, err, func() []byte { return packAliasName(n) })
	})
}

func FuzzUnpackAliasBlock(f *testing.F) {
	f.Add(packAliasBlock([]bchain.AddrDesc{bchain.EthAddress{1}.AddrDesc(), bchain.EthAddress{2}.AddrDesc()}))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := unpackAliasBlock(b)
		checkCanonical(t, b, err, func() []byte { return packAliasBlock(v) })
	})
}
