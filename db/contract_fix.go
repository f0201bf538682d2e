package db

// Operators' fixes of token metadata (/admin/contract-info/). A fix is
// kept apart from the contracts row the sync owns: connecting and
// disconnecting blocks rewrite or delete that row (a reorg that takes away
// a contract's only block deletes it), and a fix must survive both. So a
// fix is its own row of the default family, which the sync never touches,
// and is laid over the contracts row when a contract is read
// (ReadContractInfo). Fixes are not derived from the chain: dump
// comparisons leave them out (IsVolatileStateKey).
//
// Rows: "contractFix" ‖ contract(20) → lb(name) ‖ lb(symbol) ‖
// u8(decimals) ‖ u8(standard; 0: the index's own).

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/openexplorer/blockbook/bchain"
)

var stateKeyContractFix = []byte("contractFix")

// ContractFix is an operator's metadata for a contract.
type ContractFix struct {
	Name, Symbol string
	Decimals     uint8
	// Standard replaces the standard the index saw, unless TokenUnknown.
	Standard bchain.TokenStandard
}

// ErrBadContractFix is a fix that cannot be stored (the admin answers 400).
var ErrBadContractFix = errors.New("invalid contract metadata")

func contractFixKey(contract bchain.AddrDesc) []byte {
	return append(append(make([]byte, 0, len(stateKeyContractFix)+EthAddrLen), stateKeyContractFix...), contract...)
}

func isContractFixKey(k []byte) bool {
	return len(k) == len(stateKeyContractFix)+EthAddrLen && bytes.HasPrefix(k, stateKeyContractFix)
}

func packContractFix(f *ContractFix) []byte {
	e := encoder{b: make([]byte, 0, 8+len(f.Name)+len(f.Symbol))}
	e.lenBytes([]byte(f.Name))
	e.lenBytes([]byte(f.Symbol))
	e.b = append(e.b, f.Decimals, byte(f.Standard))
	return e.b
}

func unpackContractFix(b []byte) (*ContractFix, error) {
	d := newDecoder("contractFix", b)
	f := &ContractFix{Name: string(d.lenBytes(maxContractText)), Symbol: string(d.lenBytes(maxContractText))}
	if v := d.bytes(2); v != nil {
		f.Decimals, f.Standard = v[0], bchain.TokenStandard(v[1])
		if f.Standard >= numTokenStandards {
			d.fail("token standard %d", v[1])
		}
	}
	return f, d.done()
}

// ReadContractFix returns the operator's fix of a contract (nil: none).
func ReadContractFix(r Reader, contract bchain.AddrDesc) (*ContractFix, error) {
	v, err := r.get(CFDefault, contractFixKey(contract))
	if err != nil || v == nil {
		return nil, err
	}
	return unpackContractFix(v)
}

// apply lays a fix over what the index knows of a contract (c may be nil:
// a contract the index never met).
func (f *ContractFix) apply(c *ContractInfo) *ContractInfo {
	out := &ContractInfo{Name: f.Name, Symbol: f.Symbol, Decimals: f.Decimals, Fixed: true, fixStandard: f.Standard}
	if c != nil {
		out.Events = c.Events
	}
	return out
}

func checkContractFix(contract bchain.AddrDesc, f *ContractFix) error {
	switch {
	case len(contract) != EthAddrLen:
		return fmt.Errorf("%w: contract address of %d bytes", ErrBadContractFix, len(contract))
	case len(f.Name) > maxContractText || len(f.Symbol) > maxContractText:
		return fmt.Errorf("%w: name and symbol are limited to %d bytes", ErrBadContractFix, maxContractText)
	case f.Standard < 0 || f.Standard >= numTokenStandards:
		return fmt.Errorf("%w: token standard %d", ErrBadContractFix, f.Standard)
	}
	return nil
}

// contractFixMu orders the admin's fix writes and deletes, so that a
// delete reports the fix it removed, not one written meanwhile.
var contractFixMu sync.Mutex

// WriteContractFixes stores fixes (replacing earlier ones) in one write;
// an invalid one writes none.
func (d *DB) WriteContractFixes(contracts []bchain.AddrDesc, fixes []ContractFix) error {
	contractFixMu.Lock()
	defer contractFixMu.Unlock()
	if len(contracts) != len(fixes) {
		return fmt.Errorf("%w: %d contracts, %d fixes", ErrBadContractFix, len(contracts), len(fixes))
	}
	b := d.NewBatch()
	defer b.Destroy()
	for i := range fixes {
		if err := checkContractFix(contracts[i], &fixes[i]); err != nil {
			return err
		}
		b.put(CFDefault, contractFixKey(contracts[i]), packContractFix(&fixes[i]))
	}
	return d.writeOffChain(b)
}

// DeleteContractFix removes a contract's fix and returns it (nil: there
// was none).
func (d *DB) DeleteContractFix(contract bchain.AddrDesc) (*ContractFix, error) {
	contractFixMu.Lock()
	defer contractFixMu.Unlock()
	f, err := ReadContractFix(d, contract)
	if err != nil || f == nil {
		return nil, err
	}
	b := d.NewBatch()
	defer b.Destroy()
	b.del(CFDefault, contractFixKey(contract))
	return f, d.writeOffChain(b)
}

// ListedContract is one contract of ListContracts.
type ListedContract struct {
	Contract bchain.AddrDesc
	Info     *ContractInfo // with its fix applied
}

// ListContracts lists up to limit contracts the index has a row or a fix
// for, by address from `from` on (nil: the first), and the address the
// next page starts at (nil: this is the last page).
func ListContracts(r Reader, from bchain.AddrDesc, limit int) ([]ListedContract, bchain.AddrDesc, error) {
	if limit < 1 {
		return nil, nil, fmt.Errorf("list contracts: limit %d", limit)
	}
	rows := map[string]*ContractInfo{}
	var keys []string
	err := r.iterate(CFContracts, from, nil, func(k, v []byte) (bool, error) {
		c, err := unpackContractInfo(v)
		if err != nil {
			return false, fmt.Errorf("contract %x: %w", k, err)
		}
		rows[string(k)] = c
		keys = append(keys, string(k))
		return len(keys) <= limit, nil
	})
	if err != nil {
		return nil, nil, err
	}
	fixes := map[string]*ContractFix{}
	n := 0
	err = r.iterate(CFDefault, contractFixKey(from), stateKeyContractFix, func(k, v []byte) (bool, error) {
		if !isContractFixKey(k) {
			return true, nil
		}
		f, err := unpackContractFix(v)
		if err != nil {
			return false, fmt.Errorf("contract fix %x: %w", k, err)
		}
		c := string(k[len(stateKeyContractFix):])
		fixes[c] = f
		if _, ok := rows[c]; !ok {
			keys = append(keys, c)
		}
		n++
		return n <= limit, nil
	})
	if err != nil {
		return nil, nil, err
	}
	slices.Sort(keys)
	var next bchain.AddrDesc
	if len(keys) > limit {
		next, keys = bchain.AddrDesc(keys[limit]), keys[:limit]
	}
	out := make([]ListedContract, len(keys))
	for i, k := range keys {
		c := rows[k]
		if f := fixes[k]; f != nil {
			c = f.apply(c)
		}
		out[i] = ListedContract{Contract: bchain.AddrDesc(k), Info: c}
	}
	return out, next, nil
}
