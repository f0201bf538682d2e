package esplora

import (
	"fmt"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/internal/wsconn"
)

// wsConn is one client of the mempool.space websocket: the kit's
// connection (internal/wsconn), whose queue is bounded in bytes as
// mempool.space's MAX_BUFFERED_AMOUNT rule bounds it, with what the client
// asked for.
type wsConn struct {
	*wsconn.Conn
	w *mpWS

	// blockMu serializes the sends of track-mempool-block's answer and
	// the hub's block updates, so that a delta never reaches the client
	// before the list it applies to.
	blockMu sync.Mutex

	mu sync.Mutex
	// What the client asked for, guarded by mu (addresses also by the
	// hub's index).
	wants   map[string]bool
	trackTx *bchain.Hash
	// toldReplaced is the tracked tx whose replacement the client was told.
	toldReplaced bchain.Hash
	trackAddr    string                     // track-address ("" none)
	addrs        map[string]bchain.AddrDesc // track-addresses and track-address, by address
	multi        map[string]bool            // the addresses of track-addresses
	rbf          string                     // track-rbf: "all", "fullRbf" or ""
	rbfSum       bool                       // track-rbf-summary
	mempoolBlock int                        // track-mempool-block (-1 none)
	blockSeq     uint64                     // the sequence of the block list it holds (0 unknown)
	trackTxs     []bchain.Hash              // track-txs
	txsTold      map[bchain.Hash]bool       // track-txs whose replacement was told
	mempoolTxids bool                       // track-mempool-txids
	mempoolFull  bool                       // track-mempool
	watching     bool                       // counted in spendWatchers
	gone         bool                       // disconnected
	cpfpTold     map[cpfpTopic]string       // tracked txs' CPFP figures as last told, per message
	stamps       []time.Time                // readLoop only: message times in the window
}

func newWSConn(w *mpWS, ws *websocket.Conn) *wsConn {
	return &wsConn{
		Conn: wsconn.New(ws, wsconn.Config{MaxQueueBytes: w.cfg.MaxQueueBytes, Budget: w.queued, MaxMessageBytes: int64(w.cfg.MaxMessageBytes),
			PingInterval: w.cfg.PingInterval, WriteTimeout: wsWriteTimeout}),
		w: w, wants: map[string]bool{}, addrs: map[string]bchain.AddrDesc{}, multi: map[string]bool{}, mempoolBlock: -1, txsTold: map[bchain.Hash]bool{},
	}
}

func (c *wsConn) send(msg []byte) bool { return c.Send(msg) }

// readLoop reads messages until the connection fails, then cleans up.
func (c *wsConn) readLoop() {
	c.ReadLoop(func(kind int, data []byte) {
		if c.overRate() {
			c.CloseWith(websocket.ClosePolicyViolation, fmt.Sprintf("more than %d messages in %s", c.w.cfg.MessageRate, c.w.cfg.MessageWindow))
			return
		}
		if kind != websocket.TextMessage {
			c.send(wsError("binary messages are not supported: send JSON text"))
			return
		}
		c.w.handle(c, data)
	})
	c.mu.Lock()
	followed := c.mempoolTxids || c.mempoolFull
	c.mu.Unlock()
	if followed {
		c.w.mempoolTrackers.Add(-1)
	}
	c.mu.Lock()
	c.gone = true
	c.updateWatchLocked()
	c.mu.Unlock()
	c.w.disconnected(c)
}

// overRate counts a message against MessageRate per MessageWindow
// (mempool.space closes a client past 100 messages in 10 s).
func (c *wsConn) overRate() bool {
	now := time.Now()
	cut := now.Add(-c.w.cfg.MessageWindow)
	i := 0
	for i < len(c.stamps) && !c.stamps[i].After(cut) {
		i++
	}
	c.stamps = append(c.stamps[i:], now)
	return len(c.stamps) > c.w.cfg.MessageRate
}
