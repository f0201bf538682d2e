package db

import (
	"bytes"
	"slices"

	"github.com/openexplorer/blockbook/bchain"
)

// AliasDecoder reads an address alias from a log (eth.ENSName): the
// address, its name, and whether the log is a registration at all.
type AliasDecoder func(l *bchain.EthLog) (bchain.EthAddress, string, bool)

// SetAliases makes the index keep the address aliases dec finds in the
// blocks' logs (address_aliases); nil, the default, keeps none. Set it
// before the first block is connected.
func (x *EthIndex) SetAliases(dec AliasDecoder) { x.aliases = dec }

// blockAliases returns the aliases registered in a block, the last one of
// an address winning, and the addresses sorted ascending.
func blockAliases(blk *bchain.EthBlock, dec AliasDecoder) (map[string]string, []bchain.AddrDesc) {
	if dec == nil {
		return nil, nil
	}
	names := map[string]string{}
	for i := range blk.Txs {
		rc := blk.Txs[i].Receipt
		if rc == nil || rc.Status == bchain.EthStatusFailure {
			continue // a reverted tx leaves no logs
		}
		for j := range rc.Logs {
			if a, name, ok := dec(&rc.Logs[j]); ok && len(name) <= maxAliasLen {
				names[string(a[:])] = name
			}
		}
	}
	addrs := make([]bchain.AddrDesc, 0, len(names))
	for k := range names {
		addrs = append(addrs, bchain.AddrDesc(k))
	}
	slices.SortFunc(addrs, func(a, b bchain.AddrDesc) int { return bytes.Compare(a, b) })
	return names, addrs
}

// putAliases writes the alias rows of block h.
func (x *EthIndex) putAliases(b *Batch, h uint32, blk *bchain.EthBlock) {
	names, addrs := blockAliases(blk, x.aliases)
	if len(addrs) == 0 {
		return
	}
	for _, a := range addrs {
		b.put(CFAddressAliases, aliasKey(a, h), packAliasName(names[string(a)]))
	}
	b.put(CFAddressAliases, aliasBlockKey(h), packAliasBlock(addrs))
}

// delAliases deletes the alias rows of block h (whether or not aliases
// are kept now: an index may have been synced with them).
func (x *EthIndex) delAliases(b *Batch, h uint32) error {
	v, err := x.db.get(CFAddressAliases, aliasBlockKey(h))
	if err != nil || v == nil {
		return err
	}
	addrs, err := unpackAliasBlock(v)
	if err != nil {
		return err
	}
	for _, a := range addrs {
		b.del(CFAddressAliases, aliasKey(a, h))
	}
	b.del(CFAddressAliases, aliasBlockKey(h))
	return nil
}

// ReadAddressAlias returns the newest alias registered to an address ("":
// none), as stored, without the chain's suffix.
func ReadAddressAlias(r Reader, addr bchain.AddrDesc) (string, error) {
	var name string
	err := r.iterate(CFAddressAliases, nil, aliasPrefix(addr), func(k, v []byte) (bool, error) {
		if len(k) != 1+len(addr)+4 {
			return true, nil // a longer address sharing the prefix: not ours
		}
		n, err := unpackAliasName(v)
		name = n
		return false, err
	})
	return name, err
}
