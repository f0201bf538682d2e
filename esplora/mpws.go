package esplora

import (
	"context"
	"log/slog"
	"math"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/internal/bytebudget"
	"github.com/openexplorer/blockbook/internal/inorder"
	"github.com/openexplorer/blockbook/internal/promreg"
)

// mempool.space's websocket (/api/v1/ws, backend/src/api/websocket-handler.ts):
// clients send JSON objects ({"action": "init"}, {"action": "want", "data":
// [...]}, {"track-address": ...}, ...) and get objects whose keys name what
// they carry. The data comes from the same queries as the REST routes; the
// pushes follow the sync worker's blocks, the mempool's txs and the
// projection's rebuilds.

// WSConfig bounds the websocket's clients.
type WSConfig struct {
	// MaxMessageBytes: a larger message closes the connection
	// (mempool.space's MAX_MESSAGE_SIZE, 50,000).
	MaxMessageBytes int
	// MaxAddresses caps track-addresses (mempool.space's
	// MAX_TRACKED_ADDRESSES).
	MaxAddresses int
	// MaxQueueBytes: a client with more bytes waiting to be written (or
	// being written) is dropped. Mempool.space's MAX_BUFFERED_AMOUNT is
	// 10,000,000; ours is lower, as a full projected block is a few
	// hundred KB.
	MaxQueueBytes int
	// MaxQueuedBytes bounds the bytes waiting for all clients: past it, a
	// client that still holds bytes is dropped at its next message.
	MaxQueuedBytes int
	// MessageRate messages per MessageWindow; one more closes the
	// connection (mempool.space: 100 per 10 s).
	MessageRate   int
	MessageWindow time.Duration
	// PingInterval: the server pings this often; a client silent for two
	// intervals is dropped.
	PingInterval time.Duration
	// StatsInterval: live-2h-chart's samples come this often
	// (DefaultWSStatsInterval).
	StatsInterval time.Duration
}

// Defaults of WSConfig.
const (
	DefaultWSMaxMessageBytes = 50_000
	DefaultWSMaxAddresses    = 100
	DefaultWSMaxQueueBytes   = 2 << 20
	DefaultWSMaxQueuedBytes  = 64 << 20
	DefaultWSMessageRate     = 100
	wsWriteTimeout           = 30 * time.Second
	// initialBlocks is mempool.space's INITIAL_BLOCKS_AMOUNT.
	initialBlocks = 8
	// latestTxs is how many new txs "transactions" lists.
	latestTxs = 6
	// rateWindow is mempool.space's TX_PER_SECOND_SAMPLE_PERIOD (s).
	rateWindow = 150
	// wsTxQueue bounds the address notifications waiting to be rendered.
	wsTxQueue = 4096
)

func (c *WSConfig) defaults() {
	set := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	set(&c.MaxMessageBytes, DefaultWSMaxMessageBytes)
	set(&c.MaxAddresses, DefaultWSMaxAddresses)
	set(&c.MaxQueueBytes, DefaultWSMaxQueueBytes)
	set(&c.MaxQueuedBytes, DefaultWSMaxQueuedBytes)
	set(&c.MessageRate, DefaultWSMessageRate)
	if c.MessageWindow <= 0 {
		c.MessageWindow = 10 * time.Second
	}
	if c.PingInterval <= 0 {
		c.PingInterval = 30 * time.Second
	}
	if c.StatsInterval <= 0 {
		c.StatsInterval = DefaultWSStatsInterval
	}
}

// MempoolTx is a tx that entered the mempool, as the websocket hears of
// it: what it touches, and its figures for the "transactions" list (fee 0
// while an input is not resolved).
type MempoolTx struct {
	Txid   bchain.Hash
	Descs  []bchain.AddrDesc
	Weight int
	Fee    uint64
	Value  uint64
	// Prevouts are the outputs its inputs spend, in input order (for
	// utxoSpent; empty on a later resolution).
	Prevouts []Outpoint
}

// wsBudget is the bytes held for all clients (a *bytebudget.Budget).
type wsBudget interface {
	TryTake(n int64, alone bool) bool
	Give(n int64)
	Used() int64
}

// mpWS is the websocket server and its hub.
type mpWS struct {
	s        *Server
	cfg      WSConfig
	log      *slog.Logger
	upgrader websocket.Upgrader
	queued   wsBudget // bytes held for all clients

	mu     sync.Mutex
	conns  map[*wsConn]struct{}
	byDesc map[string]map[*wsConn]struct{} // tracked address descriptors
	closed bool

	emu     sync.Mutex
	blocks  []blockNote
	refresh bool
	rates   bool // new fiat rates to push as conversions
	wake    chan struct{}
	txJobs  *inorder.Queue[txJob, []wsOut]
	drops   inorder.DropLog
	dropped prometheus.Counter // address notifications dropped
	latest  []strippedTx       // newest first, at most latestTxs
	rate    [rateWindow]rateBucket
	lastRbf uint64 // hub goroutine only: the RBF history's version last pushed
	// pushed is each tracked projected block as last pushed (the hub
	// writes it, track-mempool-block reads it); seq numbers the pushes.
	bmu    sync.Mutex
	pushed map[int]*pushedBlock
	seq    atomic.Uint64
	// The mempool's changes since the last push, collected while a client
	// follows them (mempoolTrackers), and the txids of the last blocks
	// (hub goroutine only), whose removal is no news.
	mempoolTrackers      atomic.Int64
	addedIDs, removedIDs []bchain.Hash
	// spendWatchers counts the clients that track a tx; while there are,
	// the inputs of new mempool txs are collected (spends, under emu).
	spendWatchers atomic.Int64
	spends        []spendNote
	// minedNow holds the txids of the blocks since the last mempool push
	// and minedPrev those before (under emu): their removals from the
	// mempool are no news, however many blocks a catch-up connects.
	minedNow, minedPrev map[bchain.Hash]bool
	minedOver           bool // minedNow reached maxMinedIDs
	// trackingHook (tests) runs between the choice of a
	// track-mempool-block answer and its send.
	trackingHook func()
}

type blockNote struct {
	height uint32
	hash   bchain.Hash
	blk    *bchain.Block
}

// txJob is a mempool tx to render for the clients tracking its addresses.
type txJob struct {
	txid    bchain.Hash
	targets map[*wsConn][]string // client → the tracked addresses it touches
}

type rateBucket struct {
	sec   int64
	vsize float64
}

// strippedTx is mempool.space's TransactionStripped.
type strippedTx struct {
	Txid  string  `json:"txid"`
	Fee   uint64  `json:"fee"`
	VSize float64 `json:"vsize"`
	Value uint64  `json:"value"`
	Rate  float64 `json:"rate"`
}

func newMpWS(s *Server, cfg WSConfig) *mpWS {
	cfg.defaults()
	w := &mpWS{s: s, cfg: cfg, log: s.log.With("front", "mempool.space websocket"),
		conns: map[*wsConn]struct{}{}, byDesc: map[string]map[*wsConn]struct{}{},
		wake: make(chan struct{}, 1), txJobs: inorder.New[txJob, []wsOut](wsTxQueue), pushed: map[int]*pushedBlock{},
		queued: bytebudget.New(int64(cfg.MaxQueuedBytes)),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "blockbook_mempoolspace_ws_notifications_dropped_total",
			Help: "Address notifications of the mempool.space websocket dropped because the render queue was full.",
		})}
	if s.opts.Registerer != nil {
		w.dropped = promreg.Register(s.opts.Registerer, w.dropped)
	}
	w.upgrader = websocket.Upgrader{
		ReadBufferSize: 4 << 10, WriteBufferSize: 16 << 10, WriteBufferPool: &sync.Pool{}, EnableCompression: true,
		// mempool.space's own frontend connects from any origin.
		CheckOrigin: func(*http.Request) bool { return true },
		Error: func(rw http.ResponseWriter, _ *http.Request, status int, reason error) {
			writeText(rw, status, "application/json", wsError("websocket upgrade failed: "+reason.Error()))
		},
	}
	return w
}

// ServeHTTP upgrades a client.
func (w *mpWS) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	w.mu.Lock()
	closed := w.closed
	w.mu.Unlock()
	if closed {
		writeText(rw, http.StatusServiceUnavailable, "application/json", wsError("server shutting down"))
		return
	}
	ws, err := w.upgrader.Upgrade(rw, r, nil)
	if err != nil {
		return // the upgrader answered
	}
	c := newWSConn(w, ws)
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		_ = ws.Close()
		return
	}
	w.conns[c] = struct{}{}
	w.mu.Unlock()
	go c.WriteLoop()
	go c.readLoop()
}

func (w *mpWS) disconnected(c *wsConn) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.conns, c)
	w.untrackLocked(c)
}

// untrackLocked drops c's addresses from the index; w.mu is held.
func (w *mpWS) untrackLocked(c *wsConn) {
	c.mu.Lock()
	addrs := c.addrs
	c.addrs = map[string]bchain.AddrDesc{}
	c.mu.Unlock()
	for _, d := range addrs {
		if subs := w.byDesc[string(d)]; subs != nil {
			delete(subs, c)
			if len(subs) == 0 {
				delete(w.byDesc, string(d))
			}
		}
	}
}

// close drops every client (at shutdown: http.Server.Shutdown leaves
// hijacked connections alone).
func (w *mpWS) close() {
	w.mu.Lock()
	w.closed = true
	conns := make([]*wsConn, 0, len(w.conns))
	for c := range w.conns {
		conns = append(conns, c)
	}
	w.mu.Unlock()
	for _, c := range conns {
		c.CloseWith(websocket.CloseGoingAway, "server shutting down")
	}
}

// clients is a copy of the open connections.
func (w *mpWS) clients() []*wsConn {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]*wsConn, 0, len(w.conns))
	for c := range w.conns {
		out = append(out, c)
	}
	return out
}

// OnBlock queues a connected block for the websocket's clients; it never
// blocks.
func (s *Server) OnBlock(height uint32, hash bchain.Hash, blk *bchain.Block) {
	w := s.ws
	w.noteMined(blk) // every block, also those a catch-up's push skips
	w.emu.Lock()
	w.blocks = append(w.blocks, blockNote{height, hash, blk})
	if len(w.blocks) > initialBlocks { // a catch-up: only the last ones matter
		w.blocks = w.blocks[len(w.blocks)-initialBlocks:]
	}
	w.emu.Unlock()
	w.signal()
}

// OnProjection tells the websocket that the projected blocks were rebuilt
// (the mempool changed); it never blocks.
func (s *Server) OnProjection() {
	w := s.ws
	w.emu.Lock()
	w.refresh = true
	w.emu.Unlock()
	w.signal()
}

// OnFiatRates tells the websocket that the current fiat rates changed:
// every client gets the new conversions, as mempool.space pushes them; it
// never blocks.
func (s *Server) OnFiatRates() {
	w := s.ws
	w.emu.Lock()
	w.rates = true
	w.emu.Unlock()
	w.signal()
}

// OnMempoolTx hears a tx that entered the mempool (or whose inputs were
// resolved later: then with only the newly known descriptors and a zero
// Weight); it never blocks.
func (s *Server) OnMempoolTx(tx MempoolTx) {
	w := s.ws
	if tx.Weight > 0 {
		w.noteAdded(tx.Txid)
		w.noteSpends(tx.Txid, tx.Prevouts)
		vsize := float64(tx.Weight) / 4
		w.emu.Lock()
		now := time.Now().Unix()
		b := &w.rate[now%rateWindow]
		if b.sec != now {
			*b = rateBucket{sec: now}
		}
		b.vsize += vsize
		st := strippedTx{Txid: tx.Txid.String(), Fee: tx.Fee, VSize: vsize, Value: tx.Value, Rate: float64(tx.Fee) / vsize}
		w.latest = append([]strippedTx{st}, w.latest[:min(len(w.latest), latestTxs-1)]...)
		w.emu.Unlock()
	}
	job := txJob{txid: tx.Txid}
	w.mu.Lock()
	for _, d := range tx.Descs {
		for c := range w.byDesc[string(d)] {
			if job.targets == nil {
				job.targets = map[*wsConn][]string{}
			}
			for _, a := range c.addressesOf(d) {
				if !contains(job.targets[c], a) {
					job.targets[c] = append(job.targets[c], a)
				}
			}
		}
	}
	w.mu.Unlock()
	if job.targets == nil {
		return
	}
	if !w.txJobs.Add(job) {
		w.dropped.Inc()
		w.drops.Note(w.log, "address notification queue full, dropping notifications")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// addressesOf lists c's tracked addresses of descriptor d.
func (c *wsConn) addressesOf(d bchain.AddrDesc) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for a, x := range c.addrs {
		if string(x) == string(d) {
			out = append(out, a)
		}
	}
	return out
}

// vBytesPerSecond is mempool.space's: the vbytes of the txs that entered
// the mempool in the last rateWindow seconds, per second, rounded.
func (w *mpWS) vBytesPerSecond() int {
	w.emu.Lock()
	defer w.emu.Unlock()
	now := time.Now().Unix()
	sum := 0.0
	for _, b := range w.rate {
		if b.sec > now-rateWindow && b.sec <= now {
			sum += b.vsize
		}
	}
	return int(math.Round(sum / rateWindow))
}

func (w *mpWS) latestTxs() []strippedTx {
	w.emu.Lock()
	defer w.emu.Unlock()
	return append([]strippedTx{}, w.latest...)
}

func (w *mpWS) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// RunWS delivers the websocket's pushes until ctx ends, then drops its
// clients.
func (s *Server) RunWS(ctx context.Context) {
	w := s.ws
	defer w.close()
	var wg sync.WaitGroup
	defer wg.Wait()
	// Two render; one delivers in the txs' order, so that a client never
	// hears of a tx before one that entered the mempool earlier.
	wg.Go(func() { w.txJobs.Run(ctx, 2, w.renderMempoolTx, deliverMempoolTx) })
	stats := time.NewTicker(w.cfg.StatsInterval)
	defer stats.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-stats.C:
			w.pushStats(ctx)
			continue
		case <-w.wake:
		}
		w.emu.Lock()
		blocks, refresh, rates := w.blocks, w.refresh, w.rates
		w.blocks, w.refresh, w.rates = nil, false, false
		w.emu.Unlock()
		if rates {
			w.pushConversions(ctx)
		}
		for _, b := range blocks {
			w.pushBlock(ctx, b)
		}
		if refresh {
			w.pushMempool(ctx)
		}
	}
}
