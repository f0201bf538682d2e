package btc

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/go-zeromq/zmq4/security/null"
)

// The ZMQ tests play Bitcoin Core's publisher (-zmqpubhashblock and
// friends): multipart messages [topic, body, 4-byte little-endian sequence],
// where hashblock's body is the 32-byte block hash in display order and the
// sequence counts per topic from 0. Waits are event-driven; every timeout
// below only guards against a hang.

const notifyGuard = 15 * time.Second

// logCapture is a slog.Handler that hands every record to the test, with a
// snapshot of a counter taken when the record was logged.
type logCapture struct {
	snapshot func() int64
	records  chan capturedLog
}

type capturedLog struct {
	level slog.Level
	msg   string
	attrs map[string]string
	// count is the snapshot (e.g. signals delivered so far) at log time.
	count int64
}

func newLogCapture(snapshot func() int64) *logCapture {
	return &logCapture{snapshot: snapshot, records: make(chan capturedLog, 1024)}
}

func (h *logCapture) Enabled(context.Context, slog.Level) bool { return true }
func (h *logCapture) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *logCapture) WithGroup(string) slog.Handler            { return h }

func (h *logCapture) Handle(_ context.Context, r slog.Record) error {
	rec := capturedLog{level: r.Level, msg: r.Message, attrs: map[string]string{}}
	if h.snapshot != nil {
		rec.count = h.snapshot()
	}
	r.Attrs(func(a slog.Attr) bool {
		rec.attrs[a.Key] = a.Value.String()
		return true
	})
	select {
	case h.records <- rec:
	default:
	}
	return nil
}

// waitLog returns the first record (from now on) that match accepts.
func (h *logCapture) waitLog(t *testing.T, what string, match func(capturedLog) bool) capturedLog {
	t.Helper()
	deadline := time.After(notifyGuard)
	for {
		select {
		case rec := <-h.records:
			if match(rec) {
				return rec
			}
		case <-deadline:
			t.Fatalf("timed out waiting for log: %s", what)
			return capturedLog{}
		}
	}
}

func isReconnectLog(r capturedLog) bool {
	return r.level == slog.LevelWarn && r.msg == "node notifications interrupted, reconnecting"
}

// signalCounter counts signals and lets the test wait for a total.
type signalCounter struct {
	n  atomic.Int64
	ch chan struct{}
}

func newSignalCounter() *signalCounter { return &signalCounter{ch: make(chan struct{}, 1024)} }

func (s *signalCounter) signal() {
	s.n.Add(1)
	s.ch <- struct{}{}
}

func (s *signalCounter) count() int64 { return s.n.Load() }

// waitFor waits until at least total signals were delivered.
func (s *signalCounter) waitFor(t *testing.T, total int64) {
	t.Helper()
	deadline := time.After(notifyGuard)
	for s.count() < total {
		select {
		case <-s.ch:
		case <-deadline:
			t.Fatalf("timed out waiting for signal %d (got %d)", total, s.count())
		}
	}
}

// runNotifier runs Run in the background; the returned func cancels it and
// waits for Run to return, failing the test if it does not.
func runNotifier(t *testing.T, run func(ctx context.Context, signal func()) error, sig *signalCounter) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, sig.signal) }()
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

func freeTCPPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// coreFrames builds one of Core's ZMQ notifications.
func coreFrames(topic string, body []byte, seq uint32) zmq4.Msg {
	var s [4]byte
	binary.LittleEndian.PutUint32(s[:], seq)
	return zmq4.NewMsgFrom([]byte(topic), body, s[:])
}

func fxRawTx(t *testing.T) []byte {
	t.Helper()
	raw, err := hex.DecodeString(fxRawTxHex(t))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func hashBody(t *testing.T, display string) []byte {
	t.Helper()
	b, err := hex.DecodeString(display)
	if err != nil || len(b) != 32 {
		t.Fatalf("bad hash %s", display)
	}
	return b // Core publishes hashes in display (RPC) byte order
}

// listenPub starts a PUB socket on ep, retrying briefly while the port is
// still held by a previous socket.
func listenPub(t *testing.T, ep string) zmq4.Socket {
	t.Helper()
	deadline := time.Now().Add(notifyGuard)
	for {
		pub := zmq4.NewPub(context.Background())
		err := pub.Listen(ep)
		if err == nil {
			return pub
		}
		pub.Close()
		if time.Now().After(deadline) {
			t.Fatalf("listen %s: %v", ep, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitSubscribed waits until a subscriber's "hashblock" subscription reached
// the publisher; messages published before that are dropped by design.
func waitSubscribed(t *testing.T, pub zmq4.Socket) {
	t.Helper()
	deadline := time.Now().Add(notifyGuard)
	for !slices.Contains(pub.(zmq4.Topics).Topics(), "hashblock") {
		if time.Now().After(deadline) {
			t.Fatal("the notifier never subscribed to hashblock")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func send(t *testing.T, pub zmq4.Socket, msg zmq4.Msg) {
	t.Helper()
	if err := pub.Send(msg); err != nil {
		t.Fatalf("publish: %v", err)
	}
}

// TestZMQNotifierHashblock publishes Core's notifications with a zmq4 PUB
// socket: one signal per hashblock, none for hashtx/rawtx/rawblock/sequence
// (a PUB socket, like Core's, already filters those by subscription;
// TestZMQNotifierIgnoresOtherTopics checks the notifier's own filter), a
// publisher restart on the same port is survived, and cancellation ends Run.
func TestZMQNotifierHashblock(t *testing.T) {
	t.Parallel()
	ep := fmt.Sprintf("tcp://127.0.0.1:%d", freeTCPPort(t))
	sig := newSignalCounter()
	logs := newLogCapture(sig.count)
	z := &ZMQNotifier{Endpoint: ep, Log: slog.New(logs)}

	pub := listenPub(t, ep)
	defer func() { pub.Close() }()
	stop := runNotifier(t, z.Run, sig)
	waitSubscribed(t, pub)

	block170, rawTx := fxBlock170(t), fxRawTx(t)
	txid := hashBody(t, fxTxid)
	send(t, pub, coreFrames("hashtx", txid, 0))
	send(t, pub, coreFrames("rawtx", rawTx, 0))
	send(t, pub, coreFrames("hashblock", hashBody(t, fxHash169), 0))
	send(t, pub, coreFrames("rawblock", block170, 0))
	send(t, pub, coreFrames("sequence", append(hashBody(t, fxHash170), 'C'), 0))
	send(t, pub, coreFrames("hashblock", hashBody(t, fxHash170), 1))
	send(t, pub, coreFrames("hashtx", txid, 1))
	send(t, pub, coreFrames("hashblock", hashBody(t, fxHash170), 2))
	// The last block jumps the sequence: the notifier warns before it
	// signals, which tells exactly how many signals the messages before it
	// gave.
	send(t, pub, coreFrames("hashblock", hashBody(t, fxHash170), 9))
	gap := logs.waitLog(t, "sequence gap warning", func(r capturedLog) bool {
		return r.level == slog.LevelWarn && r.attrs["got"] == "9"
	})
	if gap.count != 3 || gap.attrs["expected"] != "3" {
		t.Fatalf("before the gap: %d signals (expected seq %s); want 3 signals for 3 hashblocks", gap.count, gap.attrs["expected"])
	}
	sig.waitFor(t, 4)

	// Core restarts: its publisher goes away and comes back on the same port.
	pub.Close()
	drop := logs.waitLog(t, "reconnect after the publisher closed", isReconnectLog)
	if drop.count != 4 || drop.attrs["channel"] != "zmq" {
		t.Fatalf("at the drop: %d signals, channel %q; want 4, zmq", drop.count, drop.attrs["channel"])
	}
	pub = listenPub(t, ep)
	waitSubscribed(t, pub)
	send(t, pub, coreFrames("hashtx", txid, 2))
	send(t, pub, coreFrames("hashblock", hashBody(t, fxHash170), 0)) // a restarted Core counts from 0 again
	sig.waitFor(t, 5)

	if err := stop(); err != nil {
		t.Errorf("Run returned %v after cancellation; want nil", err)
	}
	if n := sig.count(); n != 5 {
		t.Errorf("%d signals for 5 hashblocks", n)
	}
}

// zmtpPeer is a hand-driven ZMTP 3 PUB endpoint: unlike a PUB socket it
// sends every message whatever the subscription, so the notifier's own
// topic check is exercised.
type zmtpPeer struct {
	ln net.Listener
}

func newZMTPPeer(t *testing.T) *zmtpPeer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return &zmtpPeer{ln: ln}
}

func (p *zmtpPeer) endpoint() string { return "tcp://" + p.ln.Addr().String() }

// accept completes the ZMTP handshake with the next subscriber and reads its
// subscription.
func (p *zmtpPeer) accept(t *testing.T) (*zmq4.Conn, string) {
	t.Helper()
	type result struct {
		conn *zmq4.Conn
		sub  string
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		raw, err := p.ln.Accept()
		if err != nil {
			ch <- result{err: err}
			return
		}
		conn, err := zmq4.Open(raw, null.Security(), zmq4.Pub, zmq4.SocketIdentity("core"), true, nil)
		if err != nil {
			raw.Close()
			ch <- result{err: err}
			return
		}
		msg, err := conn.RecvMsg()
		if err != nil || len(msg.Frames) != 1 || len(msg.Frames[0]) == 0 || msg.Frames[0][0] != 1 {
			conn.Close()
			ch <- result{err: fmt.Errorf("expected a subscription, got %q, %v", msg.Frames, err)}
			return
		}
		ch <- result{conn: conn, sub: string(msg.Frames[0][1:])}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.conn, r.sub
	case <-time.After(notifyGuard):
		t.Fatal("the notifier did not connect")
		return nil, ""
	}
}

func TestZMQNotifierIgnoresOtherTopics(t *testing.T) {
	t.Parallel()
	peer := newZMTPPeer(t)
	sig := newSignalCounter()
	logs := newLogCapture(sig.count)
	z := &ZMQNotifier{Endpoint: peer.endpoint(), Log: slog.New(logs)}
	stop := runNotifier(t, z.Run, sig)

	conn, topic := peer.accept(t)
	if topic != "hashblock" {
		t.Errorf("subscribed to %q; want hashblock", topic)
	}
	block170 := fxBlock170(t)
	h170 := hashBody(t, fxHash170)
	for _, msg := range []zmq4.Msg{
		coreFrames("hashtx", hashBody(t, fxTxid), 0),
		coreFrames("rawblock", block170, 0),
		coreFrames("rawtx", fxRawTx(t), 0),
		coreFrames("sequence", append(h170, 'C'), 0),
		zmq4.NewMsgFrom([]byte("hashblock")), // no body: not Core's format
		zmq4.NewMsgFrom([]byte("hashblock\x00"), h170, []byte{0, 0, 0, 0}),
		coreFrames("hashblock", h170, 0),
		coreFrames("hashtx", hashBody(t, fxTxid), 1),
		zmq4.NewMsgFrom([]byte("hashblock"), h170), // no sequence frame: still a block
	} {
		if err := conn.SendMsg(msg); err != nil {
			t.Fatal(err)
		}
	}
	// Dropping the connection after the messages makes the notifier log a
	// reconnect once it has read all of them.
	conn.Close()
	drop := logs.waitLog(t, "reconnect after the drop", isReconnectLog)
	if drop.count != 2 {
		t.Errorf("%d signals; want 2, one per hashblock message", drop.count)
	}

	// It comes back to the same endpoint.
	conn, _ = peer.accept(t)
	defer conn.Close()
	if err := conn.SendMsg(coreFrames("hashblock", h170, 1)); err != nil {
		t.Fatal(err)
	}
	sig.waitFor(t, 3)
	if err := stop(); err != nil {
		t.Errorf("Run = %v", err)
	}
}

// With nothing listening, Run keeps retrying and still stops on cancel.
func TestZMQNotifierCancelWhileUnreachable(t *testing.T) {
	t.Parallel()
	sig := newSignalCounter()
	logs := newLogCapture(sig.count)
	z := &ZMQNotifier{Endpoint: fmt.Sprintf("tcp://127.0.0.1:%d", freeTCPPort(t)), Log: slog.New(logs)}
	stop := runNotifier(t, z.Run, sig)
	logs.waitLog(t, "a failed dial", isReconnectLog)
	if err := stop(); err != nil {
		t.Errorf("Run = %v", err)
	}
	if sig.count() != 0 {
		t.Errorf("signals without a publisher: %d", sig.count())
	}
}

// A peer that accepts the TCP connection but never completes the ZMTP
// greeting (a wrong port, a wedged node) must not keep Run from returning.
func TestZMQNotifierCancelDuringHandshake(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	sig := newSignalCounter()
	z := &ZMQNotifier{Endpoint: "tcp://" + ln.Addr().String(), Log: slog.New(newLogCapture(nil))}
	stop := runNotifier(t, z.Run, sig)
	select {
	case c := <-accepted:
		defer c.Close()
	case <-time.After(notifyGuard):
		t.Fatal("no connection")
	}
	if err := stop(); err != nil {
		t.Errorf("Run = %v", err)
	}
}
