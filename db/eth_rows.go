package db

// Address rows of an Ethereum-type block: which txs each address takes
// part in (addresses) and its counters and token holdings
// (addressContracts), applied forwards when a block connects and
// backwards, in reverse order, when it disconnects. They are built from
// the block's tx records (ethTxRecords, at the end), which are also its
// undo record.

import (
	"bytes"
	"fmt"
	"math/big"
	"slices"

	"github.com/openexplorer/blockbook/bchain"
)

// zeroEthAddr is where mints come from and burns go: it takes part in the
// txs, but holds no token balances (they would only grow).
var zeroEthAddr = make(bchain.AddrDesc, EthAddrLen)

// ethAddrRoles lists, per address, its roles in one tx, in a fixed order:
// sender, recipient, created contract, internal transfers, token transfers.
func ethAddrRoles(t *EthTxRecord) (order []string, roles map[string][]EthRole) {
	roles = map[string][]EthRole{}
	add := func(a bchain.AddrDesc, r EthRole) {
		if len(a) == 0 {
			return
		}
		k := string(a)
		if _, ok := roles[k]; !ok {
			order = append(order, k)
		}
		roles[k] = append(roles[k], r)
	}
	add(t.From, EthRole{Kind: EthRoleTx, From: true})
	add(t.To, EthRole{Kind: EthRoleTx})
	add(t.Created, EthRole{Kind: EthRoleCreated})
	for i, it := range t.Internal {
		add(it.From, EthRole{Kind: EthRoleInternal, From: true, Index: uint32(i)})
		add(it.To, EthRole{Kind: EthRoleInternal, Index: uint32(i)})
	}
	for i, tt := range t.Tokens {
		add(tt.From, EthRole{Kind: EthRoleToken, From: true, Index: uint32(i)})
		add(tt.To, EthRole{Kind: EthRoleToken, Index: uint32(i)})
	}
	return order, roles
}

// ethAddressRows returns the addresses rows of a block (txs newest first
// per address) and the addresses in the order they first appear.
func ethAddressRows(txs []EthTxRecord) (rows map[string][]EthAddrTx, order []string) {
	rows = map[string][]EthAddrTx{}
	for i := range txs {
		o, roles := ethAddrRoles(&txs[i])
		for _, k := range o {
			if _, ok := rows[k]; !ok {
				order = append(order, k)
			}
			rows[k] = append(rows[k], EthAddrTx{Txid: txs[i].Txid, Roles: roles[k]})
		}
	}
	for _, list := range rows {
		slices.Reverse(list)
	}
	return rows, order
}

// applyEthTx changes the addressContracts rows (loaded on demand by load)
// by one tx, forwards (sign 1) or backwards (sign -1).
func applyEthTx(t *EthTxRecord, sign int, load func(string) (*AddrContracts, error)) error {
	if err := applyEthTxCounts(t, sign, load); err != nil {
		return err
	}
	return applyEthTxTokens(t, sign, load)
}

// applyEthTxCounts changes the tx counters of the tx's parties.
func applyEthTxCounts(t *EthTxRecord, sign int, load func(string) (*AddrContracts, error)) error {
	order, roles := ethAddrRoles(t)
	for _, k := range order {
		a, err := load(k)
		if err != nil {
			return err
		}
		var nonToken, internal bool
		for _, r := range roles[k] {
			nonToken = nonToken || r.Kind == EthRoleTx || r.Kind == EthRoleCreated
			internal = internal || r.Kind == EthRoleInternal
		}
		if err := addCount(&a.Txs, sign, true); err != nil {
			return fmt.Errorf("address %x: %w", k, err)
		}
		if err := addCount(&a.NonTokenTxs, sign, nonToken); err != nil {
			return fmt.Errorf("address %x: %w", k, err)
		}
		if err := addCount(&a.InternalTxs, sign, internal); err != nil {
			return fmt.Errorf("address %x: %w", k, err)
		}
	}
	return nil
}

// applyEthTxTokens changes the token holdings of the tx's transfer parties.
func applyEthTxTokens(t *EthTxRecord, sign int, load func(string) (*AddrContracts, error)) error {
	tokens := t.Tokens
	for n := range tokens {
		i := n
		if sign < 0 {
			i = len(tokens) - 1 - n // undo in reverse order
		}
		tt := &tokens[i]
		self := bytes.Equal(tt.From, tt.To)
		for _, side := range []struct {
			addr bchain.AddrDesc
			out  bool
		}{{tt.From, true}, {tt.To, false}} {
			if bytes.Equal(side.addr, zeroEthAddr) || (self && !side.out) {
				continue // a self-transfer counts once and moves nothing
			}
			a, err := load(string(side.addr))
			if err != nil {
				return err
			}
			delta := new(big.Int)
			if !self {
				delta.Set(tt.Value)
			}
			if side.out != (sign < 0) {
				delta.Neg(delta)
			}
			if err := a.applyToken(tt, sign, delta); err != nil {
				return fmt.Errorf("address %x: %w", side.addr, err)
			}
		}
	}
	return nil
}

// addCount adds sign to *c when cond holds.
func addCount(c *uint32, sign int, cond bool) error {
	if !cond {
		return nil
	}
	n := int64(*c) + int64(sign)
	if n < 0 || n > 0xffffffff {
		return fmt.Errorf("%w: tx counter underflow", ErrCorrupt)
	}
	*c = uint32(n)
	return nil
}

// applyToken counts one transfer of tt (sign ±1) and changes the holding
// by delta. A contract entry whose transfers fall to zero is removed, as
// a fresh sync would not have it.
func (a *AddrContracts) applyToken(tt *EthTokenTransfer, sign int, delta *big.Int) error {
	i := slices.IndexFunc(a.Contracts, func(c AddrContract) bool { return bytes.Equal(c.Contract, tt.Contract) })
	if i < 0 {
		if sign < 0 {
			return fmt.Errorf("%w: undoing a transfer of contract %x never recorded", ErrCorrupt, tt.Contract)
		}
		a.Contracts = append(a.Contracts, AddrContract{Contract: tt.Contract, Standard: tt.Standard, Balance: new(big.Int)})
		i = len(a.Contracts) - 1
	}
	c := &a.Contracts[i]
	if err := addCount(&c.Transfers, sign, true); err != nil {
		return err
	}
	if c.Transfers == 0 {
		a.Contracts = slices.Delete(a.Contracts, i, i+1)
		return nil
	}
	switch c.Standard {
	case bchain.TokenERC20:
		if c.Balance == nil {
			c.Balance = new(big.Int)
		}
		c.Balance.Add(c.Balance, delta)
	case bchain.TokenERC721, bchain.TokenERC1155:
		c.Values = addTokenValue(c.Values, tt.ID, delta)
	}
	return nil
}

// addTokenValue adds delta to the amount of id, keeping the list sorted by
// id and without zero amounts.
func addTokenValue(vals []TokenValue, id, delta *big.Int) []TokenValue {
	i, found := slices.BinarySearchFunc(vals, id, func(v TokenValue, id *big.Int) int { return v.ID.Cmp(id) })
	if !found {
		if delta.Sign() == 0 {
			return vals
		}
		return slices.Insert(vals, i, TokenValue{ID: new(big.Int).Set(id), Value: new(big.Int).Set(delta)})
	}
	v := new(big.Int).Add(vals[i].Value, delta)
	if v.Sign() == 0 {
		return slices.Delete(vals, i, i+1)
	}
	vals[i].Value = v
	return vals
}

// ethTxRecords extracts what the address rows need from a block's txs.
func ethTxRecords(blk *bchain.EthBlock) []EthTxRecord {
	out := make([]EthTxRecord, len(blk.Txs))
	for i := range blk.Txs {
		tx := &blk.Txs[i]
		r := EthTxRecord{Txid: tx.Hash, From: tx.From.AddrDesc()}
		if tx.To != nil {
			r.To = tx.To.AddrDesc()
		}
		// A failed creation leaves no contract (its receipt still names
		// the address it would have had).
		if tx.Receipt != nil && tx.Receipt.ContractAddress != nil && tx.Receipt.Status != bchain.EthStatusFailure {
			r.Created = tx.Receipt.ContractAddress.AddrDesc()
		}
		if tx.Internal != nil {
			for _, it := range tx.Internal.Transfers {
				r.Internal = append(r.Internal, InternalTransfer{Kind: it.Type, From: it.From.AddrDesc(), To: it.To.AddrDesc(),
					Value: nonNil(it.Value)})
			}
		}
		for _, tt := range tx.Transfers {
			r.Tokens = append(r.Tokens, EthTokenTransfer{Standard: tt.Standard, Contract: tt.Contract.AddrDesc(),
				From: tt.From.AddrDesc(), To: tt.To.AddrDesc(), Value: nonNil(tt.Value), ID: nonNil(tt.TokenID)})
		}
		out[i] = r
	}
	return out
}

func nonNil(x *big.Int) *big.Int {
	if x == nil {
		return new(big.Int)
	}
	return x
}
