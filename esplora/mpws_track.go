package esplora

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"

	"github.com/openexplorer/blockbook/bchain"
)

// The websocket's RBF parts (track-rbf, track-rbf-summary, a tracked tx's
// replacement) and projected block contents (track-mempool-block).

// trackRbf and addRbfPush serve track-rbf and track-rbf-summary from the
// replacements the mempool saw (api.ReplacementQueries), when there are.
func (w *mpWS) trackRbf(c *wsConn, key string, raw json.RawMessage, d *wsData, out *wsMsg) {
	var mode string
	var on bool
	if key == "track-rbf" {
		_ = json.Unmarshal(raw, &mode)
		if mode != "all" && mode != "fullRbf" {
			mode = ""
		}
	} else {
		on = string(raw) != "false" && string(raw) != "null" && string(raw) != "0" && string(raw) != `""`
	}
	c.mu.Lock()
	if key == "track-rbf" {
		c.rbf = mode
	} else {
		c.rbfSum = on
	}
	c.mu.Unlock()
	if key == "track-rbf" && mode != "" {
		out.add("rbfLatest", d.get(rbfKey(mode)))
	}
	if key == "track-rbf-summary" && on {
		out.add("rbfLatestSummary", d.get("rbfSummary"))
	}
}

func rbfKey(mode string) string {
	if mode == "fullRbf" {
		return "rbfFull"
	}
	return "rbfAll"
}

func (w *mpWS) addRbfPush(c *wsConn, d *wsData, out *wsMsg) {
	c.mu.Lock()
	mode, sum := c.rbf, c.rbfSum
	c.mu.Unlock()
	if mode == "" && !sum {
		return
	}
	if !d.rbfChanged() {
		return
	}
	if mode != "" {
		out.add("rbfLatest", d.get(rbfKey(mode)))
	}
	if sum {
		out.add("rbfLatestSummary", d.get("rbfSummary"))
	}
}

// addReplaced tells a client tracking txid, once, the tx that replaced
// it: {"txid": replacement} under key (rbfTransaction on a push,
// txReplaced when tracking starts).
func (w *mpWS) addReplaced(c *wsConn, txid bchain.Hash, key string, out *wsMsg) {
	r := w.s.caps.Replacements
	if r == nil {
		return
	}
	by, ok := r.ReplacedBy(txid)
	if !ok {
		return
	}
	c.mu.Lock()
	told := c.toldReplaced == txid
	c.toldReplaced = txid
	c.mu.Unlock()
	if !told {
		out.addValue(key, map[string]string{"txid": by})
	}
}

// mempoolBlocks is mempool.space's MEMPOOL_BLOCKS_AMOUNT.
const mempoolBlocks = 8

// blockTxs is projected block i's txs in mempool.space's compressed form
// ([txid, fee, vsize, value, rate, flags, time]; flags 0: we do not
// classify txs), encoded once per push.
func (d *wsData) blockTxs(i int) json.RawMessage {
	key := fmt.Sprintf("block-txs-%d", i)
	if v, ok := d.cache[key]; ok {
		return v
	}
	var b json.RawMessage
	if pf := d.w.s.caps.ProjectedFees; pf != nil {
		if txs, err := pf.ProjectedBlockTxs(d.ctx, i); err == nil {
			list := make([][7]any, len(txs))
			for j, t := range txs {
				list[j] = [7]any{t.Txid.String(), t.Fee, t.VSize, t.Value, math.Round(t.Rate*100) / 100, 0, t.Time}
			}
			b, _ = json.Marshal(list)
		}
	}
	d.cache[key] = b
	return b
}

// blockTxsMsg is projected-block-transactions with every tx of block i,
// encoded once per push.
func (d *wsData) blockTxsMsg(i int) json.RawMessage {
	key := fmt.Sprintf("block-txs-msg-%d", i)
	if v, ok := d.cache[key]; ok {
		return v
	}
	var b json.RawMessage
	if txs := d.blockTxs(i); txs != nil {
		b, _ = json.Marshal(struct {
			Index             int             `json:"index"`
			Sequence          uint64          `json:"sequence"`
			BlockTransactions json.RawMessage `json:"blockTransactions"`
		}{i, d.w.seq.Load(), txs})
	}
	d.cache[key] = b
	return b
}

// changedBlocks reports which tracked projected blocks changed since the
// last push (hub goroutine only).
func (d *wsData) changedBlocks(conns []*wsConn) map[int]bool {
	out := map[int]bool{}
	for _, c := range conns {
		c.mu.Lock()
		i := c.mempoolBlock
		c.mu.Unlock()
		if i < 0 || out[i] {
			continue
		}
		h := fnv.New64a()
		_, _ = h.Write(d.blockTxs(i))
		sum := h.Sum64()
		if d.w.lastBlockTxs[i] != sum {
			out[i] = true
			d.w.lastBlockTxs[i] = sum
		}
	}
	return out
}

// addMempoolBlock adds projected-block-transactions for c's tracked block
// when it changed.
func (d *wsData) addMempoolBlock(c *wsConn, changed map[int]bool, out *wsMsg) {
	c.mu.Lock()
	i := c.mempoolBlock
	c.mu.Unlock()
	if i >= 0 && changed[i] {
		out.add("projected-block-transactions", d.blockTxsMsg(i))
	}
}
