package esplora

import (
	"encoding/json"
	"math"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
)

// track-mempool-block's projected-block-transactions: the whole list when
// a client starts tracking, then, as mempool.space sends them, deltas
// (added, removed, changed) against the list last pushed. A client gets
// the whole list again when it may not hold that list (it started
// tracking before the hub had one), or when more than half of the block
// is new (mempool.space's rule after a block).

// pushedBlock is a tracked projected block as last pushed (hub state).
type pushedBlock struct {
	seq   uint64
	txs   map[bchain.Hash]rateFlags
	full  json.RawMessage // projected-block-transactions with every tx
	frame []byte          // {"projected-block-transactions": full}, shared
	delta json.RawMessage // the delta from the previous push; nil: send full
	prev  uint64          // the sequence the delta applies to
}

type rateFlags struct {
	rate  float64
	flags uint64
}

// compressedTx is mempool.space's TransactionCompressed: [txid, fee, vsize,
// value, rate, flags, time].
func compressedTx(t api.ProjectedTx) [7]any {
	return [7]any{t.Txid.String(), t.Fee, t.VSize, t.Value, roundRate(t.Rate), t.Flags, t.Time}
}

func roundRate(r float64) float64 { return math.Round(r*100) / 100 }

// blockTxs is projected block i's txs, once per push (nil: none).
func (d *wsData) blockTxs(i int) []api.ProjectedTx {
	if txs, ok := d.txs[i]; ok {
		return txs
	}
	var txs []api.ProjectedTx
	if pf := d.w.s.caps.ProjectedFees; pf != nil {
		txs, _ = pf.ProjectedBlockTxs(d.ctx, i)
	}
	if d.txs == nil {
		d.txs = map[int][]api.ProjectedTx{}
	}
	d.txs[i] = txs
	return txs
}

// fullMsg is projected-block-transactions with every tx of txs.
func fullMsg(i int, seq uint64, txs []api.ProjectedTx) json.RawMessage {
	list := make([][7]any, len(txs))
	for j, t := range txs {
		list[j] = compressedTx(t)
	}
	b, _ := json.Marshal(struct {
		Index             int      `json:"index"`
		Sequence          uint64   `json:"sequence"`
		BlockTransactions [][7]any `json:"blockTransactions"`
	}{i, seq, list})
	return b
}

// blockDelta is mempool.space's MempoolBlockDelta; changed entries are
// [txid, rate, flags, accelerated (always 0)].
type blockDelta struct {
	Added   [][7]any `json:"added"`
	Removed []string `json:"removed"`
	Changed [][4]any `json:"changed"`
}

// startTracking makes c track projected block i and sends it the list
// the hub last pushed, which later deltas apply to, or (when it pushed
// none) the current one, which the next push replaces whole. c.blockMu
// is held from the choice of the list to its send, so that the hub's
// next update for c is queued after it.
func (w *mpWS) startTracking(c *wsConn, i int, d *wsData) {
	c.blockMu.Lock()
	defer c.blockMu.Unlock()
	c.mu.Lock()
	c.mempoolBlock = i
	c.mu.Unlock()
	w.bmu.Lock()
	st := w.pushed[i]
	w.bmu.Unlock()
	if w.trackingHook != nil {
		w.trackingHook()
	}
	c.mu.Lock()
	if st != nil {
		c.blockSeq = st.seq
		c.mu.Unlock()
		c.SendShared(st.frame)
		return
	}
	c.blockSeq = 0
	c.mu.Unlock()
	if txs := d.blockTxs(i); txs != nil {
		m := &wsMsg{}
		m.add("projected-block-transactions", fullMsg(i, w.seq.Load(), txs))
		c.send(m.bytes())
	}
}

// blockUpdates computes, for each tracked projected block that changed
// since the last push, its new state (hub goroutine).
func (d *wsData) blockUpdates(conns []*wsConn, seq uint64) map[int]*pushedBlock {
	tracked := map[int]bool{}
	for _, c := range conns {
		c.mu.Lock()
		if c.mempoolBlock >= 0 {
			tracked[c.mempoolBlock] = true
		}
		c.mu.Unlock()
	}
	w := d.w
	w.bmu.Lock()
	defer w.bmu.Unlock()
	for i := range w.pushed {
		if !tracked[i] {
			delete(w.pushed, i)
		}
	}
	out := map[int]*pushedBlock{}
	for i := range tracked {
		txs := d.blockTxs(i)
		if txs == nil {
			continue
		}
		st := &pushedBlock{seq: seq, txs: make(map[bchain.Hash]rateFlags, len(txs)), full: fullMsg(i, seq, txs)}
		m := &wsMsg{}
		m.add("projected-block-transactions", st.full)
		st.frame = m.bytes()
		for _, t := range txs {
			st.txs[t.Txid] = rateFlags{roundRate(t.Rate), t.Flags}
		}
		prev := w.pushed[i]
		if prev != nil {
			delta := blockDelta{Added: [][7]any{}, Removed: []string{}, Changed: [][4]any{}}
			for _, t := range txs {
				old, ok := prev.txs[t.Txid]
				switch {
				case !ok:
					delta.Added = append(delta.Added, compressedTx(t))
				case old != st.txs[t.Txid]:
					delta.Changed = append(delta.Changed, [4]any{t.Txid.String(), roundRate(t.Rate), t.Flags, 0})
				}
			}
			for id := range prev.txs {
				if _, ok := st.txs[id]; !ok {
					delta.Removed = append(delta.Removed, id.String())
				}
			}
			if len(delta.Added)+len(delta.Removed)+len(delta.Changed) == 0 {
				continue
			}
			if len(delta.Added) <= len(txs)/2 {
				st.delta, _ = json.Marshal(struct {
					Index    int        `json:"index"`
					Sequence uint64     `json:"sequence"`
					Delta    blockDelta `json:"delta"`
				}{i, seq, delta})
				st.prev = prev.seq
			}
		}
		w.pushed[i] = st
		out[i] = st
	}
	return out
}

// addMempoolBlock adds c's tracked block's update: the delta when c holds
// the list it applies to, otherwise the whole list.
func addMempoolBlock(c *wsConn, updates map[int]*pushedBlock, out *wsMsg) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mempoolBlock < 0 {
		return
	}
	u := updates[c.mempoolBlock]
	if u == nil || c.blockSeq == u.seq { // nothing new, or c was just sent u
		return
	}
	if u.delta != nil && c.blockSeq == u.prev {
		out.add("projected-block-transactions", u.delta)
	} else {
		out.add("projected-block-transactions", u.full)
	}
	c.blockSeq = u.seq
}
