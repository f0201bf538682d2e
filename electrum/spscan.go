package electrum

// spscan.go: Frigate's blockchain.silentpayments.subscribe and
// unsubscribe. The client hands over its scan private key and spend
// public key; the server scans the tweak index for it (one EC
// multiplication per eligible tx) and notifies the txs that pay it, in
// Frigate's shape: {"subscription": {"address", "start_height"},
// "progress", "history": [{"height", "tx_hash"}]}. Scans share a global
// worker budget; subscriptions are capped per connection and in all.

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"math"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/internal/bip352"
)

const (
	methodSP = "blockchain.silentpayments.subscribe"
	// spPage is the most history entries one notification carries
	// (Frigate's suggested page).
	spPage = 100
	// spReorgDepth is how many scanned blocks' hashes a subscription keeps
	// to find where a reorg forked; a deeper one rescans from there.
	spReorgDepth = 100
	// spProgressEvery spaces the progress notifications of a long scan.
	spProgressEvery = time.Second
	// spTimestamp: a start above it is a Unix time (Frigate's rule, the
	// locktime threshold).
	spTimestamp = 500_000_000
)

// spHub holds the Silent Payments subscriptions and the scan workers.
type spHub struct {
	s *Server
	// workers bounds the blocks being scanned at once, over every
	// subscription (Config.SPWorkers).
	workers chan struct{}
	mu      sync.Mutex
	subs    map[*session]map[string]*spSub
	total   int
	perIP   map[string]int // subscriptions per counted client address
	// scanned counts the txs scanned (one EC multiplication each).
	scanned atomic.Uint64
}

func newSPHub(s *Server) *spHub {
	return &spHub{s: s, workers: make(chan struct{}, s.cfg.SPWorkers), subs: map[*session]map[string]*spSub{}, perIP: map[string]int{}}
}

// spSub is one subscribed address and its scan.
type spSub struct {
	h      *spHub
	ss     *session
	addr   string
	start  uint32
	sc     *bip352.Scanner
	ctx    context.Context
	cancel context.CancelFunc
	kick   chan struct{} // the tip changed

	mu    sync.Mutex
	notes [][]byte // notifications ready for the session's worker

	// Owned by run.
	next   uint32            // the next height to scan
	hashes map[uint32]string // the hashes of the last blocks scanned
	caught bool              // the first scan ended: empty results are no longer sent
}

type spNotification struct {
	Subscription struct {
		Address     string `json:"address"`
		StartHeight uint32 `json:"start_height"`
	} `json:"subscription"`
	Progress float64 `json:"progress"`
	History  []spTx  `json:"history"`
}

type spTx struct {
	Height uint32 `json:"height"`
	TxHash string `json:"tx_hash"`
}

// spKeys reads the scan private key and the spend public key (hex) and
// gives them with their address on the index's network.
func spKeys(p params, network string) (scan, spend []byte, addr string, err error) {
	s, err := p.str(0, "scan_private_key")
	if err != nil {
		return nil, nil, "", err
	}
	if scan, err = hex.DecodeString(s); err != nil || len(scan) != 32 {
		return nil, nil, "", badRequest("scan_private_key must be 64 hex characters")
	}
	k, err := p.str(1, "spend_public_key")
	if err != nil {
		return nil, nil, "", err
	}
	if spend, err = hex.DecodeString(k); err != nil || len(spend) != 33 {
		return nil, nil, "", badRequest("spend_public_key must be 66 hex characters (a compressed public key)")
	}
	if addr, err = bip352.Address(bip352.HRP(network), scan, spend); err != nil {
		return nil, nil, "", badRequest("%v", err)
	}
	return scan, spend, addr, nil
}

// spLabels reads the optional labels (our extension: Frigate scans for
// the unlabeled address and the change label only).
func spLabels(p params, limit int) ([]uint32, error) {
	if !p.has(3) {
		return nil, nil
	}
	var raw []json.Number
	if err := json.Unmarshal(p[3], &raw); err != nil {
		return nil, invalidParams("labels must be an array of integers")
	}
	if len(raw) > limit {
		return nil, newErr(codeExcessive, "too many labels: %d (limit %d)", len(raw), limit)
	}
	out := make([]uint32, len(raw))
	for i, n := range raw {
		v, err := strconv.ParseUint(n.String(), 10, 32)
		if err != nil {
			return nil, invalidParams("label %s is not an integer from 0 to 4294967295", n)
		}
		out[i] = uint32(v)
	}
	return out, nil
}

// spStart reads start: a height, or a Unix time above spTimestamp (the
// first block at or after it); 0 or absent is the genesis block.
func spStart(ctx context.Context, q api.TweakQueries, p params, tip uint32) (uint32, error) {
	if !p.has(2) {
		return 0, nil
	}
	var n json.Number
	if err := json.Unmarshal(p[2], &n); err != nil {
		return 0, invalidParams("start must be a block height or a Unix time")
	}
	v, err := strconv.ParseUint(n.String(), 10, 63)
	if err != nil {
		return 0, invalidParams("start must be a block height or a Unix time")
	}
	if v <= spTimestamp {
		if v > uint64(tip) {
			return 0, badRequest("start height %d is above the tip %d", v, tip)
		}
		return uint32(v), nil
	}
	lo, hi := uint32(0), tip+1 // the first block whose time is at least v
	for lo < hi {
		mid := lo + (hi-lo)/2
		b, err := q.BlockTweaks(ctx, strconv.FormatUint(uint64(mid), 10), false)
		if err != nil {
			return 0, err
		}
		if uint64(b.Time) >= v {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if lo > tip {
		return 0, badRequest("start time %d is after the tip's block", v)
	}
	return lo, nil
}

// spTarget reads the keys of a subscribe or unsubscribe call against the
// tweak index: the index, its tip, the keys and their address.
func spTarget(ctx context.Context, ss *session, p params) (api.TweakQueries, *api.TweakTip, []byte, []byte, string, error) {
	q := ss.s.tweakQueries()
	if q == nil {
		return nil, nil, nil, nil, "", newErr(codeMethodNotFound, "this server keeps no Silent Payments index")
	}
	tip, err := q.TweakTip(ctx)
	if err != nil {
		return nil, nil, nil, nil, "", err
	}
	scan, spend, addr, err := spKeys(p, tip.Network)
	return q, tip, scan, spend, addr, err
}

func spSubscribe(ctx context.Context, ss *session, p params) (any, error) {
	q, tip, scan, spend, addr, err := spTarget(ctx, ss, p)
	if err != nil {
		return nil, err
	}
	labels, err := spLabels(p, ss.s.cfg.SPMaxLabels)
	if err != nil {
		return nil, err
	}
	start, err := spStart(ctx, q, p, tip.Height)
	if err != nil {
		return nil, err
	}
	sc, err := bip352.NewScanner(scan, spend, labels)
	if err != nil {
		return nil, badRequest("%v", err)
	}
	sub := &spSub{h: ss.s.sp, ss: ss, addr: addr, start: start, sc: sc, next: start, kick: make(chan struct{}, 1), hashes: map[uint32]string{}}
	sub.ctx, sub.cancel = context.WithCancel(ss.s.ctx)
	if e := ss.s.sp.add(sub); e != nil {
		sub.cancel()
		return nil, e
	}
	// The scan's notifications go out through the session's worker, so
	// they follow this answer. The session's own count in wg keeps Add
	// before Close's Wait; Close then waits for the scan to stop reading.
	ss.s.wg.Go(func() { sub.run(q) })
	return addr, nil
}

func spUnsubscribe(ctx context.Context, ss *session, p params) (any, error) {
	_, _, _, _, addr, err := spTarget(ctx, ss, p)
	if err != nil {
		return nil, err
	}
	ss.s.sp.remove(ss, addr)
	return addr, nil // as Frigate: the address, subscribed or not
}

// add files a subscription, replacing the session's one of the same
// address, or refuses it past the caps.
func (h *spHub) add(sub *spSub) *rpcError {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := h.subs[sub.ss]
	if old, ok := m[sub.addr]; ok {
		old.cancel()
		m[sub.addr] = sub
		return nil
	}
	switch {
	case len(m) >= h.s.cfg.SPMaxSubs:
		return newErr(codeExcessive, "too many Silent Payments subscriptions on this connection (limit %d)", h.s.cfg.SPMaxSubs)
	case h.total >= h.s.cfg.SPMaxSubsTotal:
		return newErr(codeExcessive, "too many Silent Payments subscriptions on this server (limit %d)", h.s.cfg.SPMaxSubsTotal)
	case h.ipKey(sub.ss) != "" && h.perIP[h.ipKey(sub.ss)] >= h.s.cfg.SPMaxSubsPerIP:
		return newErr(codeExcessive, "too many Silent Payments subscriptions from this address (limit %d)", h.s.cfg.SPMaxSubsPerIP)
	}
	if m == nil {
		m = map[string]*spSub{}
		h.subs[sub.ss] = m
	}
	m[sub.addr] = sub
	h.count(sub.ss, 1)
	return nil
}

// ipKey is the client address a subscription counts against ("" for a
// local peer, which is exempt): the session's, fixed when it began, so
// that counting and uncounting always match.
func (h *spHub) ipKey(ss *session) string {
	return ss.key
}

// count adds d subscriptions of ss to the totals; call with mu held.
func (h *spHub) count(ss *session, d int) {
	h.total += d
	if k := h.ipKey(ss); k != "" {
		if h.perIP[k] += d; h.perIP[k] <= 0 {
			delete(h.perIP, k)
		}
	}
}

func (h *spHub) remove(ss *session, addr string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if sub, ok := h.subs[ss][addr]; ok {
		sub.cancel()
		delete(h.subs[ss], addr)
		h.count(ss, -1)
		if len(h.subs[ss]) == 0 {
			delete(h.subs, ss)
		}
	}
}

// drop ends a closed session's scans.
func (h *spHub) drop(ss *session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, sub := range h.subs[ss] {
		sub.cancel()
		h.count(ss, -1)
	}
	delete(h.subs, ss)
}

// tipChanged wakes every scan (a block, a reorg, a bulk round).
func (h *spHub) tipChanged() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range h.subs {
		for _, sub := range m {
			select {
			case sub.kick <- struct{}{}:
			default:
			}
		}
	}
}

// flush sends the session's ready notifications; its worker calls it.
func (h *spHub) flush(ss *session) {
	h.mu.Lock()
	subs := make([]*spSub, 0, len(h.subs[ss]))
	for _, sub := range h.subs[ss] {
		subs = append(subs, sub)
	}
	h.mu.Unlock()
	for _, sub := range subs {
		sub.mu.Lock()
		notes := sub.notes
		sub.notes = nil
		sub.mu.Unlock()
		for _, b := range notes {
			if sub.ctx.Err() == nil {
				ss.send(b)
			}
		}
	}
}

// post queues a notification and wakes the session's worker.
func (sub *spSub) post(progress float64, history []spTx) {
	var n spNotification
	n.Subscription.Address, n.Subscription.StartHeight = sub.addr, sub.start
	n.Progress, n.History = progress, history
	if n.History == nil {
		n.History = []spTx{}
	}
	b, err := jsonMarshal(struct {
		JSONRPC string         `json:"jsonrpc"`
		Method  string         `json:"method"`
		Params  spNotification `json:"params"` // Frigate names its params
	}{"2.0", methodSP, n})
	if err != nil {
		return
	}
	sub.mu.Lock()
	sub.notes = append(sub.notes, b)
	sub.mu.Unlock()
	select {
	case sub.ss.wake <- struct{}{}:
	default:
	}
}

// run scans up to the tip, then again at each tip change, until the
// subscription ends.
func (sub *spSub) run(q api.TweakQueries) {
	for {
		if err := sub.catchUp(q); err != nil && sub.ctx.Err() == nil {
			sub.h.s.log.Warn("silent payments scan failed", "err", err)
		}
		select {
		case <-sub.kick:
		case <-sub.ctx.Done():
			return
		}
	}
}

// catchUp scans from the fork point of a reorg (or the next block) to the
// tip, in pages of spPage txs with their progress.
func (sub *spSub) catchUp(q api.TweakQueries) error {
	tip, err := q.TweakTip(sub.ctx)
	if err != nil {
		return err
	}
	if err := sub.rewind(q, tip.Height); err != nil {
		return err
	}
	var page []spTx
	last := time.Now()
	total := float64(tip.Height) - float64(sub.start) + 1
	for h := sub.next; h <= tip.Height; h++ {
		found, hash, err := sub.scanBlock(q, h)
		if err != nil {
			return err
		}
		sub.hashes[h] = hash
		delete(sub.hashes, h-spReorgDepth)
		sub.next = h + 1
		page = append(page, found...)
		for h < tip.Height && (len(page) >= spPage || time.Since(last) > spProgressEvery && !sub.caught) {
			n := min(len(page), spPage)
			sub.post(math.Min(float64(h-sub.start+1)/total, math.Nextafter(1, 0)), page[:n])
			page, last = page[n:], time.Now()
			if len(page) == 0 {
				break
			}
		}
	}
	for len(page) > spPage {
		sub.post(math.Nextafter(1, 0), page[:spPage])
		page = page[spPage:]
	}
	if !sub.caught || len(page) > 0 {
		sub.post(1, page)
		sub.caught = true
	}
	return nil
}

// rewind moves next back to the lowest scanned block no longer on the
// chain (a reorg, a shorter chain). Every kept hash is checked, not only
// down to the first that still matches: a scan reads each block in its
// own snapshot, so a reorg during it can leave a kept new block above a
// kept old one, and that old one must be scanned again.
func (sub *spSub) rewind(q api.TweakQueries, tip uint32) error {
	next := int64(sub.next)
	if next > int64(tip)+1 {
		next = int64(tip) + 1
	}
	for h := next - 1; h >= int64(sub.start); h-- {
		want, ok := sub.hashes[uint32(h)]
		if !ok {
			break // beyond the hashes kept
		}
		b, err := q.BlockTweaks(sub.ctx, strconv.FormatInt(h, 10), false)
		if err != nil {
			return err
		}
		if b.Hash != want {
			next = h
		}
	}
	for x := uint32(max(next, 0)); x < sub.next; x++ {
		delete(sub.hashes, x)
	}
	sub.next = uint32(max(next, int64(sub.start)))
	return nil
}

// scanBlock scans one block's txs under a worker slot.
func (sub *spSub) scanBlock(q api.TweakQueries, h uint32) ([]spTx, string, error) {
	select {
	case sub.h.workers <- struct{}{}:
	case <-sub.ctx.Done():
		return nil, "", sub.ctx.Err()
	}
	defer func() { <-sub.h.workers }()
	b, err := q.BlockTweaks(sub.ctx, strconv.FormatUint(uint64(h), 10), true)
	if err != nil {
		return nil, "", err
	}
	var found []spTx
	for _, tx := range b.Txs {
		outs := make([][32]byte, 0, len(tx.Outputs))
		for _, o := range tx.Outputs {
			var k [32]byte
			if len(o.Script) == 68 {
				if _, err := hex.Decode(k[:], []byte(o.Script[4:])); err == nil {
					outs = append(outs, k)
				}
			}
		}
		tw, err := hex.DecodeString(tx.Tweak)
		if err != nil {
			continue
		}
		sub.h.scanned.Add(1)
		if m, _ := sub.sc.Scan(tw, outs); len(m) > 0 {
			found = append(found, spTx{Height: h, TxHash: tx.Txid})
		}
	}
	return found, b.Hash, nil
}

// Defaults of the Silent Payments caps (Config).
const (
	DefaultSPMaxSubs      = 4
	DefaultSPMaxSubsTotal = 64
	DefaultSPMaxSubsPerIP = 8
	DefaultSPMaxLabels    = 100
)

// DefaultSPWorkers is half the cores (at least one): scanning for clients
// never takes every core from the sync and the other calls.
func DefaultSPWorkers() int { return max(1, runtime.GOMAXPROCS(0)/2) }

// spFeatures is server.features' silent_payments: the methods served and
// their caps.
type spFeatures struct {
	Methods         []string `json:"methods"`
	MaxTweakBlocks  int      `json:"max_tweak_blocks"`
	MaxSubs         int      `json:"max_subscriptions"`
	MaxSubsTotal    int      `json:"max_subscriptions_total"`
	MaxLabels       int      `json:"max_labels"`
	HistoryPageSize int      `json:"history_page_size"`
}

// spFeatures is nil when the service keeps no tweak index.
func (s *Server) spFeatures(ctx context.Context) *spFeatures {
	q := s.tweakQueries()
	if q == nil {
		return nil
	}
	if _, err := q.TweakTip(ctx); err != nil {
		return nil
	}
	return &spFeatures{Methods: []string{methodTweaks, methodSP, "blockchain.silentpayments.unsubscribe"}, MaxTweakBlocks: maxTweakBlocks,
		MaxSubs: s.cfg.SPMaxSubs, MaxSubsTotal: s.cfg.SPMaxSubsTotal, MaxLabels: s.cfg.SPMaxLabels, HistoryPageSize: spPage}
}
