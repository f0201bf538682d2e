package mempool

import (
	"bytes"
	"cmp"
	"slices"
)

// Txs lists every mempool tx, newest first (FirstSeen descending, then txid
// ascending), for the explorer's mempool page.
func (m *Mempool) Txs() []*Tx {
	m.mu.RLock()
	out := make([]*Tx, 0, len(m.pool.txs))
	for _, e := range m.pool.txs {
		out = append(out, e.tx)
	}
	m.mu.RUnlock()
	slices.SortFunc(out, func(a, b *Tx) int {
		if c := cmp.Compare(b.FirstSeen, a.FirstSeen); c != 0 {
			return c
		}
		return bytes.Compare(a.Txid[:], b.Txid[:])
	})
	return out
}
