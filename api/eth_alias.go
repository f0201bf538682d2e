package api

import (
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// AddressAlias is a name shown for an address: Type "Contract" (a token
// contract's name) or "ENS" (a registered ENS name with the chain's
// suffix), as Blockbook gives them.
type AddressAlias struct {
	Type  string
	Alias string
}

// AddressAliasesMap maps the addresses of an answer to their aliases.
type AddressAliasesMap map[string]AddressAlias

// ensSuffix is what ENS-style names end with when shown (Blockbook's
// ".bnb" on BNB Smart Chain, ".eth" elsewhere).
func ensSuffix(kind bchain.EthChainKind) string {
	if kind == bchain.EthKindBSC {
		return ".bnb"
	}
	return ".eth"
}

// txAddresses adds to m the addresses a tx answer shows: its inputs and
// outputs, the parties of its token and internal transfers.
func txAddresses(m map[string]struct{}, tx *Tx) {
	add := func(a string) {
		if a != "" {
			m[a] = struct{}{}
		}
	}
	for _, in := range tx.Vin {
		for _, a := range in.Addresses {
			add(a)
		}
	}
	for _, out := range tx.Vout {
		for _, a := range out.Addresses {
			add(a)
		}
	}
	for _, t := range tx.TokenTransfers {
		add(t.From)
		add(t.To)
	}
	if es := tx.EthereumSpecific; es != nil {
		for _, t := range es.InternalTransfers {
			add(t.From)
			add(t.To)
		}
	}
}

// addressAliases returns the aliases of the addresses in txs (nil when
// the coin's config has no address_aliases, or none is known): a contract
// the index knows by a name is a "Contract", and an ENS name registered to
// the address, the newest, replaces it as "ENS".
func (r *ethRenderer) addressAliases(txs []*Tx) (AddressAliasesMap, error) {
	if !r.s.cfg.AddressAliases || len(txs) == 0 {
		return nil, nil
	}
	m := map[string]struct{}{}
	for _, tx := range txs {
		txAddresses(m, tx)
	}
	out := AddressAliasesMap{}
	for a := range m {
		desc, err := r.s.addrs.AddrDescFromAddress(a)
		if err != nil || len(desc) == 0 {
			continue
		}
		ci, err := r.contract(desc)
		if err != nil {
			return nil, err
		}
		if ci != nil && ci.Name != "" {
			out[a] = AddressAlias{Type: "Contract", Alias: ci.Name}
		}
		name, err := db.ReadAddressAlias(r.v.snap, desc)
		if err != nil {
			return nil, err
		}
		if name != "" {
			out[a] = AddressAlias{Type: "ENS", Alias: name + ensSuffix(r.s.backend.Params.EthKind)}
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}
