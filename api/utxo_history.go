package api

import (
	"bytes"
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

// BalanceHistory answers balancehistory/{address} and the websocket's
// getBalanceHistory for an address: confirmed txs whose block time is in
// [From, To), grouped into buckets of GroupBy seconds, oldest first. It
// streams the address's txs from the index, holding one entry per bucket.
func (s *UtxoService) BalanceHistory(ctx context.Context, address string, q BalanceHistoryQuery) ([]BalanceHistory, error) {
	desc, err := s.addrDesc(address)
	if err != nil {
		return nil, err
	}
	if q.GroupBy == 0 {
		q.GroupBy = DefaultGroupBy
	}
	to := int64(1) << 40
	if q.To > 0 {
		to = q.To
	}
	from := max(q.From, 0)
	out := []BalanceHistory{}
	if from >= to {
		return out, nil
	}
	v, err := s.newView()
	if err != nil {
		return nil, err
	}
	defer v.release()
	times := map[uint32]int64{}
	buckets := map[int64]*BalanceHistory{}
	seen := 0
	err = db.IterateAddrTxs(v.snap, desc, ^uint32(0), 0, func(row db.AddrTxsAt) (bool, error) {
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
			if seen++; seen > s.cfg.Limits.MaxTxOffset {
				return false, userErr("Address has more than %d transactions in the range; narrow it with from and to", s.cfg.Limits.MaxTxOffset)
			}
			ta, err := db.ReadTxAddresses(v.snap, tx.Txid)
			if err != nil {
				return false, err
			}
			if ta == nil {
				return false, fmt.Errorf("%w: indexed tx %s has no txAddresses row", db.ErrCorrupt, tx.Txid)
			}
			start := t - t%int64(q.GroupBy)
			b := buckets[start]
			if b == nil {
				b = &BalanceHistory{Time: start, Received: NewAmount(0), Sent: NewAmount(0), SentToSelf: NewAmount(0)}
				buckets[start] = b
			}
			b.Txs++
			addTxToBucket(b, ta, desc)
		}
		return true, nil
	})
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

// addTxToBucket adds what tx moved for desc: received is what its outputs
// pay to desc, sent what its inputs spend from desc, and sentToSelf what it
// pays back to desc when desc also funds it (Blockbook's definition).
func addTxToBucket(b *BalanceHistory, ta *db.TxAddresses, desc bchain.AddrDesc) {
	received, sent, self := (*big.Int)(b.Received), (*big.Int)(b.Sent), (*big.Int)(b.SentToSelf)
	funds := false
	for _, in := range ta.Inputs {
		if bytes.Equal(in.Desc, desc) {
			sent.Add(sent, new(big.Int).SetUint64(in.Value))
			funds = true
		}
	}
	for _, o := range ta.Outputs {
		if bytes.Equal(o.Desc, desc) {
			v := new(big.Int).SetUint64(o.Value)
			received.Add(received, v)
			if funds {
				self.Add(self, v)
			}
		}
	}
}
