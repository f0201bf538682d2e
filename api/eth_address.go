package api

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"sort"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/ethmempool"
)

// tokenStandard names a standard on the wire ("" when unknown).
func tokenStandard(t bchain.TokenStandard) string {
	if t == bchain.TokenUnknown {
		return ""
	}
	return t.String()
}

// standard names a standard as this chain's answers do (Tron: TRC20...).
func (s *EthService) standard(t bchain.TokenStandard) string {
	if s.tron != nil {
		return tronStandard(t)
	}
	return tokenStandard(t)
}

// Address answers address/{address}: balance and nonce from the node,
// counters, tokens and txs (newest first) from the index.
func (s *EthService) Address(ctx context.Context, address string, q AddressQuery) (*Address, error) {
	if err := CheckProtocols(q.Protocols, true); err != nil {
		return nil, err
	}
	desc, err := s.accountDesc(ctx, address)
	if err != nil {
		return nil, err
	}
	contract, err := s.contractFilter(q.Contract)
	if err != nil {
		return nil, err
	}
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	ac, err := db.ReadAddrContracts(v.snap, desc)
	if err != nil {
		return nil, err
	}
	if ac == nil {
		ac = &db.AddrContracts{}
	}
	out, bal, pending, err := s.accountState(ctx, desc, q.ConfirmedNonce)
	if err != nil {
		return nil, err
	}
	out.Txs, out.NonTokenTxs, out.InternalTxs = int(ac.Txs), int(ac.NonTokenTxs), int(ac.InternalTxs)
	if out.ContractInfo, err = s.contractInfo(v, desc); err != nil {
		return nil, err
	}
	if out.StakingPools, err = s.stakingPools(ctx, desc); err != nil {
		return nil, err
	}
	if out.ContractInfo != nil && out.ContractInfo.Standard == bchain.TokenERC20.String() {
		out.Erc20Contract = out.ContractInfo
	}
	r := newEthRenderer(s, v)
	if q.Details >= DetailsTokens {
		if out.Tokens, err = s.addressTokens(ctx, r, v, desc, ac, contract, q); err != nil {
			return nil, err
		}
	}
	if q.Secondary != "" {
		s.ethAddressValues(ctx, out, bal, q.Secondary)
	}
	if q.Details < DetailsTxids {
		return out, nil
	}
	txids, err := s.addressPage(ctx, r, desc, ac, contract, q, &out.Paging)
	if err != nil {
		return nil, err
	}
	// Pending txs come first, on the first page of an unfiltered list.
	if out.Paging.Page <= 1 && contract == nil && q.FromHeight == 0 && q.ToHeight == 0 && len(pending) > 0 {
		ids := make([]bchain.Hash, 0, len(pending)+len(txids))
		for _, t := range pending {
			ids = append(ids, t.Eth.Hash)
		}
		txids = append(ids, txids...)
	}
	if q.Details == DetailsTxids {
		for _, t := range txids {
			out.Txids = append(out.Txids, s.hashString(t))
		}
		return out, nil
	}
	// txslight is answered as txs: the light form is a Bitcoin-type one.
	for _, t := range txids[:min(len(txids), s.cfg.Limits.MaxFullTxs)] {
		tx, err := r.tx(ctx, t)
		if err != nil {
			return nil, err
		}
		out.Transactions = append(out.Transactions, tx)
	}
	out.AddressAliases, err = r.addressAliases(out.Transactions)
	return out, err
}

// accountState is an address's state from the node and the mempool: its
// balance, its nonce counting the node's pending txs (the next one to
// use, as Blockbook's) and, when asked for, the confirmed one; what its
// pending txs would move.
func (s *EthService) accountState(ctx context.Context, desc bchain.AddrDesc, withConfirmed bool) (*Address, *big.Int, []*ethmempool.Tx, error) {
	bal, err := s.eth.Balance(ctx, desc, bchain.EthLatest)
	if err != nil {
		return nil, nil, nil, err
	}
	nonce, err := s.eth.Nonce(ctx, desc, bchain.EthPending)
	if err != nil {
		return nil, nil, nil, err
	}
	pending, sums := s.pending(desc)
	out := &Address{
		Address: s.addr(desc), Balance: amount(bal), UnconfirmedTxs: len(pending), Nonce: fmt.Sprint(nonce),
		UnconfirmedBalance: amount(new(big.Int).Sub(sums.receiving, sums.sending)),
		UnconfirmedSending: amountOrNil(sums.sending), UnconfirmedReceiving: amountOrNil(sums.receiving),
	}
	if s.tron != nil {
		out.ChainExtraData = s.tron.account(ctx, out.Address)
	}
	if withConfirmed {
		// Best effort, as Blockbook's: left out when the node fails.
		if confirmed, err := s.eth.Nonce(ctx, desc, bchain.EthLatest); err == nil {
			out.ConfirmedNonce = fmt.Sprint(confirmed)
		} else {
			s.log.Warn("confirmed nonce failed", "address", out.Address, "err", err)
		}
	}
	return out, bal, pending, nil
}

// contractFilter validates the contract parameter (nil when empty).
func (s *EthService) contractFilter(contract string) (bchain.AddrDesc, error) {
	if contract == "" {
		return nil, nil
	}
	desc, err := s.addrs.AddrDescFromAddress(contract)
	if err != nil {
		return nil, &Error{Msg: fmt.Sprintf("Invalid contract filter, %v", err), Err: err}
	}
	return desc, nil
}

// contractInfo renders what the index knows of a contract (nil: nothing).
func (s *EthService) contractInfo(v *view, c bchain.AddrDesc) (*ContractInfo, error) {
	ci, err := db.ReadContractInfo(v.snap, c)
	if err != nil || ci == nil {
		return nil, err
	}
	std := s.standard(ci.Standard())
	created, destroyed := ci.Lifetime()
	return &ContractInfo{Type: std, Standard: std, Contract: s.addr(c), Name: ci.Name, Symbol: ci.Symbol,
		Decimals: int(ci.Decimals), CreatedInBlock: created, DestructedInBlock: destroyed, BlockHeight: v.tip.Height}, nil
}

// addressTokens is tokens with the vault marks protocols asks for.
func (s *EthService) addressTokens(ctx context.Context, r *ethRenderer, v *view, desc bchain.AddrDesc, ac *db.AddrContracts, filter bchain.AddrDesc, q AddressQuery) ([]Token, error) {
	out, err := s.tokens(ctx, r, desc, ac, filter, q.Details >= DetailsTokenBalances)
	if err == nil && wantsErc4626(q.Protocols) {
		s.markVaults(ctx, v, out)
	}
	return out, err
}

// tokens lists the token contracts an address met, in Blockbook's order
// (sortTokens); with balances, the ERC20 balance is the node's balanceOf (the
// transfers' sum when the contract does not answer), ERC721 ids and
// ERC1155 values are the index's holdings.
func (s *EthService) tokens(ctx context.Context, r *ethRenderer, desc bchain.AddrDesc, ac *db.AddrContracts, filter bchain.AddrDesc, balances bool) ([]Token, error) {
	var out []Token
	for _, c := range ac.Contracts {
		if filter != nil && string(filter) != string(c.Contract) {
			continue
		}
		std := s.standard(c.Standard)
		t := Token{Type: std, Standard: std, Contract: s.addr(c.Contract), Transfers: int(c.Transfers)}
		ci, err := r.contract(c.Contract)
		if err != nil {
			return nil, err
		}
		if ci != nil {
			t.Name, t.Symbol, t.Decimals = ci.Name, ci.Symbol, int(ci.Decimals)
		}
		if balances {
			switch c.Standard {
			case bchain.TokenERC20:
				b, err := s.eth.TokenBalance(ctx, desc, c.Contract)
				if err != nil {
					if errors.Is(err, bchain.ErrNodeUnavailable) || ctx.Err() != nil {
						return nil, err
					}
					b = c.Balance
				}
				t.Balance = amount(b)
				if t.Balance == nil {
					t.Balance = NewAmount(0)
				}
			case bchain.TokenERC721:
				for _, tv := range c.Values {
					t.IDs = append(t.IDs, amount(tv.ID))
				}
			case bchain.TokenERC1155:
				for _, tv := range c.Values {
					t.MultiTokenValues = append(t.MultiTokenValues, MultiTokenValue{ID: amount(tv.ID), Value: amount(tv.Value)})
				}
			}
			// As Blockbook: a balances answer lists only tokens with
			// holdings (an ERC721 or ERC1155 fully given away is left out).
			if t.Balance == nil && len(t.IDs) == 0 && len(t.MultiTokenValues) == 0 {
				continue
			}
		}
		out = append(out, t)
	}
	sortTokens(out)
	return out, nil
}

// sortTokens orders tokens as Blockbook does: by value in coins
// (baseValue) descending, then named ones first by name, then unnamed
// ones, each by contract.
func sortTokens(ts []Token) {
	sort.SliceStable(ts, func(i, j int) bool {
		a, b := &ts[i], &ts[j]
		if a.BaseValue != b.BaseValue {
			return a.BaseValue > b.BaseValue
		}
		if (a.Name == "") != (b.Name == "") {
			return a.Name != ""
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Contract < b.Contract
	})
}

// addressPage returns the txids of the requested page, newest first, and
// fills in the paging fields. Unfiltered, the total is the address's tx
// count; filtered (heights, contract), the matching txs are counted up to
// a bound.
func (s *EthService) addressPage(ctx context.Context, r *ethRenderer, desc bchain.AddrDesc, ac *db.AddrContracts,
	contract bchain.AddrDesc, q AddressQuery, pg *Paging) ([]bchain.Hash, error) {
	high, low := ^uint32(0), uint32(0)
	if q.FromHeight > 0 {
		low = q.FromHeight
	}
	if q.ToHeight > 0 {
		high = q.ToHeight
	}
	maxPage := s.cfg.Limits.MaxPageSize
	if contract == nil && low == 0 && high == ^uint32(0) {
		page, size, total := clampPaging(q.Page, q.PageSize, int(ac.Txs), maxPage)
		if maxP := s.cfg.Limits.MaxTxOffset/size + 1; page > maxP {
			page = maxP
		}
		*pg = Paging{Page: page, TotalPages: total, ItemsOnPage: size}
		return s.collectTxids(ctx, r, desc, high, low, nil, (page-1)*size, size)
	}
	var all []bchain.Hash
	limit := s.cfg.Limits.MaxTxOffset + maxPage
	if contract != nil {
		limit = min(limit, 10*maxPage) // each candidate may cost a node request
	}
	if low <= high {
		var err error
		if all, err = s.collectTxids(ctx, r, desc, high, low, contract, 0, limit); err != nil {
			return nil, err
		}
	}
	page, size, total := clampPaging(q.Page, q.PageSize, len(all), maxPage)
	if len(all) >= limit {
		total = -1 // more than we counted
	}
	*pg = Paging{Page: page, TotalPages: total, ItemsOnPage: size}
	start := min((page-1)*size, len(all))
	return all[start:min(start+size, len(all))], nil
}

// collectTxids walks an address's txs newest first from height high down
// to low, keeping those that involve contract (when given), skipping skip
// and returning up to limit.
func (s *EthService) collectTxids(ctx context.Context, r *ethRenderer, desc bchain.AddrDesc, high, low uint32,
	contract bchain.AddrDesc, skip, limit int) ([]bchain.Hash, error) {
	if limit <= 0 {
		return nil, nil
	}
	var out []bchain.Hash
	err := db.IterateEthAddrTxs(r.v.snap, desc, high, low, func(row db.EthAddrTxsAt) (bool, error) {
		for _, t := range row.Txs {
			if contract != nil {
				ok, err := r.involves(ctx, t, contract)
				if err != nil {
					return false, err
				}
				if !ok {
					continue
				}
			}
			if skip > 0 {
				skip--
				continue
			}
			out = append(out, t.Txid)
			if len(out) >= limit {
				return false, nil
			}
		}
		return true, nil
	})
	return out, err
}

// involves tells whether the address's part in a tx concerns contract: a
// transfer of its token, or the tx calls it.
func (r *ethRenderer) involves(ctx context.Context, t db.EthAddrTx, contract bchain.AddrDesc) (bool, error) {
	tx, err := r.tx(ctx, t.Txid)
	if err != nil {
		return false, err
	}
	want := r.s.addr(contract)
	if len(tx.Vout) == 1 && len(tx.Vout[0].Addresses) == 1 && tx.Vout[0].Addresses[0] == want {
		return true, nil
	}
	for _, tt := range tx.TokenTransfers {
		if tt.Contract == want {
			return true, nil
		}
	}
	return false, nil
}
