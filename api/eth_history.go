package api

import (
	"context"
	"math/big"
	"sort"
	"sync"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// historyTx is one tx of an address's balance history.
type historyTx struct {
	txid   bchain.Hash
	bucket int64
	roles  []db.EthRole
	tx     *bchain.EthTx      // fetched when the address is the sender or recipient
	rc     *bchain.EthReceipt // likewise
}

// historyFetchers bounds the concurrent tx fetches of a balance history.
const historyFetchers = 8

// BalanceHistory answers balancehistory/{address} on Ethereum-type chains:
// per bucket the txs, the ETH received (values paid to the address, by the
// tx or by internal transfers) and sent (values it paid, and the fees of
// the txs it sent, blob fees included), and sentToSelf (values it paid to
// itself). Token movements are not ETH and do not count. The txs come from
// the index; values, statuses and fees from the node.
func (s *EthService) BalanceHistory(ctx context.Context, address string, q BalanceHistoryQuery) ([]BalanceHistory, error) {
	desc, err := s.addrDesc(address)
	if err != nil {
		return nil, err
	}
	if err := q.check(); err != nil {
		return nil, err
	}
	from, to, groupBy := q.span()
	out := []BalanceHistory{}
	if from >= to {
		return out, nil
	}
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	txs, err := s.historyTxs(v, desc, from, to, groupBy, s.cfg.Limits.historyCap(q))
	if err != nil {
		return nil, err
	}
	if err := s.fetchHistoryTxs(ctx, txs); err != nil {
		return nil, err
	}
	buckets := map[int64]*BalanceHistory{}
	for _, t := range txs {
		b := buckets[t.bucket]
		if b == nil {
			b = &BalanceHistory{Time: t.bucket, Received: NewAmount(0), Sent: NewAmount(0), SentToSelf: NewAmount(0)}
			buckets[t.bucket] = b
		}
		b.Txs++
		if err := s.addHistoryTx(v, desc, t, b); err != nil {
			return nil, err
		}
	}
	for _, b := range buckets {
		out = append(out, *b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Time < out[j].Time })
	if err := s.historyRates(ctx, out, q.Currencies); err != nil {
		return nil, err
	}
	return out, nil
}

// historyTxs lists the address's txs whose block time is in [from, to),
// capped at limit (0: no cap).
func (s *EthService) historyTxs(v *view, desc bchain.AddrDesc, from, to, groupBy int64, limit int) ([]*historyTx, error) {
	var out []*historyTx
	err := db.IterateEthAddrTxs(v.snap, desc, ^uint32(0), 0, func(row db.EthAddrTxsAt) (bool, error) {
		meta, err := db.ReadBlockMeta(v.snap, row.Height)
		if err != nil || meta == nil {
			return false, err
		}
		if meta.Time < from || meta.Time >= to {
			return meta.Time >= from, nil // rows go back in time: stop once before from
		}
		for _, t := range row.Txs {
			if limit > 0 && len(out) >= limit {
				return false, userErr("More than %d transactions in the range; narrow it with from and to", limit)
			}
			out = append(out, &historyTx{txid: t.Txid, bucket: meta.Time - meta.Time%groupBy, roles: t.Roles})
		}
		return true, nil
	})
	return out, err
}

// fetchHistoryTxs fetches the txs (and receipts) in which the address is
// the sender or recipient; other roles need only the index.
func (s *EthService) fetchHistoryTxs(ctx context.Context, txs []*historyTx) error {
	var need []*historyTx
	for _, t := range txs {
		for _, r := range t.roles {
			if r.Kind == db.EthRoleTx || r.Kind == db.EthRoleCreated {
				need = append(need, t)
				break
			}
		}
	}
	ids := make([]bchain.Hash, len(need))
	for i, t := range need {
		ids[i] = t.txid
	}
	rcs, err := s.eth.Receipts(ctx, ids)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, len(need))
	sem := make(chan struct{}, historyFetchers)
	for i, t := range need {
		t.rc = rcs[i]
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			t.tx, errs[i] = s.eth.Tx(ctx, t.txid)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// addHistoryTx adds what one tx moved for the address to its bucket.
func (s *EthService) addHistoryTx(v *view, desc bchain.AddrDesc, t *historyTx, b *BalanceHistory) error {
	received, sent, self := (*big.Int)(b.Received), (*big.Int)(b.Sent), (*big.Int)(b.SentToSelf)
	ok := t.rc == nil || t.rc.Status != bchain.EthStatusFailure
	var id *db.InternalData
	for _, r := range t.roles {
		switch r.Kind {
		case db.EthRoleTx:
			value := t.tx.Value
			if value == nil || !ok {
				value = new(big.Int)
			}
			if r.From {
				sent.Add(sent, value)
				if fee := t.rc.Fee(); fee != nil {
					sent.Add(sent, fee)
				}
				if t.tx.To != nil && string(t.tx.To[:]) == string(desc) {
					self.Add(self, value)
				}
			} else {
				received.Add(received, value)
			}
		case db.EthRoleCreated:
			if ok && t.tx.Value != nil {
				received.Add(received, t.tx.Value)
			}
		case db.EthRoleInternal:
			if id == nil {
				var err error
				if id, err = db.ReadInternalData(v.snap, t.txid); err != nil {
					return err
				}
			}
			if id == nil || int(r.Index) >= len(id.Transfers) {
				continue // the roles come from the same block's rows: a damaged index
			}
			if it := id.Transfers[r.Index]; r.From {
				sent.Add(sent, it.Value)
			} else {
				received.Add(received, it.Value)
			}
		}
	}
	return nil
}
