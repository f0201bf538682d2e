package esplora

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/openexplorer/blockbook/bchain"
)

// The websocket's tx subscriptions beyond track-tx: track-txs (up to
// maxTrackedTxs txids), track-scriptpubkeys (scripts as hex, up to
// MaxAddresses) and track-mempool / track-mempool-txids (every change of
// the mempool, as full txs or txids).

// maxTrackedTxs is mempool.space's MAX_TRACKED_TXS.
const maxTrackedTxs = 100

// maxMempoolDelta bounds the txids a mempool delta collects between two
// pushes (a resync of a huge mempool adds many at once): past it the
// delta says only what it kept, and the next one starts afresh.
const maxMempoolDelta = 50_000

// spkKey marks a tracked script among a client's tracked addresses (an
// address never holds a colon).
const spkKey = "spk:"

var txidRE = regexp.MustCompile(`^[a-fA-F0-9]{64}$`)

// trackedInfo is mempool.space's TxTrackingInfo, the parts we fill.
type trackedInfo struct {
	ReplacedBy string             `json:"replacedBy,omitempty"`
	Position   *txPosInfo         `json:"position,omitempty"`
	Cpfp       *trackedCpfp       `json:"cpfp,omitempty"`
	UtxoSpent  map[uint32]spentBy `json:"utxoSpent,omitempty"`
	Confirmed  *bool              `json:"confirmed,omitempty"`
}

type txPosInfo struct {
	Block int     `json:"block"`
	VSize float64 `json:"vsize"`
}

// trackTxs follows up to maxTrackedTxs txids; an empty list stops. As in
// mempool.space, strings that are no txids are left out (we also say so)
// and too many txids stop the tracking with track-txs-error (mempool.space
// then closes the connection; we keep it).
func (w *mpWS) trackTxs(c *wsConn, raw json.RawMessage, d *wsData, out *wsMsg) {
	var list []any
	if err := json.Unmarshal(raw, &list); err != nil {
		c.setTrackTxs(nil)
		out.addValue("track-txs-error", "incorrect track-txs format: send an array of txids")
		return
	}
	if len(list) > maxTrackedTxs {
		c.setTrackTxs(nil)
		out.addValue("track-txs-error", fmt.Sprintf("too many txids requested, this connection supports tracking a maximum of %d transactions", maxTrackedTxs))
		return
	}
	var ids []bchain.Hash
	bad := 0
	for _, v := range list {
		s, _ := v.(string)
		h, err := bchain.ParseHash(strings.ToLower(s))
		if !txidRE.MatchString(s) || err != nil {
			bad++
			continue
		}
		if !containsHash(ids, h) {
			ids = append(ids, h)
		}
	}
	c.setTrackTxs(ids)
	if bad > 0 {
		out.addValue("track-txs-error", fmt.Sprintf("track-txs: %d entries are not txids (64 hex digits) and are not tracked", bad))
	}
	if infos := w.trackedInfos(c, ids, d, nil, nil, true); infos != nil {
		out.addValue("tracked-txs", infos)
	}
}

func containsHash(list []bchain.Hash, h bchain.Hash) bool {
	for _, x := range list {
		if x == h {
			return true
		}
	}
	return false
}

func (c *wsConn) setTrackTxs(ids []bchain.Hash) {
	c.mu.Lock()
	c.trackTxs = ids
	c.txsTold = map[bchain.Hash]bool{}
	c.cpfpTold = nil
	c.updateWatchLocked()
	c.mu.Unlock()
}

// trackedInfos is tracked-txs for ids: the replacement of a replaced tx
// (once), the projected position of a pending one and, on a block, the
// mined ones as confirmed. On a mempool push (spent set), also the
// outputs that new txs spend and a pending tx's CPFP figures when they
// changed. first marks the answer to track-txs itself, where a pending tx
// is also marked unconfirmed as mempool.space does.
func (w *mpWS) trackedInfos(c *wsConn, ids []bchain.Hash, d *wsData, mined map[bchain.Hash]bool,
	spent map[bchain.Hash]map[uint32]spentBy, first bool) map[string]trackedInfo {
	if len(ids) == 0 {
		return nil
	}
	set := map[bchain.Hash]struct{}{}
	for _, id := range ids {
		set[id] = struct{}{}
	}
	pos := d.positions(set)
	out := map[string]trackedInfo{}
	no := false
	for _, id := range ids {
		var ti trackedInfo
		has := false
		if mined[id] {
			yes := true
			out[id.String()] = trackedInfo{Confirmed: &yes}
			continue
		}
		replaced := false
		if r := w.s.caps.Replacements; r != nil {
			if by, ok := r.ReplacedBy(id); ok {
				replaced = true
				c.mu.Lock()
				told := c.txsTold[id]
				c.txsTold[id] = true
				c.mu.Unlock()
				if !told {
					ti.ReplacedBy, has = by, true
					if first {
						ti.Confirmed = &no
					}
				}
			}
		}
		if sp := spent[id]; sp != nil {
			ti.UtxoSpent, has = sp, true
		}
		// A replaced tx has left the mempool: a projection not yet
		// rebuilt since must not place it.
		if p, ok := pos[id]; ok && !replaced {
			ti.Position, has = &txPosInfo{Block: p.Block, VSize: p.VSize}, true
			if first {
				ti.Confirmed = &no
			} else if mined == nil {
				ti.Cpfp = d.newCpfp(c, id, true)
			}
		}
		if has {
			out[id.String()] = ti
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// trackScriptPubkeys follows up to MaxAddresses output scripts (hex) as
// multi-scriptpubkey-transactions; anything else in the list is left out,
// and a list with none stops.
func (w *mpWS) trackScriptPubkeys(c *wsConn, raw json.RawMessage, out *wsMsg) {
	var list []any
	if err := json.Unmarshal(raw, &list); err != nil {
		out.addValue("track-scriptpubkeys-error", "track-scriptpubkeys: send an array of output scripts in hex")
		return
	}
	spks := map[string]bchain.AddrDesc{}
	bad := 0
	for _, v := range list {
		s, _ := v.(string)
		b, err := hex.DecodeString(s)
		if err != nil || len(b) == 0 || len(b) > maxScriptBytes {
			bad++
			continue
		}
		spks[spkKey+strings.ToLower(s)] = bchain.AddrDesc(b)
	}
	if len(spks) > w.cfg.MaxAddresses {
		out.addValue("track-scriptpubkeys-error", fmt.Sprintf("too many scriptpubkeys requested, this connection supports tracking a maximum of %d scriptpubkeys", w.cfg.MaxAddresses))
		spks = map[string]bchain.AddrDesc{}
	} else if bad > 0 {
		out.addValue("track-scriptpubkeys-error", fmt.Sprintf("track-scriptpubkeys: %d entries are not scripts in hex (at most %d bytes) and are not tracked", bad, maxScriptBytes))
	}
	w.setSpks(c, spks)
}

// maxScriptBytes is consensus's MAX_SCRIPT_SIZE.
const maxScriptBytes = 10_000

// setSpks replaces c's tracked scripts, keeping its addresses.
func (w *mpWS) setSpks(c *wsConn, spks map[string]bchain.AddrDesc) {
	w.mu.Lock()
	defer w.mu.Unlock()
	c.mu.Lock()
	addrs := map[string]bchain.AddrDesc{}
	for a, d := range c.addrs {
		if !strings.HasPrefix(a, spkKey) {
			addrs[a] = d
		}
	}
	c.mu.Unlock()
	for k, d := range spks {
		addrs[k] = d
	}
	w.untrackLocked(c)
	w.indexLocked(c, addrs)
}

// indexLocked makes addrs c's tracked addresses and scripts and indexes
// them by descriptor; w.mu is held.
func (w *mpWS) indexLocked(c *wsConn, addrs map[string]bchain.AddrDesc) {
	c.mu.Lock()
	c.addrs = addrs
	c.mu.Unlock()
	for _, d := range addrs {
		subs := w.byDesc[string(d)]
		if subs == nil {
			subs = map[*wsConn]struct{}{}
			w.byDesc[string(d)] = subs
		}
		subs[c] = struct{}{}
	}
}

// multiScript is multi-scriptpubkey-transactions for the scripts among
// byAddr's keys; nil when none has a tx.
func (w *mpWS) multiScript(ctx context.Context, byAddr map[string][]bchain.Hash, confirmed bool, cache map[bchain.Hash]json.RawMessage) json.RawMessage {
	spks := map[string][]bchain.Hash{}
	multi := map[string]bool{}
	for k, ids := range byAddr {
		if s, ok := strings.CutPrefix(k, spkKey); ok {
			spks[s] = ids
			multi[s] = true
		}
	}
	if len(spks) == 0 {
		return nil
	}
	return w.multiAddress(ctx, spks, multi, confirmed, cache)
}

// trackMempool sets track-mempool (full txs) or track-mempool-txids: true
// starts, false stops, as in mempool.space.
func (w *mpWS) trackMempool(c *wsConn, key string, raw json.RawMessage, out *wsMsg) {
	var on bool
	if err := json.Unmarshal(raw, &on); err != nil {
		out.addValue(key+"-error", key+": send true or false")
		return
	}
	c.mu.Lock()
	was := c.mempoolTxids || c.mempoolFull
	if key == "track-mempool" {
		c.mempoolFull = on
	} else {
		c.mempoolTxids = on
	}
	now := c.mempoolTxids || c.mempoolFull
	c.mu.Unlock()
	switch {
	case now && !was:
		w.mempoolTrackers.Add(1)
	case was && !now:
		w.mempoolTrackers.Add(-1)
	}
}

// mempoolDelta is mempool.space's MempoolDeltaTxids (by as a txid) or
// MempoolDelta (added and by as full txs).
type mempoolDelta struct {
	Sequence uint64            `json:"sequence"`
	Added    []json.RawMessage `json:"added"`
	Removed  []string          `json:"removed"`
	Mined    []string          `json:"mined"`
	Replaced []replacedPair    `json:"replaced"`
}

type replacedPair struct {
	Replaced string          `json:"replaced"`
	By       json.RawMessage `json:"by"`
}

// mempoolChange is what the mempool did between two pushes.
type mempoolChange struct {
	added, removed, mined []bchain.Hash
	spent                 map[bchain.Hash]map[uint32]spentBy // by the txid spent from
}

// takeChange takes the change collected since the last push (hub
// goroutine); removals of txs that the blocks since the previous push (or
// those before it) mined are left out, as the blocks' pushes named them
// mined. Past maxMinedIDs such txids the index tells.
func (w *mpWS) takeChange(ctx context.Context) mempoolChange {
	w.emu.Lock()
	ch := mempoolChange{added: w.addedIDs, removed: w.removedIDs, spent: spentByParent(w.spends)}
	w.addedIDs, w.removedIDs, w.spends = nil, nil, nil
	now, prev, over := w.minedNow, w.minedPrev, w.minedOver
	w.minedPrev, w.minedNow, w.minedOver = w.minedNow, nil, false
	w.emu.Unlock()
	kept := ch.removed[:0]
	// The index's answers are bounded in time: every client's push waits
	// for them; past the bound a removal is reported as such.
	lctx, cancel := context.WithTimeout(ctx, maxMinedLookup)
	defer cancel()
	for _, id := range ch.removed {
		if now[id] || prev[id] {
			continue
		}
		if over && lctx.Err() == nil {
			if tx, err := w.s.q.EsploraTx(lctx, id); err == nil && tx != nil && tx.Block != nil {
				continue
			}
		}
		kept = append(kept, id)
	}
	ch.removed = kept
	return ch
}

// maxMinedLookup bounds the time takeChange asks the index for.
const maxMinedLookup = 2 * time.Second

// maxMinedIDs bounds the mined txids kept between two pushes (a long
// catch-up); past it, takeChange asks the index.
const maxMinedIDs = 4 * maxMempoolDelta

// noteMined keeps a connected block's txids while a client follows the
// mempool's changes (any goroutine).
func (w *mpWS) noteMined(blk *bchain.Block) {
	if blk == nil || w.mempoolTrackers.Load() <= 0 {
		return
	}
	w.emu.Lock()
	defer w.emu.Unlock()
	if w.minedNow == nil {
		w.minedNow = map[bchain.Hash]bool{}
	}
	for i := range blk.Txs {
		if len(w.minedNow) >= maxMinedIDs {
			w.minedOver = true
			return
		}
		w.minedNow[blk.Txs[i].Txid] = true
	}
}

// OnMempoolRemoved hears a txid the mempool dropped; it never blocks.
func (s *Server) OnMempoolRemoved(txid bchain.Hash) {
	s.ws.collect(&s.ws.removedIDs, txid)
}

// noteAdded collects a new mempool tx for the mempool deltas.
func (w *mpWS) noteAdded(txid bchain.Hash) { w.collect(&w.addedIDs, txid) }

// collect appends txid to list (guarded by emu) while a client follows
// the mempool's changes, up to maxMempoolDelta.
func (w *mpWS) collect(list *[]bchain.Hash, txid bchain.Hash) {
	if w.mempoolTrackers.Load() <= 0 {
		return
	}
	w.emu.Lock()
	if len(*list) < maxMempoolDelta {
		*list = append(*list, txid)
	}
	w.emu.Unlock()
}

// deltaMsgs encodes a change as mempool-txids and mempool-transactions,
// each only when some client wants it. Both go into one message for a
// client that follows both, so that client gets each at half of one
// delta's bound; a client that follows one stream keeps the whole bound.
func (w *mpWS) deltaMsgs(ctx context.Context, seq uint64, ch mempoolChange, want deltaWants) mempoolDeltas {
	cache := map[bchain.Hash]json.RawMessage{}
	var pairs [][2]bchain.Hash
	if r := w.s.caps.Replacements; r != nil {
		for _, id := range ch.removed {
			if by, ok := r.ReplacedBy(id); ok {
				if h, err := bchain.ParseHash(by); err == nil {
					pairs = append(pairs, [2]bchain.Hash{id, h})
				}
			}
		}
	}
	mk := func(rendered bool, room int) json.RawMessage {
		// The delta is bounded in bytes (room): mined, removed, replaced,
		// then added txs, each while it fits; the rest is left out.
		room -= 128 // the object around the lists
		fits := func(n int) bool {
			room -= n + 1
			return room >= 0
		}
		ids := func(l []bchain.Hash) []string {
			out := []string{}
			for _, h := range l {
				if !fits(2*len(h) + 2) {
					break
				}
				out = append(out, h.String())
			}
			return out
		}
		d := mempoolDelta{Sequence: seq, Added: []json.RawMessage{}, Mined: ids(ch.mined), Removed: ids(ch.removed), Replaced: []replacedPair{}}
		for _, p := range pairs {
			by, _ := json.Marshal(p[1].String())
			if rendered {
				if by = w.renderTx(ctx, p[1], cache); by == nil {
					continue
				}
			}
			if !fits(len(by) + 2*len(p[0]) + 28) {
				break
			}
			d.Replaced = append(d.Replaced, replacedPair{Replaced: p[0].String(), By: by})
		}
		for _, id := range ch.added {
			var b json.RawMessage
			if !rendered {
				b, _ = json.Marshal(id.String())
			} else if b = w.renderTx(ctx, id, cache); b == nil {
				continue
			}
			if !fits(len(b)) {
				break
			}
			d.Added = append(d.Added, b)
		}
		b, _ := json.Marshal(d)
		return b
	}
	room := w.maxDeltaBytes()
	var d mempoolDeltas
	if want.txids {
		d.ids = mk(false, room)
	}
	if want.full {
		d.txs = mk(true, room)
	}
	if want.both {
		d.idsHalf, d.txsHalf = mk(false, room/2), mk(true, room/2)
	}
	return d
}

// mempoolDeltas are one change's deltas: each stream at one delta's bound
// for the clients that follow only it, and both at half of it for the
// clients that follow both.
type mempoolDeltas struct{ ids, txs, idsHalf, txsHalf json.RawMessage }

// deltaWants says which mempool deltas the clients follow: txids alone,
// full alone and both, by some client each.
type deltaWants struct{ txids, full, both bool }

func (w deltaWants) any() bool { return w.txids || w.full || w.both }

// maxDeltaBytes bounds one mempool delta: half a client's queue, so that
// a client that reads keeps up (a larger message would drop every client).
func (w *mpWS) maxDeltaBytes() int { return w.cfg.MaxQueueBytes / 2 }

// mempoolWants reports which clients follow the mempool's changes.
func mempoolWants(conns []*wsConn) deltaWants {
	var w deltaWants
	for _, c := range conns {
		c.mu.Lock()
		ids, full := c.mempoolTxids, c.mempoolFull
		c.mu.Unlock()
		w.txids = w.txids || ids && !full
		w.full = w.full || full && !ids
		w.both = w.both || ids && full
	}
	return w
}

// addDelta adds the mempool delta parts c follows.
func addDelta(c *wsConn, d mempoolDeltas, out *wsMsg) {
	c.mu.Lock()
	wantIDs, wantTxs := c.mempoolTxids, c.mempoolFull
	c.mu.Unlock()
	ids, txs := d.ids, d.txs
	if wantIDs && wantTxs {
		ids, txs = d.idsHalf, d.txsHalf
	}
	if wantIDs {
		out.add("mempool-txids", ids)
	}
	if wantTxs {
		out.add("mempool-transactions", txs)
	}
}

// addTracked adds tracked-txs for c's track-txs, when there is news.
func (w *mpWS) addTracked(c *wsConn, d *wsData, mined map[bchain.Hash]bool, spent map[bchain.Hash]map[uint32]spentBy, out *wsMsg) {
	c.mu.Lock()
	ids := c.trackTxs
	c.mu.Unlock()
	if infos := w.trackedInfos(c, ids, d, mined, spent, false); infos != nil {
		out.addValue("tracked-txs", infos)
	}
}
