package api

import (
	"context"
	"fmt"
	"math/big"
	"sort"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/db"
)

// DefaultGroupBy is the bucket width of balance histories when the request
// names none (Blockbook's: one hour).
const DefaultGroupBy = 3600

// BalanceHistory answers balancehistory/{address|xpub|descriptor} and the
// websocket's getBalanceHistory: confirmed txs whose block time is in
// [From, To), grouped into buckets of GroupBy seconds, oldest first. For an
// account, each tx counts once and what it moves between the account's own
// addresses shows as sentToSelf.
func (s *UtxoService) BalanceHistory(ctx context.Context, descriptor string, q BalanceHistoryQuery) ([]BalanceHistory, error) {
	xd, err := s.parseAccount(descriptor)
	if err != nil && !IsNotAccount(err) {
		return nil, err
	}
	var desc bchain.AddrDesc
	if xd == nil {
		if desc, err = s.addrDesc(descriptor); err != nil {
			return nil, err
		}
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
	descs := []bchain.AddrDesc{desc}
	if xd != nil {
		a, err := s.account(ctx, v, xd, s.gapOf(q.Gap))
		if err != nil {
			return nil, err
		}
		descs = descs[:0]
		_ = a.usedAddrs(func(ad *xpubAddr) error { descs = append(descs, ad.desc); return nil })
		s.releaseAccount(a)
	}
	buckets, err := s.historyBuckets(ctx, v, descs, from, to, groupBy, s.cfg.Limits.historyCap(q))
	if err != nil {
		return nil, err
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

// historyBuckets streams the txs of descs (an address, or the used
// addresses of an account) from the index, holding only one entry per
// bucket. A tx touching several of the addresses is counted once, at the
// first of them in descs that it touches.
func (s *UtxoService) historyBuckets(ctx context.Context, v *view, descs []bchain.AddrDesc, from, to, groupBy int64, limit int) (map[int64]*BalanceHistory, error) {
	rank := make(map[string]int, len(descs))
	for i, d := range descs {
		rank[string(d)] = i
	}
	times := map[uint32]int64{}
	buckets := map[int64]*BalanceHistory{}
	seen := 0
	for r, desc := range descs {
		err := db.IterateAddrTxs(v.snap, desc, ^uint32(0), 0, func(row db.AddrTxsAt) (bool, error) {
			if err := ctx.Err(); err != nil {
				return false, err
			}
			t, ok := times[row.Height]
			if !ok {
				meta, err := db.ReadBlockMeta(v.snap, row.Height)
				if err != nil {
					return false, err
				}
				if meta == nil {
					return false, fmt.Errorf("%w: address row at height %d without block", db.ErrCorrupt, row.Height)
				}
				t = meta.Time
				times[row.Height] = t
			}
			if t < from || t >= to {
				return true, nil
			}
			for _, tx := range row.Txs {
				if seen++; limit > 0 && seen > limit {
					return false, userErr("More than %d transactions in the range; narrow it with from and to", limit)
				}
				ta, err := db.ReadTxAddresses(v.snap, tx.Txid)
				if err != nil {
					return false, err
				}
				if ta == nil {
					return false, fmt.Errorf("%w: indexed tx %s has no txAddresses row", db.ErrCorrupt, tx.Txid)
				}
				if len(descs) > 1 && firstRank(ta, rank) != r {
					continue // counted at another of the account's addresses
				}
				start := t - t%groupBy
				b := buckets[start]
				if b == nil {
					b = &BalanceHistory{Time: start, Received: NewAmount(0), Sent: NewAmount(0), SentToSelf: NewAmount(0)}
					buckets[start] = b
				}
				b.Txs++
				addTxToBucket(b, ta, rank)
			}
			return true, nil
		})
		if err != nil {
			return nil, err
		}
	}
	return buckets, nil
}

// firstRank returns the smallest rank of the addresses a tx touches.
func firstRank(ta *db.TxAddresses, rank map[string]int) int {
	best := -1
	for _, l := range [2][]db.TxAddr{ta.Inputs, ta.Outputs} {
		for i := range l {
			if r, ok := rank[string(l[i].Desc)]; ok && (best < 0 || r < best) {
				best = r
			}
		}
	}
	return best
}

// addTxToBucket adds what tx moved for the addresses in own: received is
// what its outputs pay to them, sent what its inputs spend from them, and
// sentToSelf what it pays back to them when they also fund it (Blockbook's
// definition, for an account as a whole).
func addTxToBucket(b *BalanceHistory, ta *db.TxAddresses, own map[string]int) {
	received, sent, self := (*big.Int)(b.Received), (*big.Int)(b.Sent), (*big.Int)(b.SentToSelf)
	funds := false
	for _, in := range ta.Inputs {
		if _, ok := own[string(in.Desc)]; ok {
			sent.Add(sent, new(big.Int).SetUint64(in.Value))
			funds = true
		}
	}
	for _, o := range ta.Outputs {
		if _, ok := own[string(o.Desc)]; ok {
			v := new(big.Int).SetUint64(o.Value)
			received.Add(received, v)
			if funds {
				self.Add(self, v)
			}
		}
	}
}
