package esplora

import (
	"context"
	"encoding/json"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
)

// wsData computes the shared parts of the websocket's answers once per
// message or push, encoded; a part that cannot be had is nil (left out).
type wsData struct {
	ctx      context.Context
	w        *mpWS
	cpfp     map[bchain.Hash]cpfpEntry // tracked txs' CPFP figures, by txid
	cache    map[string]json.RawMessage
	txs      map[int][]api.ProjectedTx // projected blocks' txs, by index
	rbfDirty *bool                     // the RBF history changed since the last push
}

// rbfChanged reports, once per push, whether the RBF history changed
// since the previous push (hub goroutine only).
func (d *wsData) rbfChanged() bool {
	if d.rbfDirty == nil {
		changed := false
		if r := d.w.s.caps.Replacements; r != nil {
			v := r.RbfVersion()
			changed, d.w.lastRbf = v != d.w.lastRbf, v
		}
		d.rbfDirty = &changed
	}
	return *d.rbfDirty
}

func (w *mpWS) newData(ctx context.Context) *wsData {
	return &wsData{ctx: ctx, w: w, cache: map[string]json.RawMessage{}}
}

// get encodes the part named key, once.
func (d *wsData) get(key string) json.RawMessage {
	if v, ok := d.cache[key]; ok {
		return v
	}
	v, err := d.compute(key)
	var b json.RawMessage
	if err != nil {
		d.w.log.Debug("websocket data unavailable", "part", key, "err", err)
	} else if v != nil {
		b, err = json.Marshal(v)
		if err != nil {
			b = nil
		}
	}
	d.cache[key] = b
	return b
}

// mempoolInfo is bitcoind's getmempoolinfo as mempool.space forwards it.
type mempoolInfo struct {
	Loaded        bool    `json:"loaded"`
	Size          int     `json:"size"`
	Bytes         int64   `json:"bytes"`
	Usage         int64   `json:"usage"`
	TotalFee      float64 `json:"total_fee"`
	MaxMempool    int64   `json:"maxmempool"`
	MempoolMinFee float64 `json:"mempoolminfee"`
	MinRelayTxFee float64 `json:"minrelaytxfee"`
}

// defaultMaxMempool is bitcoind's default -maxmempool (300 MB), which
// mempool.space shows until the node tells it; btcd has no such figure.
const defaultMaxMempool = 300_000_000

func (d *wsData) compute(key string) (any, error) {
	s, ctx := d.w.s, d.ctx
	pf := s.caps.ProjectedFees
	switch key {
	case "mempool-blocks":
		if pf == nil {
			return nil, nil
		}
		return pf.MempoolBlocks(ctx)
	case "fees":
		if pf == nil {
			return nil, nil
		}
		return pf.RecommendedFees(ctx, true)
	case "mempoolInfo":
		if pf == nil {
			return nil, nil
		}
		sum, err := pf.MempoolSummary(ctx)
		if err != nil {
			return nil, err
		}
		minFee := float64(sum.MinFee) / 1e8
		return mempoolInfo{Loaded: true, Size: sum.Size, Bytes: int64(sum.VBytes), TotalFee: float64(sum.TotalFee) / 1e8,
			MaxMempool: defaultMaxMempool, MempoolMinFee: minFee, MinRelayTxFee: minFee}, nil
	case "vBytesPerSecond":
		return d.w.vBytesPerSecond(), nil
	case "transactions":
		return d.w.latestTxs(), nil
	case "da":
		return s.daValue(ctx)
	case "blocks":
		return d.recentBlocks()
	case "backendInfo":
		return map[string]any{"hostname": "", "version": "", "gitCommit": "", "lightning": false, "backend": "esplora"}, nil
	case "rbfAll", "rbfFull", "rbfSummary":
		r := s.caps.Replacements
		if r == nil {
			return nil, nil
		}
		if key == "rbfSummary" {
			return r.RbfSummary(ctx), nil
		}
		return r.Replacements(ctx, key == "rbfFull"), nil
	case "loadingIndicators":
		return map[string]any{}, nil
	case "backend":
		return "esplora", nil
	case "conversions":
		if b := s.conversions(ctx); b != nil {
			return json.RawMessage(b), nil
		}
		return nil, nil
	}
	return nil, nil
}

// recentBlocks is the last initialBlocks blocks with extras, oldest first.
func (d *wsData) recentBlocks() ([]*blockExtended, error) {
	tip, _, ok, err := d.w.s.q.EsploraTip(d.ctx)
	if err != nil || !ok {
		return nil, err
	}
	out := []*blockExtended{}
	from := int64(tip) - initialBlocks + 1
	for h := max(from, 0); h <= int64(tip); h++ {
		b, err := d.w.s.extendedBlock(d.ctx, uint32(h))
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// addStats adds want "stats"'s parts; withTxs adds the latest txs (a
// mempool change's push).
func (d *wsData) addStats(out *wsMsg, withTxs bool) {
	out.add("mempoolInfo", d.get("mempoolInfo"))
	out.add("vBytesPerSecond", d.get("vBytesPerSecond"))
	if withTxs {
		out.add("transactions", d.get("transactions"))
	}
	out.add("fees", d.get("fees"))
	out.add("da", d.get("da"))
}

// positions places txids in the projection (nil without one).
func (d *wsData) positions(ids map[bchain.Hash]struct{}) map[bchain.Hash]api.TxPosition {
	pf := d.w.s.caps.ProjectedFees
	if pf == nil || len(ids) == 0 {
		return nil
	}
	pos, err := pf.TxPositions(d.ctx, ids)
	if err != nil {
		return nil
	}
	return pos
}

// txPosition is mempool.space's txPosition.
type txPosition struct {
	Txid     string         `json:"txid"`
	Position api.TxPosition `json:"position"`
	Cpfp     *trackedCpfp   `json:"cpfp,omitempty"`
}

// initData is mempool.space's answer to init: every part at once.
func (w *mpWS) initData(d *wsData) []byte {
	m := &wsMsg{}
	for _, k := range []string{"backend", "mempoolInfo", "vBytesPerSecond", "blocks", "conversions", "mempool-blocks", "transactions",
		"backendInfo", "loadingIndicators", "da", "fees"} {
		m.add(k, d.get(k))
	}
	return m.bytes()
}

// trackedTxs collects the clients' tracked txids.
func trackedTxs(conns []*wsConn) map[bchain.Hash]struct{} {
	ids := map[bchain.Hash]struct{}{}
	for _, c := range conns {
		c.mu.Lock()
		if c.trackTx != nil {
			ids[*c.trackTx] = struct{}{}
		}
		c.mu.Unlock()
	}
	return ids
}

// pushMempool sends what a mempool change gives each client.
func (w *mpWS) pushMempool(ctx context.Context) {
	ch := w.takeChange(ctx)
	conns := w.clients()
	if len(conns) == 0 {
		return
	}
	seq := w.seq.Add(1)
	d := w.newData(ctx)
	var deltas mempoolDeltas
	if want := mempoolWants(conns); want.any() {
		deltas = w.deltaMsgs(ctx, seq, ch, want)
	}
	pos := d.positions(trackedTxs(conns))
	spent := ch.spent
	updates := d.blockUpdates(conns, seq)
	// Clients share the parts' buffers (sendSplit): the projected
	// block's txs are hundreds of KB, a delta up to half a queue.
	for _, c := range conns {
		out := &wsMsg{}
		// blockMu orders this push's block update after a
		// track-mempool-block answer (and before the next one).
		c.blockMu.Lock()
		addMempoolBlock(c, updates, out)
		c.mu.Lock()
		stats, blocks, tx := c.wants["stats"], c.wants["mempool-blocks"], c.trackTx
		c.mu.Unlock()
		if stats {
			d.addStats(out, true)
		}
		if blocks {
			out.add("mempool-blocks", d.get("mempool-blocks"))
		}
		if tx != nil {
			if p, ok := pos[*tx]; ok {
				out.addValue("txPosition", txPosition{Txid: tx.String(), Position: p, Cpfp: d.newCpfp(c, *tx, false)})
			}
			w.addReplaced(c, *tx, "rbfTransaction", out)
			if sp := spent[*tx]; sp != nil {
				out.addValue("utxoSpent", sp)
			}
		}
		w.addTracked(c, d, nil, spent, out)
		addDelta(c, deltas, out)
		w.addRbfPush(c, d, out)
		sendSplit(c, out)
		c.blockMu.Unlock()
	}
}

// pushBlock sends what a new block gives each client.
func (w *mpWS) pushBlock(ctx context.Context, b blockNote) {
	conns := w.clients()
	if len(conns) == 0 {
		return
	}
	d := w.newData(ctx)
	var block json.RawMessage
	if eb, err := w.s.extendedBlock(ctx, b.height); err == nil && eb.ID == b.hash.String() {
		block, _ = json.Marshal(eb)
	}
	mined := map[bchain.Hash]bool{}
	if b.blk != nil {
		for i := range b.blk.Txs {
			mined[b.blk.Txs[i].Txid] = true
		}
	}
	matched := w.blockMatches(ctx, b)
	pos := d.positions(trackedTxs(conns))
	var deltas mempoolDeltas
	if want := mempoolWants(conns); want.any() {
		ch := mempoolChange{}
		if b.blk != nil {
			for i := range b.blk.Txs {
				ch.mined = append(ch.mined, b.blk.Txs[i].Txid)
			}
		}
		deltas = w.deltaMsgs(ctx, w.seq.Add(1), ch, want)
	}
	rendered := map[bchain.Hash]json.RawMessage{}
	for _, c := range conns {
		out := &wsMsg{}
		c.mu.Lock()
		wants := map[string]bool{"blocks": c.wants["blocks"], "stats": c.wants["stats"], "mempool-blocks": c.wants["mempool-blocks"]}
		tx, single, multi := c.trackTx, c.trackAddr, c.multi
		c.mu.Unlock()
		if wants["blocks"] {
			out.add("block", block)
		}
		if wants["stats"] {
			d.addStats(out, false)
		}
		if wants["mempool-blocks"] {
			out.add("mempool-blocks", d.get("mempool-blocks"))
		}
		if tx != nil {
			if mined[*tx] {
				out.addValue("txConfirmed", tx.String())
			} else if p, ok := pos[*tx]; ok {
				out.addValue("txPosition", txPosition{Txid: tx.String(), Position: p})
			}
		}
		byAddr := matched[c]
		if single != "" && len(byAddr[single]) > 0 {
			out.addPrivate("block-transactions", w.renderList(ctx, byAddr[single], rendered))
		}
		if m := w.multiAddress(ctx, byAddr, multi, true, rendered); m != nil {
			out.addPrivate("multi-address-transactions", m)
		}
		if m := w.multiScript(ctx, byAddr, true, rendered); m != nil {
			out.addPrivate("multi-scriptpubkey-transactions", m)
		}
		w.addTracked(c, d, mined, nil, out)
		addDelta(c, deltas, out)
		sendSplit(c, out)
	}
}

// blockMatches finds, for each client, the block's txs touching its
// tracked addresses.
func (w *mpWS) blockMatches(ctx context.Context, b blockNote) map[*wsConn]map[string][]bchain.Hash {
	w.mu.Lock()
	none := len(w.byDesc) == 0
	w.mu.Unlock()
	if none || b.blk == nil {
		return nil
	}
	notices, err := w.s.svc.BlockTxNotices(ctx, b.blk)
	if err != nil {
		w.log.Warn("cannot list block txs for address notifications", "height", b.height, "err", err)
		return nil
	}
	out := map[*wsConn]map[string][]bchain.Hash{}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, n := range notices {
		for _, desc := range n.Descs {
			for c := range w.byDesc[string(desc)] {
				for _, a := range c.addressesOf(desc) {
					if out[c] == nil {
						out[c] = map[string][]bchain.Hash{}
					}
					if l := out[c][a]; len(l) == 0 || l[len(l)-1] != n.Txid {
						out[c][a] = append(l, n.Txid)
					}
				}
			}
		}
	}
	return out
}

// renderTx renders a tx in Esplora's shape, once per push.
func (w *mpWS) renderTx(ctx context.Context, id bchain.Hash, cache map[bchain.Hash]json.RawMessage) json.RawMessage {
	if b, ok := cache[id]; ok {
		return b
	}
	var b json.RawMessage
	if tx, err := w.s.q.EsploraTx(ctx, id); err == nil && tx != nil {
		b, _ = json.Marshal(w.s.txValueOf(tx))
	}
	cache[id] = b
	return b
}

func (w *mpWS) renderList(ctx context.Context, ids []bchain.Hash, cache map[bchain.Hash]json.RawMessage) json.RawMessage {
	list := make([]json.RawMessage, 0, len(ids))
	for _, id := range ids {
		if b := w.renderTx(ctx, id, cache); b != nil {
			list = append(list, b)
		}
	}
	if len(list) == 0 {
		return nil
	}
	b, _ := json.Marshal(list)
	return b
}

// addressTxs is mempool.space's AddressTransactions.
type addressTxs struct {
	Mempool   []json.RawMessage `json:"mempool"`
	Confirmed []json.RawMessage `json:"confirmed"`
	Removed   []json.RawMessage `json:"removed"`
}

// multiAddress is multi-address-transactions for the client's
// track-addresses set; nil when none of them has a tx.
func (w *mpWS) multiAddress(ctx context.Context, byAddr map[string][]bchain.Hash, multi map[string]bool, confirmed bool,
	cache map[bchain.Hash]json.RawMessage) json.RawMessage {
	out := map[string]addressTxs{}
	for a, ids := range byAddr {
		if !multi[a] {
			continue
		}
		e := addressTxs{Mempool: []json.RawMessage{}, Confirmed: []json.RawMessage{}, Removed: []json.RawMessage{}}
		for _, id := range ids {
			if b := w.renderTx(ctx, id, cache); b != nil {
				if confirmed {
					e.Confirmed = append(e.Confirmed, b)
				} else {
					e.Mempool = append(e.Mempool, b)
				}
			}
		}
		if len(e.Mempool)+len(e.Confirmed) > 0 {
			out[a] = e
		}
	}
	if len(out) == 0 {
		return nil
	}
	b, _ := json.Marshal(out)
	return b
}

// wsOut is a message rendered for one client.
type wsOut struct {
	c   *wsConn
	msg []byte
}

// renderMempoolTx renders a new mempool tx for the clients tracking its
// addresses (on any of the queue's workers).
func (w *mpWS) renderMempoolTx(ctx context.Context, job txJob) []wsOut {
	cache := map[bchain.Hash]json.RawMessage{}
	var outs []wsOut
	for c, addrs := range job.targets {
		c.mu.Lock()
		single, multi := c.trackAddr, c.multi
		c.mu.Unlock()
		out := &wsMsg{}
		byAddr := map[string][]bchain.Hash{}
		for _, a := range addrs {
			byAddr[a] = []bchain.Hash{job.txid}
			if a == single {
				out.add("address-transactions", w.renderList(ctx, byAddr[a], cache))
			}
		}
		if m := w.multiAddress(ctx, byAddr, multi, false, cache); m != nil {
			out.add("multi-address-transactions", m)
		}
		if m := w.multiScript(ctx, byAddr, false, cache); m != nil {
			out.add("multi-scriptpubkey-transactions", m)
		}
		if b := out.bytes(); b != nil {
			outs = append(outs, wsOut{c, b})
		}
	}
	return outs
}

// deliverMempoolTx sends what renderMempoolTx rendered (in the txs'
// order: one goroutine delivers).
func deliverMempoolTx(outs []wsOut) {
	for _, o := range outs {
		o.c.send(o.msg)
	}
}
