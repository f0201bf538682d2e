package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/btcsuite/btcd/chaincfg/v2"
	"github.com/gorilla/websocket"

	"github.com/openexplorer/blockbook/tools/benchproc"
	"github.com/openexplorer/blockbook/tools/chaingen"
)

// Client mode: this binary re-executed by the coordinator holds a share of
// the connections. Each connection subscribes to new blocks and to its 5
// addresses, like a wallet. Every notification is stamped with the wall
// clock when read and reported on stdout:
//
//	ready <connections> <ms to connect and subscribe all>
//	m <conn> <txid> <unix ns>     address notification, tx in the mempool
//	c <conn> <txid> <unix ns>     address notification, tx in a block (-newblocktxs)
//	b <conn> <height> <unix ns>   new-block notification
//	closed <conn> <reason>        the server closed a connection
//	fatal <message>
//
// The client closes its connections and exits when stdin closes.

// addrsPerConn is how many addresses each connection subscribes to.
const addrsPerConn = 5

// addrBase keeps the subscribed addresses apart from the demo chain's.
const addrBase = 1_000_000

// connAddr is the wallet index of a connection's address slot.
func connAddr(conn, slot int) uint64 { return addrBase + uint64(conn)*addrsPerConn + uint64(slot) }

type clientOpts struct {
	url         string
	seed        string
	first, n    int
	dial        int
	compress    bool
	newBlockTxs bool
}

// out serializes report lines from many connection goroutines.
type out struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func (o *out) line(format string, args ...any) {
	o.mu.Lock()
	_, _ = fmt.Fprintf(o.w, format+"\n", args...) // stdout: nothing to do if it fails
	o.mu.Unlock()
}

// flusher flushes buffered lines every few milliseconds, so that the
// coordinator sees receipts promptly (their timestamps are taken on read).
func (o *out) flusher() {
	for range time.Tick(5 * time.Millisecond) {
		o.mu.Lock()
		_ = o.w.Flush()
		o.mu.Unlock()
	}
}

func runClient(o clientOpts) {
	benchproc.RaiseNoFile()
	w := &out{w: bufio.NewWriterSize(os.Stdout, 1<<16)}
	go w.flusher()
	fatal := func(err error) {
		w.line("fatal %v", err)
		w.mu.Lock()
		_ = w.w.Flush()
		os.Exit(1)
	}
	g := chaingen.New(&chaincfg.RegressionNetParams, o.seed)
	addrs := make([][]string, o.n)
	for i := range addrs {
		for s := range addrsPerConn {
			a, err := g.Address(chaingen.P2WPKH, connAddr(o.first+i, s))
			if err != nil {
				fatal(err)
			}
			addrs[i] = append(addrs[i], a)
		}
	}
	dialer := &websocket.Dialer{HandshakeTimeout: 60 * time.Second, EnableCompression: o.compress,
		ReadBufferSize: 4096, WriteBufferSize: 4096}
	start := time.Now()
	conns := make([]*websocket.Conn, o.n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, o.dial)
	errs := make(chan error, o.n)
	for i := range o.n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, err := subscribe(dialer, o, addrs[i])
			if err != nil {
				errs <- fmt.Errorf("connection %d: %w", o.first+i, err)
				return
			}
			conns[i] = c
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		fatal(err)
	}
	w.line("ready %d %d", o.n, time.Since(start).Milliseconds())
	for i, c := range conns {
		go readLoop(c, o.first+i, w)
	}
	_, _ = io.Copy(io.Discard, os.Stdin) // until the coordinator closes stdin
	for _, c := range conns {
		_ = c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
		_ = c.Close()
	}
	w.mu.Lock()
	_ = w.w.Flush()
}

// subscribe opens one connection and subscribes it to new blocks and to
// addrs, waiting for both confirmations.
func subscribe(d *websocket.Dialer, o clientOpts, addrs []string) (*websocket.Conn, error) {
	c, _, err := d.Dial(o.url, http.Header{"Origin": {"https://node.trezor.io"}})
	if err != nil {
		return nil, err
	}
	reqs := []map[string]any{
		{"id": "b", "method": "subscribeNewBlock"},
		{"id": "a", "method": "subscribeAddresses", "params": map[string]any{"addresses": addrs, "newBlockTxs": o.newBlockTxs}},
	}
	for _, r := range reqs {
		if err := c.WriteJSON(r); err != nil {
			c.Close()
			return nil, err
		}
	}
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Minute))
	for acked := 0; acked < len(reqs); {
		var res struct {
			ID   string
			Data struct {
				Subscribed *bool
				Error      *struct{ Message string }
			}
		}
		if err := c.ReadJSON(&res); err != nil {
			c.Close()
			return nil, err
		}
		switch {
		case res.Data.Error != nil || (res.Data.Subscribed != nil && !*res.Data.Subscribed):
			c.Close()
			return nil, fmt.Errorf("subscription %s refused: %+v", res.ID, res.Data.Error)
		case res.Data.Subscribed != nil:
			acked++
		} // anything else is an early notification
	}
	_ = c.SetReadDeadline(time.Time{})
	return c, nil
}

// notice is the part of a notification the bench looks at.
type notice struct {
	ID   string `json:"id"`
	Data struct {
		Height uint32 `json:"height"`
		Tx     struct {
			Txid        string `json:"txid"`
			BlockHeight int64  `json:"blockHeight"`
		} `json:"tx"`
	} `json:"data"`
}

func readLoop(c *websocket.Conn, conn int, w *out) {
	for {
		_, data, err := c.ReadMessage()
		now := time.Now().UnixNano()
		if err != nil {
			w.line("closed %d %s", conn, strconv.Quote(err.Error()))
			return
		}
		var n notice
		if err := json.Unmarshal(data, &n); err != nil {
			w.line("closed %d %s", conn, strconv.Quote("bad message: "+err.Error()))
			return
		}
		switch {
		case n.ID == "b":
			w.line("b %d %d %d", conn, n.Data.Height, now)
		case n.ID == "a" && n.Data.Tx.BlockHeight > 0:
			w.line("c %d %s %d", conn, n.Data.Tx.Txid, now)
		case n.ID == "a":
			w.line("m %d %s %d", conn, n.Data.Tx.Txid, now)
		}
	}
}
