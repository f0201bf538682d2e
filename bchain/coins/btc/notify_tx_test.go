package btc

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/gorilla/websocket"

	"github.com/openexplorer/blockbook/bchain"
)

// txCollector records the txids a TxNotifier signals, in order.
type txCollector struct {
	mu  sync.Mutex
	ids []bchain.Hash
	ch  chan struct{}
}

func newTxCollector() *txCollector { return &txCollector{ch: make(chan struct{}, 1024)} }

func (c *txCollector) signal(h bchain.Hash) {
	c.mu.Lock()
	c.ids = append(c.ids, h)
	c.mu.Unlock()
	c.ch <- struct{}{}
}

func (c *txCollector) count() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return int64(len(c.ids))
}

func (c *txCollector) got() []bchain.Hash {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.ids)
}

// waitFor waits until at least n txids were signalled.
func (c *txCollector) waitFor(t *testing.T, n int64) {
	t.Helper()
	deadline := time.After(notifyGuard)
	for c.count() < n {
		select {
		case <-c.ch:
		case <-deadline:
			t.Fatalf("timed out waiting for txid %d (got %d)", n, c.count())
		}
	}
}

// runTxNotifier runs a TxNotifier in the background; the returned func
// cancels it and waits for Run to return.
func runTxNotifier(t *testing.T, n bchain.TxNotifier, c *txCollector) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx, c.signal) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(notifyGuard):
				t.Fatal("Run did not return after its context was cancelled")
			}
		})
		return err
	}
	t.Cleanup(func() { _ = stop() }) // a safety net: tests that care check stop's error
	return stop
}

func waitTopic(t *testing.T, pub zmq4.Socket, topic string) {
	t.Helper()
	deadline := time.Now().Add(notifyGuard)
	for !slices.Contains(pub.(zmq4.Topics).Topics(), topic) {
		if time.Now().After(deadline) {
			t.Fatalf("the notifier never subscribed to %s", topic)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestZMQTxNotifierHashtx publishes Core's hashtx notifications: every
// txid arrives in display order, other topics and malformed bodies are
// ignored, a sequence gap is logged, and a publisher restart is survived.
func TestZMQTxNotifierHashtx(t *testing.T) {
	t.Parallel()
	ep := fmt.Sprintf("tcp://127.0.0.1:%d", freeTCPPort(t))
	c := newTxCollector()
	logs := newLogCapture(c.count)
	z := &ZMQTxNotifier{Endpoint: ep, Log: slog.New(logs)}
	pub := listenPub(t, ep)
	defer func() { pub.Close() }()
	stop := runTxNotifier(t, z, c)
	waitTopic(t, pub, "hashtx")

	tx1, tx2 := mustHash(t, fxTxid), mustHash(t, fxCoinbase)
	send(t, pub, coreFrames("hashtx", hashBody(t, fxTxid), 0))
	send(t, pub, coreFrames("rawtx", fxRawTx(t), 0))
	send(t, pub, coreFrames("hashtx", hashBody(t, fxTxid)[:31], 1)) // not a txid
	send(t, pub, coreFrames("hashtx", hashBody(t, fxCoinbase), 2))
	send(t, pub, coreFrames("hashtx", hashBody(t, fxTxid), 7))
	gap := logs.waitLog(t, "sequence gap warning", func(r capturedLog) bool {
		return r.level == slog.LevelWarn && r.attrs["got"] == "7"
	})
	if gap.count != 2 || gap.attrs["expected"] != "3" || gap.attrs["topic"] != "hashtx" {
		t.Fatalf("gap log %+v after %d txids", gap.attrs, gap.count)
	}
	c.waitFor(t, 3)

	pub.Close()
	drop := logs.waitLog(t, "reconnect after the publisher closed", isReconnectLog)
	if drop.attrs["channel"] != "zmq-tx" {
		t.Errorf("reconnect log channel %q", drop.attrs["channel"])
	}
	pub = listenPub(t, ep)
	waitTopic(t, pub, "hashtx")
	send(t, pub, coreFrames("hashtx", hashBody(t, fxCoinbase), 0))
	c.waitFor(t, 4)
	if err := stop(); err != nil {
		t.Errorf("Run = %v", err)
	}
	if got, want := c.got(), []bchain.Hash{tx1, tx2, tx1, tx2}; !slices.Equal(got, want) {
		t.Errorf("txids %v, want %v", got, want)
	}
}

// The notifier's own topic check, with a peer that sends everything.
func TestZMQTxNotifierIgnoresOtherTopics(t *testing.T) {
	t.Parallel()
	peer := newZMTPPeer(t)
	c := newTxCollector()
	logs := newLogCapture(c.count)
	stop := runTxNotifier(t, &ZMQTxNotifier{Endpoint: peer.endpoint(), Log: slog.New(logs)}, c)
	conn, topic := peer.accept(t)
	defer conn.Close()
	if topic != "hashtx" {
		t.Errorf("subscribed to %q; want hashtx", topic)
	}
	for _, msg := range []zmq4.Msg{
		coreFrames("hashblock", hashBody(t, fxHash170), 0),
		coreFrames("rawtx", fxRawTx(t), 0),
		zmq4.NewMsgFrom([]byte("hashtx")),
		coreFrames("hashtxx", hashBody(t, fxTxid), 0),
		zmq4.NewMsgFrom([]byte("hashtx"), hashBody(t, fxTxid)), // no sequence frame: still a tx
	} {
		if err := conn.SendMsg(msg); err != nil {
			t.Fatal(err)
		}
	}
	c.waitFor(t, 1)
	conn.Close()
	logs.waitLog(t, "reconnect after the drop", isReconnectLog)
	if err := stop(); err != nil {
		t.Errorf("Run = %v", err)
	}
	if got := c.got(); len(got) != 1 || got[0] != mustHash(t, fxTxid) {
		t.Errorf("txids %v; want only %s", got, fxTxid)
	}
}

// TestBtcdTxNotifier: the notifier subscribes with notifynewtransactions
// [false] and signals the txid of every txaccepted notification, ignoring
// everything else, across a reconnect.
func TestBtcdTxNotifier(t *testing.T) {
	t.Parallel()
	srv := newBtcdWSServer(t, fxPass, nil)
	srv.subscribe = "notifynewtransactions"
	c := newTxCollector()
	logs := newLogCapture(c.count)
	stop := runTxNotifier(t, &BtcdTxNotifier{RPCURL: srv.srv.URL, User: fxUser, Pass: fxPass, Log: slog.New(logs)}, c)

	conn := srv.next(t)
	for _, msg := range [][]byte{
		btcdNotification("txaccepted", fxTxid, 10.0),
		btcdNotification("blockconnected", fxHash170, 170, 1231731025),
		btcdNotification("txacceptedverbose", map[string]any{"txid": fxCoinbase}),
		btcdNotification("txaccepted", "not-a-txid", 1.0),
		btcdNotification("txaccepted"),
		btcdNotification("txaccepted", 12, 1.0),
		[]byte(`{"result":null,"error":null,"id":1}`),
		btcdNotification("txaccepted", fxCoinbase, 50.0),
	} {
		wsSend(t, conn, websocket.TextMessage, msg)
	}
	c.waitFor(t, 2)
	conn.Close()
	drop := logs.waitLog(t, "reconnect after the drop", isReconnectLog)
	if drop.count != 2 || drop.attrs["channel"] != "btcd-ws-tx" {
		t.Errorf("at the drop: %d txids, channel %q", drop.count, drop.attrs["channel"])
	}
	conn = srv.next(t)
	wsSend(t, conn, websocket.TextMessage, btcdNotification("txaccepted", fxTxid, 10.0))
	c.waitFor(t, 3)
	if err := stop(); err != nil {
		t.Errorf("Run = %v", err)
	}
	want := []bchain.Hash{mustHash(t, fxTxid), mustHash(t, fxCoinbase), mustHash(t, fxTxid)}
	if got := c.got(); !slices.Equal(got, want) {
		t.Errorf("txids %v, want %v", got, want)
	}
}

// TestTxNotifierSelection: the tx channel follows block_notifications and
// message_queue_binding like the block channel does.
func TestTxNotifierSelection(t *testing.T) {
	const base = `"coin_name":"Regtest","rpc_url":"http://127.0.0.1:18443","rpc_user":"u","rpc_pass":"p"`
	for _, tc := range []struct {
		extra string
		want  string
	}{
		{`"message_queue_binding":"tcp://127.0.0.1:28332"`, "zmq"},
		{`"block_notifications":"zmq","message_queue_binding":"tcp://127.0.0.1:28332"`, "zmq"},
		{`"block_notifications":"btcd","message_queue_binding":"tcp://127.0.0.1:28332"`, "btcd"},
		{`"block_notifications":"btcd"`, "btcd"},
		{``, "auto"},
		{`"block_notifications":"none","message_queue_binding":"tcp://127.0.0.1:28332"`, "none"},
	} {
		doc := "{" + base + "}"
		if tc.extra != "" {
			doc = "{" + base + "," + tc.extra + "}"
		}
		cfg, err := bchain.ParseConfig([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		b, err := bchain.NewBackend(cfg, bchain.Env{Log: discardLog()})
		if err != nil {
			t.Fatalf("%s: %v", tc.extra, err)
		}
		if _, ok := b.Mempool.(*Node); !ok {
			t.Errorf("%s: Backend.Mempool is %T", tc.extra, b.Mempool)
		}
		got := "none"
		switch n := b.TxNotifier.(type) {
		case *ZMQTxNotifier:
			got = "zmq"
			if n.Endpoint != "tcp://127.0.0.1:28332" || n.Log == nil {
				t.Errorf("%s: %+v", tc.extra, n)
			}
		case *BtcdTxNotifier:
			got = "btcd"
			if n.RPCURL != "http://127.0.0.1:18443" || n.User != "u" || n.Pass != "p" || n.Log == nil {
				t.Errorf("%s: %+v", tc.extra, n)
			}
		case *autoTxNotifier:
			got = "auto"
		case nil:
		default:
			got = fmt.Sprintf("%T", n)
		}
		if got != tc.want {
			t.Errorf("%s: tx notifier %s, want %s", tc.extra, got, tc.want)
		}
	}
}

// TestAutoTxNotifier: without message_queue_binding, btcd's websocket is
// used once the node says it is btcd.
func TestAutoTxNotifier(t *testing.T) {
	t.Parallel()
	fs := newFixtureServer(t)
	btcdWorld(t, fs)
	srv := newBtcdWSServer(t, fxPass, http.HandlerFunc(fs.serveHTTP))
	srv.subscribe = "notifynewtransactions"
	cfg, err := bchain.ParseConfig([]byte(`{"coin_name":"Bitcoin","rpc_url":"` + srv.srv.URL + `","rpc_user":"` + fxUser + `","rpc_pass":"` + fxPass + `"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := bchain.NewBackend(cfg, bchain.Env{Log: discardLog()})
	if err != nil {
		t.Fatal(err)
	}
	c := newTxCollector()
	stop := runTxNotifier(t, b.TxNotifier, c)
	wsSend(t, srv.next(t), websocket.TextMessage, btcdNotification("txaccepted", fxTxid, 1.5))
	c.waitFor(t, 1)
	if err := stop(); err != nil {
		t.Errorf("Run = %v", err)
	}
}
