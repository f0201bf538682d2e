package esplora

import (
	"encoding/json"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
)

// What a push tells of tracked txs beyond their position: the outputs
// that new mempool txs spend (mempool.space's utxoSpent, in tracked-txs
// and, for track-tx, as a message of its own) and the tx's CPFP figures
// when they changed (cpfp in tracked-txs, in txPosition for track-tx).

// Outpoint is an output a mempool tx spends.
type Outpoint struct {
	Txid bchain.Hash
	Vout uint32
}

// spentBy is mempool.space's utxoSpent entry: the input (vin) of the tx
// (txid) that spends the output.
type spentBy struct {
	Vin  int    `json:"vin"`
	Txid string `json:"txid"`
}

// spendNote is one input of a new mempool tx, kept while a client tracks
// a tx (spendWatchers).
type spendNote struct {
	prev Outpoint
	vin  int
	txid bchain.Hash
}

// noteSpends collects tx's inputs for the next push.
func (w *mpWS) noteSpends(txid bchain.Hash, prevouts []Outpoint) {
	if w.spendWatchers.Load() <= 0 || len(prevouts) == 0 {
		return
	}
	w.emu.Lock()
	for i, p := range prevouts {
		if len(w.spends) >= maxMempoolDelta {
			break
		}
		w.spends = append(w.spends, spendNote{p, i, txid})
	}
	w.emu.Unlock()
}

// spentByParent groups the collected spends by the txid they spend from:
// parent → vout → spender (JSON keys are the vouts, as mempool.space's).
func spentByParent(notes []spendNote) map[bchain.Hash]map[uint32]spentBy {
	if len(notes) == 0 {
		return nil
	}
	out := map[bchain.Hash]map[uint32]spentBy{}
	for _, n := range notes {
		m := out[n.prev.Txid]
		if m == nil {
			m = map[uint32]spentBy{}
			out[n.prev.Txid] = m
		}
		m[n.prev.Vout] = spentBy{Vin: n.vin, Txid: n.txid.String()}
	}
	return out
}

// updateWatch counts c among the clients that track a tx (track-tx or
// track-txs), whose parents' spends the hub then collects; c.mu is held.
func (c *wsConn) updateWatchLocked() {
	now := !c.gone && (c.trackTx != nil || len(c.trackTxs) > 0)
	switch {
	case now && !c.watching:
		c.w.spendWatchers.Add(1)
	case !now && c.watching:
		c.w.spendWatchers.Add(-1)
	}
	c.watching = now
}

// trackedCpfp is TxTrackingInfo's cpfp: the tx's in-mempool ancestors,
// descendants and the rate it is mined at.
type trackedCpfp struct {
	Ancestors            []api.CpfpRelative  `json:"ancestors"`
	BestDescendant       json.RawMessage     `json:"bestDescendant"`
	Descendants          *[]api.CpfpRelative `json:"descendants,omitempty"`
	EffectiveFeePerVsize *float64            `json:"effectiveFeePerVsize,omitempty"`
	Sigops               uint32              `json:"sigops"`
	AdjustedVsize        uint32              `json:"adjustedVsize"`
}

// cpfpOf is txid's CPFP figures in this push's projection, once per push
// (nil: not in the mempool).
func (d *wsData) cpfpOf(txid bchain.Hash) (*trackedCpfp, string) {
	if d.cpfp == nil {
		d.cpfp = map[bchain.Hash]cpfpEntry{}
	}
	if e, ok := d.cpfp[txid]; ok {
		return e.info, e.key
	}
	var e cpfpEntry
	if pf := d.w.s.caps.ProjectedFees; pf != nil {
		if c, err := pf.Cpfp(d.ctx, txid.String()); err == nil && c != nil && c.Sigops != nil && c.AdjustedVsize != nil {
			e.info = &trackedCpfp{Ancestors: c.Ancestors, BestDescendant: json.RawMessage("null"), Descendants: c.Descendants,
				EffectiveFeePerVsize: c.EffectiveFeePerVsize, Sigops: *c.Sigops, AdjustedVsize: *c.AdjustedVsize}
			if b, err := json.Marshal(e.info); err == nil {
				e.key = string(b)
			}
		}
	}
	d.cpfp[txid] = e
	return e.info, e.key
}

type cpfpEntry struct {
	info *trackedCpfp
	key  string
}

// cpfpTopic is a tx's CPFP figures as one message kind carries them:
// track-tx's txPosition and track-txs' tracked-txs are told apart.
type cpfpTopic struct {
	txid    bchain.Hash
	tracked bool // tracked-txs, else txPosition
}

// newCpfp is txid's CPFP figures when they differ from those c was last
// told in that kind of message (mempool.space sends them when they
// changed); nil otherwise.
func (d *wsData) newCpfp(c *wsConn, txid bchain.Hash, tracked bool) *trackedCpfp {
	info, key := d.cpfpOf(txid)
	if info == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	topic := cpfpTopic{txid, tracked}
	if c.cpfpTold[topic] == key {
		return nil
	}
	if c.cpfpTold == nil {
		c.cpfpTold = map[cpfpTopic]string{}
	}
	c.cpfpTold[topic] = key
	return info
}
