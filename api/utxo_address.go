package api

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"sync"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// addrDesc validates an address parameter.
func (s *UtxoService) addrDesc(address string) (bchain.AddrDesc, error) {
	desc, err := s.parser.AddrDescFromAddress(address)
	if err != nil {
		reason := strings.TrimPrefix(err.Error(), bchain.ErrInvalidAddress.Error()+": ")
		return nil, &Error{Msg: fmt.Sprintf("Invalid address, %s", reason), Err: err}
	}
	return desc, nil
}

// Address answers address/{address}. A valid address the index never saw
// answers zeros. Pending txs come first on the first page.
func (s *UtxoService) Address(ctx context.Context, address string, q AddressQuery) (*Address, error) {
	if err := CheckProtocols(q.Protocols, false); err != nil {
		return nil, err
	}
	desc, err := s.addrDesc(address)
	if err != nil {
		return nil, err
	}
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	bal, err := db.ReadAddrBalance(v.snap, desc)
	if err != nil {
		return nil, err
	}
	if bal == nil {
		bal = &db.AddrBalance{}
	}
	if canonical, ok := s.DescAddress(desc); ok {
		address = canonical // e.g. bech32 in lower case, as Blockbook answers
	}
	out := &Address{
		Address: address, Balance: NewAmount(bal.Balance), TotalReceived: NewAmount(bal.Received()),
		TotalSent: NewAmount(bal.Sent), Txs: int(bal.Txs),
	}
	pending, err := s.addPending(v, desc, q, out)
	if err != nil {
		return nil, err
	}
	if q.Runes {
		if out.Runes, err = addressRunes(v.snap, desc); err != nil {
			return nil, err
		}
		own := func(d bchain.AddrDesc) bool { return bytes.Equal(d, desc) }
		if out.UnconfirmedRunes, err = s.pendingRunes(v).delta(mempoolTxsOf(pending), own); err != nil {
			return nil, err
		}
	}
	if q.Secondary != "" {
		if val, ok := s.secondaryValue(ctx, new(big.Int).SetUint64(bal.Balance), q.Secondary); ok {
			out.SecondaryValue = val
		}
	}
	if q.Details < DetailsTxids {
		return out, nil
	}
	txids, err := s.addressPage(v, desc, bal, q, &out.Paging)
	if err != nil {
		return nil, err
	}
	if out.Page > 1 {
		pending = nil
	}
	if err := s.addressTxs(ctx, v, q.Details, pending, txids, out, s.newListRunes(v, q.ListRunes)); err != nil {
		return nil, err
	}
	for _, tx := range out.Transactions {
		markOwn(tx, address)
	}
	return out, nil
}

// addressTxs fills out's txids or txs at the detail level asked: pending
// ones first, then the confirmed page (with their runes by lr).
func (s *UtxoService) addressTxs(ctx context.Context, v *view, details Details, pending []pendingTx, txids []bchain.Hash, out *Address, lr *listRunes) error {
	switch details {
	case DetailsTxids:
		out.Txids = make([]string, 0, len(pending)+len(txids))
		for _, p := range pending {
			out.Txids = append(out.Txids, p.tx.Txid.String())
		}
		out.Txids = appendHashStrings(out.Txids, txids)
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
		all := make([]bchain.Hash, 0, len(pending)+len(txids))
		for _, p := range pending {
			all = append(all, p.tx.Txid)
		}
		txs, err := s.renderTxs(ctx, v, append(all, txids...), lr != nil)
		if err != nil {
			return err
		}
		out.Transactions = txs
	}
	return nil
}

// appendHashStrings appends Hash.String of each hash to dst, the strings
// sharing one allocation: a page lists up to a thousand.
func appendHashStrings(dst []string, hs []bchain.Hash) []string {
	var b strings.Builder
	b.Grow(64 * len(hs))
	for i := range hs {
		var h [64]byte
		hex.Encode(h[:], hs[i][:])
		b.Write(h[:])
	}
	all := b.String()
	for i := range hs {
		dst = append(dst, all[64*i:64*i+64])
	}
	return dst
}

// markOwn flags the inputs and outputs of address (Blockbook's isOwn).
func markOwn(tx *Tx, address string) {
	for i := range tx.Vin {
		tx.Vin[i].IsOwn = len(tx.Vin[i].Addresses) == 1 && tx.Vin[i].Addresses[0] == address
	}
	for i := range tx.Vout {
		tx.Vout[i].IsOwn = len(tx.Vout[i].Addresses) == 1 && tx.Vout[i].Addresses[0] == address
	}
}

// addressPage returns the txids of the requested page, newest first, and
// fills in the paging fields.
func (s *UtxoService) addressPage(v *view, desc bchain.AddrDesc, bal *db.AddrBalance, q AddressQuery, pg *Paging) ([]bchain.Hash, error) {
	from, to := uint32(0), ^uint32(0)
	if q.FromHeight > 0 {
		from = q.FromHeight
	}
	if q.ToHeight > 0 {
		to = q.ToHeight
	}
	maxPage := s.cfg.Limits.MaxPageSize
	if !q.Filter.active() && from == 0 && to == ^uint32(0) {
		// Unfiltered: the total is known, scan only up to the page.
		page, size, total := clampPaging(q.Page, q.PageSize, int(bal.Txs), maxPage)
		page = s.capDepth(page, size)
		*pg = Paging{Page: page, TotalPages: total, ItemsOnPage: size}
		return collectTxids(v, desc, to, from, q.Filter, (page-1)*size, size)
	}
	// Filtered: collect the matching txids (bounded) to know the total.
	var all []bchain.Hash
	limit := s.cfg.Limits.MaxTxOffset + maxPage
	if from <= to {
		var err error
		if all, err = collectTxids(v, desc, to, from, q.Filter, 0, limit); err != nil {
			return nil, err
		}
	}
	page, size, total := clampPaging(q.Page, q.PageSize, len(all), maxPage)
	if len(all) >= limit {
		total = -1 // more than we counted: unknown, as Blockbook says
	}
	*pg = Paging{Page: page, TotalPages: total, ItemsOnPage: size}
	start := min((page-1)*size, len(all))
	return all[start:min(start+size, len(all))], nil
}

// capDepth clamps a page so that it starts within MaxTxOffset.
func (s *UtxoService) capDepth(page, size int) int {
	if maxPage := s.cfg.Limits.MaxTxOffset/size + 1; page > maxPage {
		return maxPage
	}
	return page
}

// collectTxids walks a descriptor's txs newest first from height high down
// to height low (inclusive), skipping `skip` matching txs and returning up to
// `limit`.
func collectTxids(v *view, desc bchain.AddrDesc, high, low uint32, f Filter, skip, limit int) ([]bchain.Hash, error) {
	if limit <= 0 {
		return nil, nil
	}
	var rows []db.AddrTxsAt
	n := 0
	// Positions only: txids are read for the entries kept, not the
	// skipped, and for all of the page's rows at once.
	want := 0 // a filter's share of the entries is unknown
	if !f.active() {
		want = skip + limit
	}
	err := db.IterateAddrTxPositionsWant(v.snap, desc, high, low, want, func(row db.AddrTxsAt) (bool, error) {
		kept := row.Txs[:0] // filtered in place: the row is decoded for this call
		for _, t := range row.Txs {
			if !f.matches(t.Indexes) {
				continue
			}
			if skip > 0 {
				skip--
				continue
			}
			kept = append(kept, t)
			if n+len(kept) >= limit {
				break
			}
		}
		if len(kept) > 0 {
			rows = append(rows, db.AddrTxsAt{Height: row.Height, Txs: kept})
			n += len(kept)
		}
		return n < limit, nil
	})
	if err == nil {
		err = db.FillRowsTxids(v.snap, rows)
	}
	if err != nil {
		return nil, err
	}
	out := make([]bchain.Hash, 0, n)
	for _, row := range rows {
		for _, t := range row.Txs {
			out = append(out, t.Txid)
		}
	}
	return out, nil
}

// renderTxs renders full txs, fetching uncached ones from the node with
// bounded concurrency; withRunes adds their runes from the records read.
func (s *UtxoService) renderTxs(ctx context.Context, v *view, txids []bchain.Hash, withRunes bool) ([]*Tx, error) {
	if len(txids) > s.cfg.Limits.MaxFullTxs {
		txids = txids[:s.cfg.Limits.MaxFullTxs]
	}
	recs, err := s.pageTxRecords(v, txids)
	if err != nil {
		return nil, err
	}
	if withRunes { // once for the page; each tx's goroutine reads its own runes
		if err := runesOn(v.snap); err != nil {
			return nil, err
		}
	}
	out := make([]*Tx, len(txids))
	errs := make([]error, len(txids))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, t := range txids {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			tx, rec, err := s.loadTxWith(ctx, v, t, recs[i])
			if err == nil {
				out[i], err = s.renderTx(ctx, v, tx, rec, true)
			}
			if err == nil && withRunes {
				lr := s.newListRunes(v, true)
				lr.checked = true
				err = lr.add(out[i], rec.ta, rec.mtx)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// pageTxRecords is confirmedTx for a page of txs (pageRecords), with
// their copies in the tx cache.
func (s *UtxoService) pageTxRecords(v *view, txids []bchain.Hash) ([]readTx, error) {
	out, err := pageRecords(v, txids)
	if err != nil {
		return nil, err
	}
	cached, err := db.ReadCachedTxs(v.snap, txids)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].cached, out[i].cacheRead = cached[i], true
	}
	return out, nil
}

// pageRecords reads what a page of txs needs from the index: their rows,
// the rows their inputs spend from, their outputs' spends and their
// blocks, together (a MultiGet per family on RocksDB, each block once)
// instead of several reads per tx, which were most of a full-tx page's
// time. A tx the index does not hold has no ta.
func pageRecords(v *view, txids []bchain.Hash) ([]readTx, error) {
	tas, err := db.ReadManyTxAddresses(v.snap, txids)
	if err != nil {
		return nil, err
	}
	spends, err := db.ReadManySpends(v.snap, tas)
	if err != nil {
		return nil, err
	}
	out := make([]readTx, len(txids))
	byHeight := make(map[uint32]*db.BlockMeta)
	for i, ta := range tas {
		out[i] = readTx{ta: ta, spends: spends[i], spendsRead: true}
		if ta == nil {
			continue
		}
		meta, ok := byHeight[ta.Height]
		if !ok {
			if meta, err = txBlock(v, txids[i], ta); err != nil {
				return nil, err
			}
			byHeight[ta.Height] = meta
		}
		out[i].meta = meta
	}
	return out, nil
}

// Utxos answers utxo/{address|xpub|descriptor} and the websocket's
// getAccountUtxo: an account's UTXOs (with address and path) when the
// string is an xpub or descriptor, else the address's. Pending outputs
// come first (unless onlyConfirmed), then confirmed ones newest first,
// leaving out outputs a pending tx spends, as Blockbook does.
func (s *UtxoService) Utxos(ctx context.Context, descriptor string, onlyConfirmed bool, gap int) ([]Utxo, error) {
	return s.utxos(ctx, descriptor, onlyConfirmed, gap, false)
}

// utxos answers Utxos, with each output's runes when withRunes.
func (s *UtxoService) utxos(ctx context.Context, descriptor string, onlyConfirmed bool, gap int, withRunes bool) ([]Utxo, error) {
	xd, err := s.parseAccount(descriptor)
	if err == nil {
		return s.accountUtxos(ctx, xd, onlyConfirmed, gap, withRunes)
	}
	if !IsNotAccount(err) {
		return nil, err
	}
	desc, err := s.addrDesc(descriptor)
	if err != nil {
		return nil, err
	}
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	out, err := s.appendUtxos(v, desc, onlyConfirmed, []Utxo{})
	if err == nil && withRunes {
		err = s.utxoRunes(v, out)
	}
	return out, err
}

// appendUtxos appends desc's unspent outputs to out: pending ones first
// (unless onlyConfirmed), then confirmed ones newest first, a block's in
// Blockbook's order (see orderBlockUtxos).
func (s *UtxoService) appendUtxos(v *view, desc bchain.AddrDesc, onlyConfirmed bool, out []Utxo) ([]Utxo, error) {
	if !onlyConfirmed {
		pending, err := s.pendingTxs(v, desc)
		if err != nil {
			return nil, err
		}
		out = append(out, s.pendingUtxos(pending, desc)...)
	}
	// Confirmed, newest block first, by txid within a block; in a pooled
	// slice (a whale's grew to ~1 MB of copies per answer), which nothing
	// keeps past this call.
	usp := utxoScratch.Get().(*[]db.Utxo)
	us := (*usp)[:0]
	defer func() {
		if cap(us) <= maxPooledUtxos {
			*usp = us[:0]
			utxoScratch.Put(usp)
		}
	}()
	err := db.IterateUtxos(v.snap, desc, func(u *db.Utxo) (bool, error) {
		if len(out)+len(us) >= s.cfg.Limits.MaxUtxos {
			return false, userErr("Address has more than %d unspent outputs; use an explorer with a higher limit", s.cfg.Limits.MaxUtxos)
		}
		if onlyConfirmed || !s.spentInMempool(u.Txid, u.Vout) {
			us = append(us, *u)
		}
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	if err := orderBlockUtxos(v, desc, us); err != nil {
		return nil, err
	}
	return appendConfirmedUtxos(v, slices.Grow(out, len(us)), us), nil
}

// utxoScratch holds appendUtxos' lists of confirmed outputs; one that grew
// past maxPooledUtxos is dropped.
var utxoScratch = sync.Pool{New: func() any { return new([]db.Utxo) }}

const maxPooledUtxos = 1 << 16
