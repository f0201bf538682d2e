package electrum

import (
	"bytes"
	"context"
	"encoding/hex"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
)

// The outpoint methods of the Electrum protocol's pull request #2
// (blockchain.outpoint.subscribe, unsubscribe and get_status), offered as
// an extension of 1.6 when the service answers api.OutpointQueries.

// outpoint is a tx output a client asks about.
type outpoint struct {
	txid bchain.Hash
	vout uint32
}

// outpointStatus is the status as the protocol shows it: no keys for an
// output no tx has made, height alone while unspent, and the spender's
// txid and height once spent.
type outpointStatus struct {
	Height        *int64 `json:"height,omitempty"`
	SpenderTxhash string `json:"spender_txhash,omitempty"`
	SpenderHeight *int64 `json:"spender_height,omitempty"`
}

func (a outpointStatus) same(b outpointStatus) bool {
	eq := func(x, y *int64) bool { return x == nil && y == nil || x != nil && y != nil && *x == *y }
	return eq(a.Height, b.Height) && a.SpenderTxhash == b.SpenderTxhash && eq(a.SpenderHeight, b.SpenderHeight)
}

// pending reports a status that a block can change without naming the
// output: a pending funding or spending tx (a parent mined turns -1 into
// 0; an evicted or replaced tx is seen only then).
func (a outpointStatus) pending() bool {
	return a.Height != nil && *a.Height <= 0 || a.SpenderHeight != nil && *a.SpenderHeight <= 0
}

func statusOfOutpoint(st api.OutpointStatus) outpointStatus {
	var out outpointStatus
	if !st.Funded {
		return out
	}
	h := st.Height
	out.Height = &h
	if st.Spent {
		sh := st.SpenderHeight
		out.SpenderTxhash, out.SpenderHeight = st.SpenderTxid.String(), &sh
	}
	return out
}

// outpointQueries is the service's outpoint answers; nil when it has none.
func (s *Server) outpointQueries() api.OutpointQueries {
	if q, ok := s.scripts.(api.OutpointQueries); ok {
		return q
	}
	q, _ := s.svc.(api.OutpointQueries)
	return q
}

// parseOutpoint reads tx_hash, txout_idx and the optional spk_hint (hex,
// checked and not needed: the index finds the output by its tx).
func parseOutpoint(p params, hint bool) (outpoint, error) {
	txid, err := parseTxid(p, 0)
	if err != nil {
		return outpoint{}, err
	}
	vout, err := p.nonNegInt(1, "txout_idx", 0, true)
	if err != nil {
		return outpoint{}, err
	}
	if bytes.HasPrefix(bytes.TrimSpace(p[1]), []byte{'"'}) { // nonNegInt takes "5" too
		return outpoint{}, invalidParams("txout_idx must be a non-negative integer")
	}
	if hint && p.has(2) {
		spk, err := p.str(2, "spk_hint")
		if err != nil {
			return outpoint{}, err
		}
		if _, err := hex.DecodeString(spk); err != nil {
			return outpoint{}, badRequest("spk_hint %s is not a hex script", truncate(spk, 80))
		}
	}
	return outpoint{txid: txid, vout: uint32(vout)}, nil
}

func (s *Server) outpointStatus(ctx context.Context, op outpoint) (outpointStatus, error) {
	q := s.outpointQueries()
	if q == nil {
		return outpointStatus{}, newErr(codeMethodNotFound, "this server keeps no spend index")
	}
	st, err := q.OutpointStatus(ctx, op.txid, op.vout)
	if err != nil {
		return outpointStatus{}, err
	}
	return statusOfOutpoint(st), nil
}

func outpointGetStatus(ctx context.Context, ss *session, p params) (any, error) {
	op, err := parseOutpoint(p, true)
	if err != nil {
		return nil, err
	}
	return ss.s.outpointStatus(ctx, op)
}

// outpointSubscribe answers the status and notifies its changes; the
// subscription counts against the caps of script hash subscriptions.
func outpointSubscribe(ctx context.Context, ss *session, p params) (any, error) {
	op, err := parseOutpoint(p, true)
	if err != nil {
		return nil, err
	}
	_, ok := ss.outpoints[op]
	if !ok {
		if e := ss.admitSub(); e != nil {
			return nil, e
		}
	}
	st, err := ss.s.outpointStatus(ctx, op)
	if err != nil {
		if !ok {
			ss.s.hub.releaseSub(ss)
		}
		return nil, err
	}
	ss.outpoints[op] = &st
	if !ok {
		ss.s.hub.subscribeOutpoint(ss, op.txid)
	}
	return st, nil
}

func outpointUnsubscribe(_ context.Context, ss *session, p params) (any, error) {
	op, err := parseOutpoint(p, false)
	if err != nil {
		return nil, err
	}
	if ss.s.outpointQueries() == nil {
		return nil, newErr(codeMethodNotFound, "this server keeps no spend index")
	}
	if _, ok := ss.outpoints[op]; !ok {
		return false, nil
	}
	delete(ss.outpoints, op)
	ss.s.hub.unsubscribeOutpoint(ss, op.txid)
	return true, nil
}

// admitSub refuses a new subscription (script hash or outpoint) over the
// connection's, its address's or the server's cap, or reserves its place
// under the latter two (the session's own calls run one at a time).
func (ss *session) admitSub() *rpcError {
	if len(ss.subs)+len(ss.outpoints) >= ss.s.cfg.MaxSubs {
		return newErr(codeExcessive, "too many subscriptions on this connection (limit %d)", ss.s.cfg.MaxSubs)
	}
	return ss.s.hub.reserveSub(ss)
}

// subscribeOutpoint files a session's outpoint of txid under the txid
// (the events name txs); reserveSub counted it.
func (h *hub) subscribeOutpoint(ss *session, txid bchain.Hash) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.byTxid[txid]
	if m == nil {
		m = map[*session]int{}
		h.byTxid[txid] = m
	}
	m[ss]++
}

func (h *hub) unsubscribeOutpoint(ss *session, txid bchain.Hash) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.unsubscribeOutpointLocked(ss, txid)
}

func (h *hub) unsubscribeOutpointLocked(ss *session, txid bchain.Hash) {
	m := h.byTxid[txid]
	if m[ss] == 0 {
		return
	}
	if m[ss]--; m[ss] == 0 {
		delete(m, ss)
	}
	if len(m) == 0 {
		delete(h.byTxid, txid)
	}
	h.releaseSubLocked(ss, 0)
}

// OnMempoolSpends takes a tx that entered the mempool: its txid (its
// outputs are funded) and the txids of the outputs its inputs spend. The
// outpoint subscriptions of those txids are checked. It never blocks.
func (s *Server) OnMempoolSpends(txid bchain.Hash, spent []bchain.Hash) {
	s.hub.touchTxids(append([]bchain.Hash{txid}, spent...), false)
}

// blockTxids are the txids a block funds and spends from.
func blockTxids(blk *bchain.Block) []bchain.Hash {
	var out []bchain.Hash
	for i := range blk.Txs {
		tx := &blk.Txs[i]
		out = append(out, tx.Txid)
		for j := range tx.Vin {
			if !tx.Vin[j].Coinbase {
				out = append(out, tx.Vin[j].PrevTxid)
			}
		}
	}
	return out
}

// touchTxids queues a recheck of the outpoints of txids, and (pending,
// after a block) of every outpoint whose status was pending.
func (h *hub) touchTxids(txids []bchain.Hash, pending bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if len(h.byTxid) == 0 {
		return
	}
	marks := map[*session][]bchain.Hash{}
	for _, id := range txids {
		for ss := range h.byTxid[id] {
			marks[ss] = append(marks[ss], id)
		}
	}
	if pending {
		for _, m := range h.byTxid {
			for ss := range m {
				if _, ok := marks[ss]; !ok {
					marks[ss] = nil
				}
			}
		}
	}
	for ss, ids := range marks {
		ss.markOutpoints(ids, pending)
	}
}

// markOutpoints queues a recheck of the session's outpoints of txids (and
// of its pending ones) and wakes the worker.
func (ss *session) markOutpoints(txids []bchain.Hash, pending bool) {
	ss.mu.Lock()
	for _, id := range txids {
		ss.dirtyTx[id] = struct{}{}
	}
	ss.dirtyPending = ss.dirtyPending || pending
	ss.mu.Unlock()
	select {
	case ss.wake <- struct{}{}:
	default:
	}
}

// notifyOutpoints sends the statuses of the outpoints that changed among
// those the events named (all: every one).
func (ss *session) notifyOutpoints(ctx context.Context, txids map[bchain.Hash]struct{}, pending, all bool) {
	var failed []bchain.Hash
	defer func() {
		if len(failed) > 0 {
			ss.mu.Lock()
			for _, id := range failed {
				ss.dirtyTx[id] = struct{}{}
			}
			ss.mu.Unlock()
		}
	}()
	for op, last := range ss.outpoints {
		_, named := txids[op.txid]
		if !all && !named && !(pending && last.pending()) {
			continue
		}
		st, err := ss.s.outpointStatus(ctx, op)
		if err != nil {
			// Marked again, so that the next event (at the latest the next
			// block, which wakes every session with outpoints) rechecks it:
			// the event that named it was already taken.
			failed = append(failed, op.txid)
			continue
		}
		if !st.same(*last) {
			*last = st
			ss.sendNote("blockchain.outpoint.subscribe", []any{op.txid.String(), op.vout}, st)
		}
	}
}
