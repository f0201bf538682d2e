package server

import (
	"context"
	"encoding/json"
	"math/big"
	"sync"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/internal/inorder"
)

// hub holds the subscriptions and delivers notifications. Matching a tx
// against subscribed addresses is a few map lookups done by the caller;
// rendering and sending happen on the hub's own goroutines, so neither the
// sync worker nor the mempool ever waits for a client.
type hub struct {
	s *Websocket

	mu          sync.Mutex
	newBlock    map[*wsConn]string // conn → subscribing request id
	newTx       map[*wsConn]string
	addrs       map[string]map[*wsConn]addrSub // descriptor → subscribers
	blockTxSubs int                            // address subscriptions with newBlockTxs
	fiat        map[*wsConn]fiatSub

	qmu    sync.Mutex
	blocks []blockEvent
	wake   chan struct{}
	txs    *inorder.Queue[txJob, []note]
	drops  inorder.DropLog
}

// note is a notification rendered for one subscriber.
type note struct {
	c    *wsConn
	msg  []byte
	kind string // the notifications metric's label
}

type addrSub struct {
	id          string
	newBlockTxs bool
}

type fiatSub struct {
	id       string
	currency string // lowercase; "" means all
	tokens   []string
}

type blockEvent struct {
	height uint32
	hash   bchain.Hash
	blk    *bchain.Block // nil when only the tip is known (bulk rounds)
}

// txJob is a tx to render and deliver to the listed subscribers.
type txJob struct {
	notice    api.TxNotice
	confirmed bool
	addrs     map[string][]addrTarget // descriptor → matched subscribers
	all       map[*wsConn]string      // subscribeNewTransaction subscribers
}

type addrTarget struct {
	c  *wsConn
	id string
}

// txQueue bounds the txs waiting to be rendered; renderers is how many
// render at once.
const (
	txQueue   = 4096
	renderers = 4
)

func newHub(s *Websocket) *hub {
	return &hub{
		s: s, newBlock: map[*wsConn]string{}, newTx: map[*wsConn]string{},
		addrs: map[string]map[*wsConn]addrSub{}, fiat: map[*wsConn]fiatSub{},
		wake: make(chan struct{}, 1), txs: inorder.New[txJob, []note](txQueue),
	}
}

// OnBlock queues a new tip for delivery; it never blocks.
func (s *Websocket) OnBlock(height uint32, hash bchain.Hash, blk *bchain.Block) {
	h := s.hub
	h.qmu.Lock()
	h.blocks = append(h.blocks, blockEvent{height: height, hash: hash, blk: blk})
	h.qmu.Unlock()
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// OnMempoolTx delivers a tx that entered the mempool to subscribers of its
// addresses and of all new txs; it never blocks.
func (s *Websocket) OnMempoolTx(n api.TxNotice) { s.hub.match(n, false, true) }

// OnMempoolTxResolved delivers a mempool tx again to the subscribers of
// the addresses in n.Descs, which it was found to spend from only after it
// was announced; it never blocks.
func (s *Websocket) OnMempoolTxResolved(n api.TxNotice) { s.hub.match(n, false, false) }

func (h *hub) run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	// The txs render at once and are delivered in order, so that a
	// subscriber never hears of a tx before one announced earlier.
	wg.Go(func() { h.txs.Run(ctx, renderers, h.renderTx, h.deliverNotes) })
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.wake:
		}
		h.qmu.Lock()
		blocks := h.blocks
		h.blocks = nil
		h.qmu.Unlock()
		for _, b := range blocks {
			h.deliverBlock(ctx, b)
		}
	}
}

// match finds the subscribers of a tx (with all, those of every new tx
// too) and queues it for rendering.
func (h *hub) match(n api.TxNotice, confirmed, all bool) {
	job := txJob{notice: n, confirmed: confirmed}
	h.mu.Lock()
	for _, d := range n.Descs {
		subs := h.addrs[string(d)]
		if len(subs) == 0 || job.addrs[string(d)] != nil {
			continue
		}
		var targets []addrTarget
		for c, sub := range subs {
			if !confirmed || sub.newBlockTxs {
				targets = append(targets, addrTarget{c, sub.id})
			}
		}
		if len(targets) > 0 {
			if job.addrs == nil {
				job.addrs = map[string][]addrTarget{}
			}
			job.addrs[string(d)] = targets
		}
	}
	if all && !confirmed && len(h.newTx) > 0 {
		job.all = make(map[*wsConn]string, len(h.newTx))
		for c, id := range h.newTx {
			job.all[c] = id
		}
	}
	h.mu.Unlock()
	if job.addrs == nil && job.all == nil {
		return
	}
	if !h.txs.Add(job) {
		h.s.m.notifications.WithLabelValues("dropped").Inc()
		h.drops.Note(h.s.log, "notification queue full, dropping tx notifications")
	}
}

// renderTx renders a tx's notifications (on any of the renderers).
func (h *hub) renderTx(ctx context.Context, job txJob) []note {
	tx, err := job.notice.Render(ctx)
	if err != nil {
		h.s.log.Warn("cannot render tx for notification", "txid", job.notice.Txid, "err", err)
		return nil
	}
	raw, err := json.Marshal(tx)
	if err != nil {
		h.s.log.Error("cannot encode tx for notification", "txid", job.notice.Txid, "err", err)
		return nil
	}
	var notes []note
	for c, id := range job.all {
		notes = append(notes, note{c, notification(id, raw), "newTransaction"})
	}
	kind := "addressMempool"
	if job.confirmed {
		kind = "addressBlock"
	}
	for desc, targets := range job.addrs {
		addr, ok := h.s.svc.DescAddress(bchain.AddrDesc(desc))
		if !ok {
			continue
		}
		data, err := json.Marshal(struct {
			Address string          `json:"address"`
			Tx      json.RawMessage `json:"tx"`
		}{addr, raw})
		if err != nil {
			continue
		}
		for _, t := range targets {
			notes = append(notes, note{t.c, notification(t.id, data), kind})
		}
	}
	return notes
}

// deliverNotes sends rendered notifications (one goroutine: in order).
func (h *hub) deliverNotes(notes []note) {
	for _, n := range notes {
		if n.c.send(n.msg) {
			h.s.m.notifications.WithLabelValues(n.kind).Inc()
		}
	}
}

// evmData is the gas figures of a new Ethereum-type block, from which a
// wallet projects the next base fee (Blockbook's evmData).
type evmData struct {
	BaseFeePerGas *api.Amount `json:"baseFeePerGas,omitempty"`
	BlockGasUsed  *api.Amount `json:"blockGasUsed,omitempty"`
	BlockGasLimit *api.Amount `json:"blockGasLimit,omitempty"`
}

// newBlockEvmData is a block's evmData: nil (null on the wire, as
// Blockbook's) for Bitcoin-type and pre-London blocks, and for tips
// announced without their block (bulk rounds).
func newBlockEvmData(blk *bchain.Block) *evmData {
	if blk == nil || blk.Eth == nil || blk.Eth.BaseFee == nil {
		return nil
	}
	return &evmData{
		BaseFeePerGas: (*api.Amount)(new(big.Int).Set(blk.Eth.BaseFee)),
		BlockGasUsed:  api.NewAmount(blk.Eth.GasUsed),
		BlockGasLimit: api.NewAmount(blk.Eth.GasLimit),
	}
}

func (h *hub) deliverBlock(ctx context.Context, b blockEvent) {
	data, _ := json.Marshal(struct {
		Height  uint32   `json:"height"`
		Hash    string   `json:"hash"`
		EvmData *evmData `json:"evmData"`
	}{b.height, h.s.svc.HashString(b.hash), newBlockEvmData(b.blk)})
	h.mu.Lock()
	subs := make(map[*wsConn]string, len(h.newBlock))
	for c, id := range h.newBlock {
		subs[c] = id
	}
	wantTxs := h.blockTxSubs > 0
	h.mu.Unlock()
	for c, id := range subs {
		if c.send(notification(id, data)) {
			h.s.m.notifications.WithLabelValues("newBlock").Inc()
		}
	}
	if !wantTxs || b.blk == nil {
		return
	}
	notices, err := h.s.svc.BlockTxNotices(ctx, b.blk)
	if err != nil {
		h.s.log.Warn("cannot list block txs for notifications", "height", b.height, "err", err)
		return
	}
	for _, n := range notices {
		h.match(n, true, false)
	}
}

// notification renders {id, data} around pre-encoded data, so that a
// broadcast encodes its payload once.
func notification(id string, data json.RawMessage) []byte {
	qid, _ := json.Marshal(id)
	msg := make([]byte, 0, len(qid)+len(data)+16)
	msg = append(msg, `{"id":`...)
	msg = append(msg, qid...)
	msg = append(msg, `,"data":`...)
	msg = append(msg, data...)
	return append(msg, '}')
}

// forget drops every subscription of a closed connection.
func (h *hub) forget(c *wsConn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.newBlock, c)
	delete(h.newTx, c)
	delete(h.fiat, c)
	h.unsubscribeAddrsLocked(c)
	h.gauges()
}

func (h *hub) unsubscribeAddrsLocked(c *wsConn) {
	for _, d := range c.addrs {
		subs := h.addrs[d]
		if sub, ok := subs[c]; ok && sub.newBlockTxs {
			h.blockTxSubs--
		}
		delete(subs, c)
		if len(subs) == 0 {
			delete(h.addrs, d)
		}
	}
	c.addrs = nil
}

// gauges publishes subscription counts; h.mu must be held.
func (h *hub) gauges() {
	m := h.s.m.subscriptions
	m.WithLabelValues("newBlock").Set(float64(len(h.newBlock)))
	m.WithLabelValues("newTransaction").Set(float64(len(h.newTx)))
	m.WithLabelValues("addresses").Set(float64(len(h.addrs)))
	m.WithLabelValues("fiatRates").Set(float64(len(h.fiat)))
}
