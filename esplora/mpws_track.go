package esplora

import (
	"encoding/json"

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
