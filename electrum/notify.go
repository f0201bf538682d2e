package electrum

import (
	"bytes"
	"context"
	"crypto/sha256"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openexplorer/blockbook/bchain"
)

// mempoolSettle is how long after a block the subscriptions are checked
// once more: the mempool drops the block's txs on its own goroutine
// after the block event, which changes no status the block did not, but
// a status read in between may still count them as pending.
const mempoolSettle = 1500 * time.Millisecond

// hub routes events to the sessions they concern. Statuses are computed
// once per script hash and event generation, however many sessions
// subscribe to it.
type hub struct {
	s   *Server
	gen atomic.Uint64

	mu      sync.RWMutex
	bySH    map[[32]byte]map[*session]struct{}
	headers map[*session]struct{}
	// byTxid files outpoint subscriptions under their txid: how many
	// outpoints of it each session subscribes to.
	byTxid map[bchain.Hash]map[*session]int
	// subs counts the subscriptions, in all and per client address, for
	// MaxSubsTotal and MaxSubsPerIP (each costs about subBytes).
	subs      int
	subsPerIP map[string]int
	// subBytes estimates their memory (SubscriptionBytes each, plus a
	// script hash's script), in all and per client address.
	subBytes      int64
	subBytesPerIP map[string]int64

	cmu   sync.Mutex
	cache map[statusKey]statusEntry
	tip   tipEntry
}

type statusKey struct {
	sh  [32]byte
	v16 bool
}

type statusEntry struct {
	gen    uint64
	status *string
	script []byte
}

type tipEntry struct {
	gen  uint64
	note *headerNote
}

// headerNote is a header as headers.subscribe shows it.
type headerNote struct {
	Height uint32 `json:"height"`
	Hex    string `json:"hex"`
}

func newHub(s *Server) *hub {
	h := &hub{s: s, bySH: map[[32]byte]map[*session]struct{}{}, headers: map[*session]struct{}{}, byTxid: map[bchain.Hash]map[*session]int{},
		cache: map[statusKey]statusEntry{}, subsPerIP: map[string]int{}, subBytesPerIP: map[string]int64{}}
	h.gen.Store(1)
	return h
}

// subscribe files a script hash subscription that reserveSub counted;
// extra is its bytes beyond SubscriptionBytes (its script).
func (h *hub) subscribe(ss *session, sh [32]byte, extra int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.bySH[sh]
	if m == nil {
		m = map[*session]struct{}{}
		h.bySH[sh] = m
	}
	if _, ok := m[ss]; ok {
		h.releaseSubLocked(ss, 0) // already counted: give the reservation back
		return
	}
	m[ss] = struct{}{}
	h.subBytes += int64(extra)
	h.subBytesPerIP[ss.key] += int64(extra)
}

// reserveSub counts a new subscription of ss, or refuses it over the
// server's or its address's cap: the check and the count are one critical
// section, so that concurrent sessions cannot pass the caps. The caller
// files the subscription (subscribe, subscribeOutpoint) or gives the
// reservation back (releaseSub).
func (h *hub) reserveSub(ss *session) *rpcError {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch cfg := h.s.cfg; {
	case h.subs >= cfg.MaxSubsTotal:
		return newErr(codeExcessive, "too many subscriptions on this server (limit %d)", cfg.MaxSubsTotal)
	case ss.key != "" && h.subsPerIP[ss.key] >= cfg.MaxSubsPerIP:
		return newErr(codeExcessive, "too many subscriptions from your address (limit %d)", cfg.MaxSubsPerIP)
	case h.subBytes+SubscriptionBytes > int64(cfg.MaxSubsBytes):
		return newErr(codeExcessive, "subscriptions on this server are at their memory limit (%d bytes)", cfg.MaxSubsBytes)
	case ss.key != "" && h.subBytesPerIP[ss.key]+SubscriptionBytes > int64(cfg.MaxSubsBytesPerIP):
		return newErr(codeExcessive, "subscriptions from your address are at their memory limit (%d bytes)", cfg.MaxSubsBytesPerIP)
	}
	h.subs++
	h.subsPerIP[ss.key]++
	h.subBytes += SubscriptionBytes
	h.subBytesPerIP[ss.key] += SubscriptionBytes
	return nil
}

func (h *hub) releaseSub(ss *session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.releaseSubLocked(ss, 0)
}

// releaseSubLocked uncounts a subscription of SubscriptionBytes plus
// extra; h.mu is held.
func (h *hub) releaseSubLocked(ss *session, extra int) {
	h.subs--
	if h.subsPerIP[ss.key]--; h.subsPerIP[ss.key] <= 0 {
		delete(h.subsPerIP, ss.key)
	}
	n := SubscriptionBytes + int64(extra)
	h.subBytes -= n
	if h.subBytesPerIP[ss.key] -= n; h.subBytesPerIP[ss.key] <= 0 {
		delete(h.subBytesPerIP, ss.key)
	}
}

// SubscriptionBytes is the bytes the subscriptions are estimated to hold
// now (the MaxSubsBytes count).
func (s *Server) SubscriptionBytes() int64 {
	s.hub.mu.RLock()
	defer s.hub.mu.RUnlock()
	return s.hub.subBytes
}

// Subscriptions is the number of script hash and outpoint subscriptions
// of all connections.
func (s *Server) Subscriptions() int {
	s.hub.mu.RLock()
	defer s.hub.mu.RUnlock()
	return s.hub.subs
}

func (h *hub) unsubscribe(ss *session, sh [32]byte, extra int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.unsubscribeLocked(ss, sh, extra)
}

func (h *hub) unsubscribeLocked(ss *session, sh [32]byte, extra int) {
	m := h.bySH[sh]
	if _, ok := m[ss]; ok {
		delete(m, ss)
		h.releaseSubLocked(ss, extra)
	}
	if len(m) == 0 {
		delete(h.bySH, sh)
		h.cmu.Lock()
		delete(h.cache, statusKey{sh, false})
		delete(h.cache, statusKey{sh, true})
		h.cmu.Unlock()
	}
}

func (h *hub) subscribeHeaders(ss *session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.headers[ss] = struct{}{}
}

// dropSession forgets a closed session's subscriptions.
func (h *hub) dropSession(ss *session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for sh, sub := range ss.subs {
		h.unsubscribeLocked(ss, sh, sub.extra)
	}
	for op := range ss.outpoints {
		h.unsubscribeOutpointLocked(ss, op.txid)
	}
	delete(h.headers, ss)
}

// OnMempoolTx takes a tx that entered the mempool (or whose inputs were
// resolved later): descs are the scripts it pays and spends from. It
// never blocks.
func (s *Server) OnMempoolTx(descs []bchain.AddrDesc) {
	h := s.hub
	h.gen.Add(1)
	descs = slices.DeleteFunc(slices.Clone(descs), func(d bchain.AddrDesc) bool { return len(d) == 0 })
	shs := make([][32]byte, len(descs))
	for i, d := range descs {
		shs[i] = sha256.Sum256(d)
	}
	h.touch(descs, shs, false)
}

// touch queues a recheck of the subscriptions to the script hashes shs
// (of scripts descs), and of the tip for header subscribers if headers.
func (h *hub) touch(descs []bchain.AddrDesc, shs [][32]byte, headers bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	for i, d := range descs {
		sh := shs[i]
		for ss := range h.bySH[sh] {
			ss.markDirty(sh, bytes.Clone(d), false, headers)
		}
	}
	if headers {
		for ss := range h.headers {
			ss.markDirty([32]byte{}, nil, false, true)
		}
	}
}

// OnBlockConnected takes a block the index connected on top of its tip
// (steady state): the subscriptions to the scripts its txs pay and spend
// from are checked, and again when the mempool has caught up, and header
// subscribers get the new tip. It never blocks: the block's scripts are
// read on another goroutine.
func (s *Server) OnBlockConnected(blk *bchain.Block) {
	go func() {
		ctx, cancel := context.WithTimeout(s.ctx, callTimeout)
		defer cancel()
		notices, err := s.svc.BlockTxNotices(ctx, blk)
		if err != nil {
			s.OnBlock() // cannot tell what it touched: check everything
			return
		}
		var descs []bchain.AddrDesc
		for _, n := range notices {
			descs = append(descs, n.Descs...)
		}
		shs := make([][32]byte, len(descs))
		for i, d := range descs {
			shs[i] = sha256.Sum256(d)
		}
		txids := blockTxids(blk)
		s.hub.gen.Add(1)
		s.hub.touch(descs, shs, true)
		s.hub.touchTxids(txids, true)
		s.sp.tipChanged()
		time.AfterFunc(mempoolSettle, func() {
			if s.ctx.Err() == nil {
				s.hub.gen.Add(1)
				s.hub.touch(descs, shs, false)
				s.hub.touchTxids(txids, true)
			}
		})
	}()
}

// OnBlock takes any other change of the index's tip (a block
// disconnected, a bulk round): every subscription is checked (a reorg
// changes statuses the new blocks do not name), header subscribers get the
// new tip, and the subscriptions are checked once more when the mempool
// has caught up. It never blocks.
func (s *Server) OnBlock() {
	s.hub.recheckAll(true)
	s.sp.tipChanged()
	time.AfterFunc(mempoolSettle, func() {
		if s.ctx.Err() == nil {
			s.hub.recheckAll(false)
		}
	})
}

func (h *hub) recheckAll(headers bool) {
	h.gen.Add(1)
	h.mu.RLock()
	defer h.mu.RUnlock()
	seen := map[*session]bool{}
	for _, m := range h.bySH {
		for ss := range m {
			if !seen[ss] {
				seen[ss] = true
				ss.markDirty([32]byte{}, nil, true, headers)
			}
		}
	}
	for _, m := range h.byTxid {
		for ss := range m {
			if !seen[ss] {
				seen[ss] = true
				ss.markDirty([32]byte{}, nil, true, headers)
			}
		}
	}
	if headers {
		for ss := range h.headers {
			if !seen[ss] {
				ss.markDirty([32]byte{}, nil, true, true)
			}
		}
	}
}

// status is the current status of a script hash, computed at most once
// per generation.
func (h *hub) status(ctx context.Context, sh [32]byte, script []byte, v16 bool) (*string, []byte, error) {
	gen := h.gen.Load()
	key := statusKey{sh, v16}
	h.cmu.Lock()
	e, ok := h.cache[key]
	h.cmu.Unlock()
	if ok && e.gen == gen {
		return e.status, e.script, nil
	}
	if script == nil && ok {
		script = e.script
	}
	st, script, err := h.s.statusOf(ctx, sh, script, v16)
	if err != nil {
		return nil, script, err
	}
	h.mu.RLock()
	_, subscribed := h.bySH[sh]
	h.mu.RUnlock()
	if subscribed {
		h.cmu.Lock()
		if cur, ok := h.cache[key]; !ok || cur.gen <= gen {
			h.cache[key] = statusEntry{gen: gen, status: st, script: script}
		}
		h.cmu.Unlock()
	}
	return st, script, nil
}

// tipHeader is the index's tip as headers.subscribe shows it, read at
// most once per generation.
func (h *hub) tipHeader(ctx context.Context) (*headerNote, error) {
	gen := h.gen.Load()
	h.cmu.Lock()
	t := h.tip
	h.cmu.Unlock()
	if t.note != nil && t.gen == gen {
		return t.note, nil
	}
	note, err := h.s.readTip(ctx)
	if err != nil {
		return nil, err
	}
	h.cmu.Lock()
	if h.tip.gen <= gen {
		h.tip = tipEntry{gen: gen, note: note}
	}
	h.cmu.Unlock()
	return note, nil
}

// notify sends the session what changed since it was last told: the tip
// and the statuses of its dirty subscriptions.
func (ss *session) notify() {
	ss.mu.Lock()
	dirty, all, headers := ss.dirty, ss.dirtyAll, ss.headersDirty
	dirtyTx, pending := ss.dirtyTx, ss.dirtyPending
	ss.dirty, ss.dirtyAll, ss.headersDirty = map[[32]byte][]byte{}, false, false
	ss.dirtyTx, ss.dirtyPending = map[bchain.Hash]struct{}{}, false
	ss.mu.Unlock()
	ctx, cancel := context.WithTimeout(ss.s.ctx, callTimeout)
	defer cancel()
	if headers && ss.headers {
		ss.notifyTip(ctx)
	}
	if all {
		for sh := range ss.subs {
			dirty[sh] = nil
		}
	}
	for sh, script := range dirty {
		sub, ok := ss.subs[sh]
		if !ok {
			continue
		}
		if sub.script == nil {
			sub.script = script
		}
		st, found, err := ss.s.hub.status(ctx, sh, sub.script, ss.v16())
		if err != nil {
			// A history that grew over the limit: the client is told
			// nothing new, as it could not read the history either.
			continue
		}
		sub.script = found
		if !sameStatus(st, sub.status) {
			sub.status = st
			ss.sendNote("blockchain.scripthash.subscribe", scripthashHex(sh), st)
		}
	}
	if all || len(dirtyTx) > 0 || pending {
		ss.notifyOutpoints(ctx, dirtyTx, pending, all)
	}
	ss.s.sp.flush(ss)
	if hook := ss.s.hooks.afterRecheck; hook != nil {
		hook()
	}
}

func (ss *session) notifyTip(ctx context.Context) {
	note, err := ss.s.hub.tipHeader(ctx)
	if err != nil || note == nil {
		return
	}
	if last := ss.lastHeader; last != nil && *last == *note {
		return
	}
	ss.lastHeader = note
	ss.sendNote("blockchain.headers.subscribe", note)
}

func (ss *session) sendNote(method string, params ...any) {
	b, err := jsonMarshal(notification{JSONRPC: "2.0", Method: method, Params: params})
	if err != nil {
		return
	}
	ss.send(b)
}

func sameStatus(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
