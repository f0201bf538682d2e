package esplora_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/openexplorer/blockbook/api"
	"github.com/openexplorer/blockbook/bchain"
	"github.com/openexplorer/blockbook/esplora"
)

// The mempool.space websocket's per-client bounds over the fixture: the
// message rate, the frame size and the send queue in bytes each close the
// client that passes them, with a close frame saying why.

func dialWS(t *testing.T, opts esplora.Options) (*fixture, *websocket.Conn) {
	t.Helper()
	f := newFixture(t, opts)
	ts := httptest.NewServer(f.srv)
	t.Cleanup(ts.Close)
	t.Cleanup(f.srv.CloseWS)
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http")+"/api/v1/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return f, c
}

// closeCode reads until the connection ends and returns its close code.
func closeCode(t *testing.T, c *websocket.Conn) (int, string) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		if _, _, err := c.ReadMessage(); err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Code, ce.Text
			}
			t.Fatalf("connection ended without a close frame: %v", err)
		}
	}
}

func TestWSInitFromTheIndex(t *testing.T) {
	f, c := dialWS(t, esplora.Options{})
	if err := c.WriteJSON(map[string]string{"action": "init"}); err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := c.ReadJSON(&m); err != nil {
		t.Fatal(err)
	}
	var blocks []struct {
		ID     string `json:"id"`
		Height uint32 `json:"height"`
	}
	if err := json.Unmarshal(m["blocks"], &blocks); err != nil {
		t.Fatalf("%v in %s", err, m["blocks"])
	}
	tip := len(f.Chain.Raw) - 1
	if len(blocks) != 8 || blocks[7].Height != uint32(tip) || blocks[0].Height != uint32(tip-7) {
		t.Fatalf("init blocks: %+v (tip %d)", blocks, tip)
	}
	if string(m["backend"]) != `"esplora"` || m["da"] == nil {
		t.Fatalf("init: %v", m)
	}
	// Without a projection the mempool's parts are left out, not faked.
	if _, ok := m["mempool-blocks"]; ok {
		t.Fatalf("mempool-blocks without a projection: %s", m["mempool-blocks"])
	}
}

func TestWSMessageRateCloses(t *testing.T) {
	_, c := dialWS(t, esplora.Options{WS: esplora.WSConfig{MessageRate: 5, MessageWindow: time.Minute}})
	for range 6 {
		if err := c.WriteJSON(map[string]string{"action": "ping"}); err != nil {
			t.Fatal(err)
		}
	}
	if code, text := closeCode(t, c); code != websocket.ClosePolicyViolation || !strings.Contains(text, "more than 5 messages") {
		t.Fatalf("close %d %q", code, text)
	}
}

func TestWSFrameSizeCloses(t *testing.T) {
	_, c := dialWS(t, esplora.Options{WS: esplora.WSConfig{MaxMessageBytes: 1000}})
	if err := c.WriteMessage(websocket.TextMessage, []byte(`{"track-tx":"`+strings.Repeat("0", 1000)+`"}`)); err != nil {
		t.Fatal(err)
	}
	if code, text := closeCode(t, c); code != websocket.CloseMessageTooBig || !strings.Contains(text, "1000 bytes") {
		t.Fatalf("close %d %q", code, text)
	}
}

// A client that asks for the blocks again and again without reading fills
// its queue past MaxQueueBytes and is dropped: its writes then fail. (The
// close frame cannot reach a client whose socket is full.)
func TestWSSendQueueBoundInBytes(t *testing.T) {
	_, c := dialWS(t, esplora.Options{WS: esplora.WSConfig{MaxQueueBytes: 64 << 10, MessageRate: 1 << 30}})
	req := []byte(`{"refresh-blocks":true}`)
	deadline := time.Now().Add(60 * time.Second)
	for i := 0; ; i++ {
		_ = c.SetWriteDeadline(deadline)
		if err := c.WriteMessage(websocket.TextMessage, req); err != nil {
			if time.Now().After(deadline) {
				t.Fatalf("the server kept a client that does not read (%d requests): %v", i, err)
			}
			t.Logf("dropped after %d requests: %v", i, err)
			return
		}
		if i%200 == 199 {
			time.Sleep(10 * time.Millisecond) // let the server's queue grow
		}
	}
}

// Clients that ask and never read share MaxQueuedBytes: the bytes held
// for all of them stay under it (plus one message each), each is dropped,
// and every byte is given back.
func TestWSQueuedBytesShared(t *testing.T) {
	const clients, budget = 2, 64 << 10
	f := newFixture(t, esplora.Options{WS: esplora.WSConfig{MaxQueueBytes: 4 << 20, MaxQueuedBytes: budget, MessageRate: 1 << 30}})
	ts := httptest.NewServer(f.srv)
	t.Cleanup(ts.Close)
	t.Cleanup(f.srv.CloseWS)
	url := "ws" + strings.TrimPrefix(ts.URL, "http") + "/api/v1/ws"
	// One answer's size bounds the overshoot: each client may take one
	// message while it holds none.
	probe, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = probe.WriteMessage(websocket.TextMessage, []byte(`{"refresh-blocks":true}`))
	_, one, err := probe.ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	_ = probe.Close()
	limit := int64(budget + clients*len(one))
	done := make(chan struct{})
	errs := make(chan error, clients)
	// A small receive window keeps the kernel from buffering much of
	// what the server writes, so that its queues fill soon.
	dialer := websocket.Dialer{NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(4 << 10)
		}
		return c, err
	}}
	for range clients {
		c, _, err := dialer.Dial(url, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		go func() { // writes until the server drops it; never reads
			req := []byte(`{"refresh-blocks":true}`)
			deadline := time.Now().Add(60 * time.Second)
			for {
				_ = c.SetWriteDeadline(deadline)
				if err := c.WriteMessage(websocket.TextMessage, req); err != nil {
					errs <- err
					return
				}
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
			}
		}()
	}
	peak := int64(0)
	ended := 0
	for ended < clients {
		select {
		case err := <-errs:
			if err == nil {
				t.Fatal("stopped")
			}
			ended++
		case <-time.After(time.Millisecond):
		}
		if q := f.srv.WSQueuedBytes(); q > peak {
			peak = q
		}
		if peak > limit {
			close(done)
			t.Fatalf("%d bytes held for %d clients that do not read (budget %d, answers of %d bytes)", peak, clients, budget, len(one))
		}
	}
	t.Logf("peak %d bytes held (budget %d, answers of %d bytes)", peak, budget, len(one))
	deadline := time.Now().Add(30 * time.Second)
	for f.srv.WSQueuedBytes() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes still held after every client was dropped", f.srv.WSQueuedBytes())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A client tracking an address hears of its new txs in the order they
// entered the mempool, though two workers render them.
func TestWSAddressNotificationsInOrder(t *testing.T) {
	f := newFixture(t, esplora.Options{WS: esplora.WSConfig{MessageRate: 1 << 30}})
	c, _, err := websocket.DefaultDialer.Dial(runWS(t, f), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	// The script with the most confirmed txs, as an address.
	var script []byte
	var txids []bchain.Hash
	for s, h := range f.oracle.hist {
		if _, ok := f.svc.DescAddress(bchain.AddrDesc(s)); !ok || len(h) <= len(txids) {
			continue
		}
		script, txids = []byte(s), nil
		for _, e := range h {
			txids = append(txids, e.Txid)
		}
	}
	if len(txids) < 10 {
		t.Fatalf("the fixture's busiest address has %d txs", len(txids))
	}
	addr, _ := f.svc.DescAddress(script)
	trackAddress(t, c, addr)
	// Many rounds over the same txs: with unordered workers a reordering
	// shows within a few.
	const rounds = 10
	for range rounds {
		for _, id := range txids {
			f.srv.OnMempoolTx(esplora.MempoolTx{Txid: id, Descs: []bchain.AddrDesc{script}})
		}
	}
	for i := range rounds * len(txids) {
		var m struct {
			Txs []struct {
				Txid string `json:"txid"`
			} `json:"address-transactions"`
		}
		if err := c.ReadJSON(&m); err != nil {
			t.Fatalf("notification %d: %v", i, err)
		}
		if want := txids[i%len(txids)].String(); len(m.Txs) != 1 || m.Txs[0].Txid != want {
			t.Fatalf("notification %d: %+v, want %s", i, m.Txs, want)
		}
	}
}

// A burst past the address notification queue is dropped and counted in
// blockbook_mempoolspace_ws_notifications_dropped_total.
func TestWSDroppedNotificationsCounted(t *testing.T) {
	reg := prometheus.NewRegistry()
	f := newFixture(t, esplora.Options{Registerer: reg}) // RunWS not started: nothing is taken from the queue
	ts := httptest.NewServer(f.srv)
	t.Cleanup(ts.Close)
	t.Cleanup(f.srv.CloseWS)
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http")+"/api/v1/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	// An address that maps back to its own script (a P2PK script is shown as
	// its P2PKH address, which tracks another script).
	var script []byte
	var addr string
	for s := range f.oracle.hist {
		a, ok := f.svc.DescAddress(bchain.AddrDesc(s))
		if d, err := f.svc.AddrDesc(a); ok && err == nil && string(d) == s {
			script, addr = []byte(s), a
			break
		}
	}
	if script == nil {
		t.Fatal("no script of the fixture has an address that maps back to it")
	}
	trackAddress(t, c, addr)
	const queue, extra = 4096, 25
	for range queue + extra {
		f.srv.OnMempoolTx(esplora.MempoolTx{Descs: []bchain.AddrDesc{script}})
	}
	if got := counterValue(t, reg, "blockbook_mempoolspace_ws_notifications_dropped_total"); got != extra {
		t.Fatalf("%v notifications counted dropped, want %d", got, extra)
	}
}

// trackAddress tracks addr on c and waits for the answer to a ping sent
// after it, so that the subscription is in place.
func trackAddress(t *testing.T, c *websocket.Conn, addr string) {
	t.Helper()
	for _, m := range []string{`{"track-address":"` + addr + `"}`, `{"action":"ping"}`} {
		if err := c.WriteMessage(websocket.TextMessage, []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, pong, err := c.ReadMessage(); err != nil || !strings.Contains(string(pong), "pong") {
		t.Fatalf("ping: %s %v", pong, err)
	}
}

// counterValue reads a registered counter by name.
func counterValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// Clients that track txs and follow the mempool get one message whose
// shared mempool delta is a buffer shared by all of them and whose own
// tracked-txs alone is theirs: a client that does not read holds a few
// hundred bytes of its own, not a copy of the delta (which is capped in
// bytes). The tracked tx's output
// spent by a new mempool tx comes as utxoSpent.
func TestWSSharedDeltaNotCopiedPerClient(t *testing.T) {
	const clients, queue = 16, 2 << 20
	f := newFixture(t, esplora.Options{WS: esplora.WSConfig{MaxQueueBytes: queue, MessageRate: 1 << 30}})
	charged := esplora.CountWSCharges(f.srv)
	url := runWS(t, f)
	tracked, spender := hashOf(strings.Repeat("ab", 32)), hashOf(strings.Repeat("cd", 32))
	conns := make([]*websocket.Conn, clients)
	for i := range conns {
		conns[i] = dialPinged(t, url, `{"track-txs":["`+tracked.String()+`"],"track-mempool-txids":true}`)
	}
	before := charged()
	// 40,000 new txids: 2.7 MB of txids, past the delta's cap (half the
	// queue), and the tracked tx's output 1 spent by input 0 of another.
	for i := range 40_000 {
		var h bchain.Hash
		h[0], h[1], h[2] = byte(i), byte(i>>8), 0xee
		f.srv.OnMempoolTx(esplora.MempoolTx{Txid: h, Weight: 400})
	}
	f.srv.OnMempoolTx(esplora.MempoolTx{Txid: spender, Weight: 400, Prevouts: []esplora.Outpoint{{Txid: tracked, Vout: 1}}})
	f.srv.OnProjection()
	// The first client reads: the delta and its tracked-txs.
	c := conns[0]
	var delta, info json.RawMessage
	for delta == nil || info == nil {
		_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
		_, b, err := c.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if m["mempool-txids"] == nil {
			continue
		}
		// One message, as mempool.space sends it.
		delta, info = m["mempool-txids"], m["tracked-txs"]
		if info == nil {
			t.Fatalf("the push's message has no tracked-txs: %.200s", b)
		}
		if len(delta) > queue/2 {
			t.Errorf("a delta of %d bytes, past the cap of %d", len(delta), queue/2)
		}
	}
	var infos map[string]struct {
		UtxoSpent map[string]struct {
			Vin  int    `json:"vin"`
			Txid string `json:"txid"`
		} `json:"utxoSpent"`
	}
	if err := json.Unmarshal(info, &infos); err != nil {
		t.Fatal(err)
	}
	if s := infos[tracked.String()].UtxoSpent["1"]; len(infos) != 1 || len(infos[tracked.String()].UtxoSpent) != 1 || s.Vin != 0 || s.Txid != spender.String() {
		t.Fatalf("tracked-txs: %s", info)
	}
	// Every client's private part is queued by now (the hub sends in one
	// pass); give the others' a moment.
	deadline := time.Now().Add(10 * time.Second)
	for charged()-before < int64(clients*len(info)) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	per := (charged() - before) / clients
	t.Logf("delta %d bytes; %d bytes held privately per client", len(delta), per)
	if per > 1<<10 {
		t.Fatalf("%d bytes held privately per client (a delta of %d bytes is shared)", per, len(delta))
	}
}

// churnBlocks is a projection whose block 0 changes on every call of
// next: one tx more, and every third call one less.
type churnBlocks struct {
	api.ProjectedFeeQueries // the rest is not asked for
	mu                      sync.Mutex
	txs                     []api.ProjectedTx
	n                       int
}

func (p *churnBlocks) next() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	var h bchain.Hash
	h[0], h[1], h[2] = byte(p.n), byte(p.n>>8), 0x77
	p.txs = append(append([]api.ProjectedTx{}, p.txs...), api.ProjectedTx{Txid: h, Fee: 1000, VSize: 100, Rate: 10})
	if p.n%3 == 0 {
		p.txs = p.txs[1:]
	}
}

func (p *churnBlocks) ProjectedBlockTxs(_ context.Context, i int) ([]api.ProjectedTx, error) {
	if i != 0 {
		return nil, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.txs, nil
}

func (p *churnBlocks) TxPositions(context.Context, map[bchain.Hash]struct{}) (map[bchain.Hash]api.TxPosition, error) {
	return nil, nil
}

// A client that starts tracking a projected block while it changes gets
// the whole list first and then only deltas that apply to the list it
// holds: the answer to track-mempool-block and the hub's updates are
// ordered. The hook pushes a change between the choice of the answer
// and its send.
func TestWSTrackMempoolBlockOrdered(t *testing.T) {
	f := newFixture(t, esplora.Options{WS: esplora.WSConfig{MessageRate: 1 << 30}})
	pf := &churnBlocks{}
	pf.next()
	esplora.SetProjectedFees(f.srv, pf)
	url := runWS(t, f)
	type update struct {
		BlockTransactions [][]any `json:"blockTransactions"`
		Delta             *struct {
			Added   [][]any  `json:"added"`
			Removed []string `json:"removed"`
		} `json:"delta"`
	}
	read := func(c *websocket.Conn) *update {
		for {
			_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
			var m struct {
				P *update `json:"projected-block-transactions"`
			}
			if err := c.ReadJSON(&m); err != nil {
				t.Fatal(err)
			}
			if m.P != nil {
				return m.P
			}
		}
	}
	dial := func() *websocket.Conn {
		c, _, err := websocket.DefaultDialer.Dial(url, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		_ = c.WriteMessage(websocket.TextMessage, []byte(`{"track-mempool-block":0}`))
		return c
	}
	// One client tracks block 0 and gets a push: the hub holds a list.
	keeper := dial()
	read(keeper)
	pf.next()
	f.srv.OnProjection()
	read(keeper)
	esplora.SetTrackingHook(f.srv, func() {
		pf.next()
		f.srv.OnProjection()
		time.Sleep(300 * time.Millisecond) // the push, unless it waits for the answer
	})
	c := dial()
	first := read(c)
	if first.Delta != nil {
		t.Fatalf("a delta before the list: %+v", first.Delta)
	}
	held := map[string]bool{}
	for _, tx := range first.BlockTransactions {
		held[tx[0].(string)] = true
	}
	next := read(c)
	if next.Delta == nil {
		t.Fatal("the update after the list is not a delta")
	}
	for _, id := range next.Delta.Removed {
		if !held[id] {
			t.Errorf("the delta removes %s, which the client does not hold", id)
		}
	}
	for _, tx := range next.Delta.Added {
		if held[tx[0].(string)] {
			t.Errorf("the delta adds %s, which the client holds", tx[0])
		}
	}
}

// A catch-up of more than two blocks: the mempool's removals of the txs
// any of them mined are no news in mempool-txids (the blocks' pushes say
// mined); a tx that left otherwise is removed.
func TestWSCatchUpMinedNotRemoved(t *testing.T) {
	f := newFixture(t, esplora.Options{WS: esplora.WSConfig{MessageRate: 1 << 30}})
	c := dialPinged(t, runWS(t, f), `{"track-mempool-txids":true}`)
	// Twelve blocks at once, more than the pushes keep (8).
	var mined []bchain.Hash
	for i := range 12 {
		var h bchain.Hash
		h[0], h[1] = byte(i), 0x99
		mined = append(mined, h)
		f.srv.OnBlock(uint32(1_000_000+i), bchain.Hash{byte(i), 0x98}, &bchain.Block{Txs: []bchain.Tx{{Txid: h}}})
	}
	gone := hashOf(strings.Repeat("12", 32))
	for _, h := range append(mined, gone) {
		f.srv.OnMempoolRemoved(h)
	}
	f.srv.OnProjection()
	for {
		_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
		var m struct {
			D *struct {
				Removed []string `json:"removed"`
			} `json:"mempool-txids"`
		}
		if err := c.ReadJSON(&m); err != nil {
			t.Fatal(err)
		}
		if m.D == nil {
			continue
		}
		for _, id := range m.D.Removed {
			for _, h := range mined {
				if id == h.String() {
					t.Fatalf("mined %s listed as removed: %v", id, m.D.Removed)
				}
			}
		}
		if len(m.D.Removed) > 0 {
			if len(m.D.Removed) != 1 || m.D.Removed[0] != gone.String() {
				t.Fatalf("removed %v, want %s", m.D.Removed, gone)
			}
			return
		}
	}
}

// runWS serves f's front with its hub running; it returns the websocket's
// URL.
func runWS(t *testing.T, f *fixture) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); f.srv.RunWS(ctx) }()
	t.Cleanup(func() { cancel(); <-ran })
	ts := httptest.NewServer(f.srv)
	t.Cleanup(ts.Close)
	return "ws" + strings.TrimPrefix(ts.URL, "http") + "/api/v1/ws"
}

// dialPinged dials url, sends msg and waits for the answer to a ping sent
// after it, so that what msg asks for is in place.
func dialPinged(t *testing.T, url, msg string) *websocket.Conn {
	t.Helper()
	c, _, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	for _, m := range []string{msg, `{"action":"ping"}`} {
		if err := c.WriteMessage(websocket.TextMessage, []byte(m)); err != nil {
			t.Fatal(err)
		}
	}
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, pong, err := c.ReadMessage(); err != nil || !strings.Contains(string(pong), "pong") {
		t.Fatalf("ping: %s %v", pong, err)
	}
	return c
}

// A client that follows both mempool streams gets both deltas in one
// message, as mempool.space sends them: together they keep within one
// delta's bound (half the queue), so that a client that reads is never
// dropped for a push too large for its queue. A client that follows one
// stream keeps that stream's whole bound beside it.
func TestWSBothDeltasShareOneBound(t *testing.T) {
	const queue = 256 << 10
	f := newFixture(t, esplora.Options{WS: esplora.WSConfig{MaxQueueBytes: queue, MessageRate: 1 << 30}})
	url := runWS(t, f)
	c := dialPinged(t, url, `{"track-mempool":true,"track-mempool-txids":true}`)
	one := dialPinged(t, url, `{"track-mempool-txids":true}`)
	// The chain's txs (announced as new: the full delta renders them,
	// hundreds of KB), then 20,000 txids the node does not have (only
	// the txids delta lists them, about 1.3 MB).
	for h := 1; h < len(f.Raw); h++ {
		for _, tx := range f.Block(h).Transactions {
			f.srv.OnMempoolTx(esplora.MempoolTx{Txid: hashOf(tx.TxHash().String()), Weight: 400})
		}
	}
	for i := range 20_000 {
		var h bchain.Hash
		h[0], h[1], h[2] = byte(i), byte(i>>8), 0xdd
		f.srv.OnMempoolTx(esplora.MempoolTx{Txid: h, Weight: 400})
	}
	f.srv.OnProjection()
	for {
		_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
		_, b, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("the client was dropped or got nothing: %v", err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		ids, txs := m["mempool-txids"], m["mempool-transactions"]
		if ids == nil {
			continue
		}
		if txs == nil {
			t.Fatalf("the push's message has mempool-txids but no mempool-transactions: %.200s", b)
		}
		t.Logf("deltas: txids %d bytes, txs %d bytes", len(ids), len(txs))
		if len(ids)+len(txs) > queue/2 {
			t.Fatalf("the two deltas take %d bytes, past one delta's bound of %d", len(ids)+len(txs), queue/2)
		}
		break
	}
	for {
		_ = one.SetReadDeadline(time.Now().Add(30 * time.Second))
		_, b, err := one.ReadMessage()
		if err != nil {
			t.Fatalf("the txids-only client was dropped or got nothing: %v", err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		ids := m["mempool-txids"]
		if ids == nil {
			continue
		}
		if m["mempool-transactions"] != nil {
			t.Fatalf("the txids-only client got mempool-transactions")
		}
		// 20,000 txids do not fit: the delta is cut near its whole bound,
		// not at the half a client following both gets.
		if len(ids) <= queue/4 || len(ids) > queue/2 {
			t.Fatalf("the txids-only delta is %d bytes; want between %d and %d (its own whole bound)", len(ids), queue/4, queue/2)
		}
		return
	}
}
