package db

import (
	"fmt"

	"github.com/openexplorer/blockbook/bchain"
)

// ReadAddrContracts returns an address's counters and token holdings (nil:
// the address has no txs).
func ReadAddrContracts(r Reader, addr bchain.AddrDesc) (*AddrContracts, error) {
	v, err := r.get(CFAddressContracts, addr)
	if err != nil || v == nil {
		return nil, err
	}
	return unpackAddrContracts(v)
}

// ReadContractInfo returns what the index knows of a contract, with an
// operator's fix of its metadata laid over it (nil: nothing).
func ReadContractInfo(r Reader, contract bchain.AddrDesc) (*ContractInfo, error) {
	c, err := readContractRow(r, contract)
	if err != nil {
		return nil, err
	}
	f, err := ReadContractFix(r, contract)
	if err != nil || f == nil {
		return c, err
	}
	return f.apply(c), nil
}

// readContractRow returns the contracts row alone, which is what the
// sync reads and rewrites (never a fix).
func readContractRow(r Reader, contract bchain.AddrDesc) (*ContractInfo, error) {
	v, err := r.get(CFContracts, contract)
	if err != nil || v == nil {
		return nil, err
	}
	return unpackContractInfo(v)
}

// ReadInternalData returns a tx's internal transfers, created contract and
// error (nil: none).
func ReadInternalData(r Reader, txid bchain.Hash) (*InternalData, error) {
	v, err := r.get(CFInternalData, txid[:])
	if err != nil || v == nil {
		return nil, err
	}
	return unpackInternalData(v)
}

// EthAddrTxsAt is one Ethereum addresses row: the txs of one address in
// one block, newest first.
type EthAddrTxsAt struct {
	Height uint32
	Txs    []EthAddrTx
}

// IterateEthAddrTxs visits an address's rows from height `from` down to
// height `to` (both inclusive), newest first, until fn returns false.
func IterateEthAddrTxs(r Reader, addr bchain.AddrDesc, from, to uint32, fn func(EthAddrTxsAt) (bool, error)) error {
	return r.iterate(CFAddresses, addressesKey(addr, from), descPrefix(addr, 0), func(k, v []byte) (bool, error) {
		_, h, err := unpackAddressesKey(k)
		if err != nil {
			return false, err
		}
		if h < to {
			return false, nil
		}
		txs, err := unpackEthAddrTxs(v)
		if err != nil {
			return false, fmt.Errorf("address %x height %d: %w", []byte(addr), h, err)
		}
		return fn(EthAddrTxsAt{Height: h, Txs: txs})
	})
}
