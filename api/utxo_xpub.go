package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
	"github.com/openexplorer/blockbook/mempool"
)

// parseAccount parses an xpub or descriptor. Strings not shaped like one
// give a user error wrapping bchain.ErrNotXpub, so that callers accepting
// addresses too can tell them apart from malformed accounts.
func (s *UtxoService) parseAccount(descriptor string) (*bchain.XpubDescriptor, error) {
	if s.backend.Xpub == nil { // no string is an account (not offered, see utxoAccounts)
		return nil, fmt.Errorf("%w: the coin's parser reads no xpubs", bchain.ErrNotXpub)
	}
	xd, err := s.backend.Xpub.ParseXpub(descriptor)
	switch {
	case errors.Is(err, bchain.ErrNotXpub):
		return nil, &Error{Msg: fmt.Sprintf("Invalid xpub or descriptor '%s': neither an extended public key nor an output descriptor", truncate(descriptor, 120)), Err: err}
	case errors.Is(err, bchain.ErrInvalidXpub):
		return nil, &Error{Msg: "Invalid xpub or descriptor, " + errorDetail(err, bchain.ErrInvalidXpub), Err: err}
	case err != nil:
		return nil, err
	}
	return xd, nil
}

// errorDetail strips a sentinel's text from the front of an error message.
func errorDetail(err, sentinel error) string {
	msg, prefix := err.Error(), sentinel.Error()+": "
	if len(msg) > len(prefix) && msg[:len(prefix)] == prefix {
		return msg[len(prefix):]
	}
	return msg
}

// IsNotAccount reports an error of a call taking an account for a string
// that is no xpub or descriptor at all (it may be an address).
func IsNotAccount(err error) bool { return errors.Is(err, bchain.ErrNotXpub) }

// utxoAccounts is the accounts capability of a Bitcoin-type service whose
// coin parser reads xpubs and descriptors.
type utxoAccounts struct{ *UtxoService }

// Account answers xpub/{xpub|descriptor} and the websocket's getAccountInfo
// for accounts, in Blockbook's Address shape: sums over the derived
// addresses, their tokens (XPUBAddress entries), each tx once.
func (s utxoAccounts) Account(ctx context.Context, descriptor string, q AddressQuery) (*Address, error) {
	if err := CheckProtocols(q.Protocols, false); err != nil {
		return nil, err
	}
	xd, err := s.parseAccount(descriptor)
	if err != nil {
		return nil, err
	}
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	a, err := s.account(ctx, v, xd, s.gapOf(q.Gap))
	if err != nil {
		return nil, err
	}
	defer s.releaseAccount(a)
	out := &Address{Address: descriptor}
	var balance, sent big.Int
	_ = a.usedAddrs(func(ad *xpubAddr) error {
		balance.Add(&balance, new(big.Int).SetUint64(ad.bal.Balance))
		sent.Add(&sent, new(big.Int).SetUint64(ad.bal.Sent))
		out.AddrTxCount += int(ad.bal.Txs)
		out.UsedTokens++
		return nil
	})
	out.Balance, out.TotalSent = (*Amount)(&balance), (*Amount)(&sent)
	out.TotalReceived = (*Amount)(new(big.Int).Add(&balance, &sent))
	confirmed, err := s.confirmedTxs(ctx, v, a)
	if err != nil {
		return nil, err
	}
	out.Txs = len(confirmed)
	if q.Runes {
		if out.Runes, err = accountRunes(v.snap, a); err != nil {
			return nil, err
		}
	}
	pending, err := s.accountPending(v, a, q, out)
	if err != nil {
		return nil, err
	}
	if q.Runes && q.ToHeight == 0 {
		if out.UnconfirmedRunes, err = s.accountUnconfirmedRunes(v, a); err != nil {
			return nil, err
		}
	} else if q.Runes {
		// a to-height leaves the mempool out: nothing pending, as
		// unconfirmedBalance is then 0 (and the address answer's alike)
		out.UnconfirmedRunes = &[]RuneBalance{}
	}
	if q.Secondary != "" {
		if val, ok := s.secondaryValue(ctx, &balance, q.Secondary); ok {
			out.SecondaryValue = val
		}
	}
	if q.Details > DetailsBasic {
		out.Tokens = s.accountTokens(a, q)
	}
	if q.Details < DetailsTxids {
		return out, nil
	}
	page := s.accountPage(a, confirmed, q, &out.Paging)
	if out.Page > 1 {
		pending = nil
	}
	if err := s.renderAccountTxs(ctx, v, a, q.Details, pending, page, out, s.newListRunes(v, q.ListRunes)); err != nil {
		return nil, err
	}
	return out, nil
}

// accountTokens lists the derived addresses the query's tokens parameter
// selects, chain by chain in index order.
func (s *UtxoService) accountTokens(a *xpubAccount, q AddressQuery) []Token {
	var out []Token
	for _, c := range a.chains {
		for i, ad := range c.addrs {
			used := ad.bal != nil
			if q.Tokens == TokensUsed && !used || q.Tokens == TokensNonzero && (!used || ad.bal.Balance == 0) {
				continue
			}
			t := Token{Type: "XPUBAddress", Standard: "XPUBAddress", Name: ad.name, Path: a.path(c.change, i),
				Decimals: s.backend.Params.Decimals}
			if used {
				t.Transfers = int(ad.bal.Txs)
				if q.Details >= DetailsTokenBalances {
					t.Balance, t.TotalReceived, t.TotalSent = NewAmount(ad.bal.Balance), NewAmount(ad.bal.Received()), NewAmount(ad.bal.Sent)
				}
			}
			out = append(out, t)
		}
	}
	return out
}

// accountPage selects the requested page of the account's confirmed txs
// (in Blockbook's order), after the height range and the filter, and fills
// in the paging fields. A filtered list is merged afresh from the
// addresses' lists, as Blockbook's is: a tx is kept at its first entry
// that matches, which may sort differently from its first entry.
func (s *UtxoService) accountPage(a *xpubAccount, confirmed []xpubTx, q AddressQuery, pg *Paging) []xpubTx {
	list := confirmed
	if q.FromHeight > 0 || q.ToHeight > 0 || q.Filter.active() {
		to := q.ToHeight
		if to == 0 {
			to = ^uint32(0)
		}
		list = mergeAccountTxs(a.txLists(), func(t xpubTx) bool {
			return t.height >= q.FromHeight && t.height <= to && q.Filter.matchesTouch(t.touch)
		})
	}
	page, size, total := clampPaging(q.Page, q.PageSize, len(list), s.cfg.Limits.MaxPageSize)
	*pg = Paging{Page: page, TotalPages: total, ItemsOnPage: size}
	start := min((page-1)*size, len(list))
	return list[start:min(start+size, len(list))]
}

// matchesTouch applies a filter to an account's tx: inputs and outputs
// select txs spending from or paying to the account; an output index
// cannot name one output of many addresses and selects the txs paying to
// the account, as Blockbook's account filter does.
func (f Filter) matchesTouch(t uint8) bool {
	switch {
	case f.Inputs:
		return t&touchInput != 0
	case f.Outputs, f.Vout >= 0:
		return t&touchOutput != 0
	}
	return true
}

// accountPendingTx is a mempool tx touching an account.
type accountPendingTx struct {
	tx    *mempool.Tx
	touch uint8
}

// accountPending fills the unconfirmed fields of an account answer and
// returns the pending txs to list on the first page, newest first. As in
// Blockbook, a to-height excludes the mempool, and a from-height or a
// filter keeps pending txs out of the list but not out of the counts.
func (s *UtxoService) accountPending(v *view, a *xpubAccount, q AddressQuery, out *Address) ([]accountPendingTx, error) {
	out.UnconfirmedBalance = NewAmount(0)
	if s.cfg.Mempool == nil || q.ToHeight > 0 {
		return nil, nil
	}
	pending, err := s.accountMempool(v, a)
	if err != nil {
		return nil, err
	}
	bal := new(big.Int)
	var listed []accountPendingTx
	for _, p := range pending {
		out.UnconfirmedTxs++
		for _, c := range a.chains {
			for _, ad := range c.addrs {
				if p.touchesDesc(ad.desc) {
					bal.Add(bal, balanceDelta(p.tx, ad.desc))
				}
			}
		}
		if q.FromHeight == 0 && q.Filter.matchesTouch(p.touch) {
			listed = append(listed, p)
		}
	}
	out.UnconfirmedBalance = (*Amount)(bal)
	return listed, nil
}

// touchesDesc reports whether a pending tx pays to or spends from desc.
func (p accountPendingTx) touchesDesc(desc []byte) bool {
	for _, d := range p.tx.OutDescs {
		if bytes.Equal(d, desc) {
			return true
		}
	}
	for i := range p.tx.Prevouts {
		if pr := &p.tx.Prevouts[i]; pr.Known && bytes.Equal(pr.Desc, desc) {
			return true
		}
	}
	return false
}

// accountMempool returns the mempool txs touching any derived address of
// the account once each, newest first (first seen descending, then txid),
// leaving out those the view already holds as confirmed.
func (s *UtxoService) accountMempool(v *view, a *xpubAccount) ([]accountPendingTx, error) {
	if s.cfg.Mempool == nil {
		return nil, nil
	}
	seen := map[bchain.Hash]int{}
	var out []accountPendingTx
	for _, c := range a.chains {
		for _, ad := range c.addrs {
			for _, at := range s.cfg.Mempool.AddrTxs(ad.desc) {
				if i, ok := seen[at.Txid]; ok {
					out[i].touch |= touchOf(at.Indexes)
					continue
				}
				tx, ok := s.cfg.Mempool.Tx(at.Txid)
				if !ok {
					continue
				}
				if ta, err := db.ReadTxOutputs(v.snap, at.Txid); err != nil {
					return nil, err
				} else if ta != nil {
					continue // the mempool has not seen the block yet
				}
				seen[at.Txid] = len(out)
				out = append(out, accountPendingTx{tx: tx, touch: touchOf(at.Indexes)})
			}
		}
	}
	slices.SortStableFunc(out, func(x, y accountPendingTx) int {
		if x.tx.FirstSeen != y.tx.FirstSeen {
			if x.tx.FirstSeen > y.tx.FirstSeen {
				return -1
			}
			return 1
		}
		return bytes.Compare(x.tx.Txid[:], y.tx.Txid[:])
	})
	return out, nil
}

// renderAccountTxs adds the page's txs (pending ones first) in the form
// details asks for, marking the account's inputs and outputs as own.
func (s *UtxoService) renderAccountTxs(ctx context.Context, v *view, a *xpubAccount, details Details,
	pending []accountPendingTx, page []xpubTx, out *Address, lr *listRunes) error {
	txids, err := pageTxids(v, page)
	if err != nil {
		return err
	}
	switch details {
	case DetailsTxids:
		out.Txids = make([]string, 0, len(pending)+len(page))
		for _, p := range pending {
			out.Txids = append(out.Txids, p.tx.Txid.String())
		}
		for _, t := range txids {
			out.Txids = append(out.Txids, t.String())
		}
		return nil
	case DetailsTxsLight:
		for _, p := range pending {
			tx, err := s.renderTx(ctx, v, p.tx.Tx, txRecord{mtx: p.tx}, true)
			if err == nil {
				err = lr.add(tx, nil, p.tx)
			}
			if err != nil {
				return err
			}
			out.Transactions = append(out.Transactions, tx)
		}
		txs, err := s.renderLightTxs(v, txids, lr)
		if err != nil {
			return err
		}
		out.Transactions = append(out.Transactions, txs...)
	default:
		ids := make([]bchain.Hash, 0, len(pending)+len(page))
		for _, p := range pending {
			ids = append(ids, p.tx.Txid)
		}
		txs, err := s.renderTxs(ctx, v, append(ids, txids...), lr != nil)
		if err != nil {
			return err
		}
		out.Transactions = txs
	}
	names := a.ownNames()
	for _, tx := range out.Transactions {
		markOwnAccount(tx, names)
	}
	return nil
}

// pageTxids reads the txids of a page of an account's txs, each blockTxids
// row they lie in once.
func pageTxids(v *view, page []xpubTx) ([]bchain.Hash, error) {
	positions := make([]db.TxPos, len(page))
	for i, t := range page {
		positions[i] = db.TxPos{Height: t.height, Index: t.index}
	}
	return db.ReadTxidsAt(v.snap, positions)
}

// markOwnAccount flags the inputs and outputs paying or spending one of the
// account's addresses (Blockbook's isOwn).
func markOwnAccount(tx *Tx, names map[string]struct{}) {
	own := func(addrs []string) bool {
		if len(addrs) != 1 {
			return false
		}
		_, ok := names[addrs[0]]
		return ok
	}
	for i := range tx.Vin {
		tx.Vin[i].IsOwn = own(tx.Vin[i].Addresses)
	}
	for i := range tx.Vout {
		tx.Vout[i].IsOwn = own(tx.Vout[i].Addresses)
	}
}
