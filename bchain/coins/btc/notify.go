package btc

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/gorilla/websocket"

	"github.com/openexplorer/blockbook/bchain"
)

// Push notifications only wake the sync worker early; it polls anyway, so a
// lost connection costs latency, never correctness. Both notifiers reconnect
// with capped exponential backoff.

const (
	minReconnect = 500 * time.Millisecond
	maxReconnect = 30 * time.Second
)

// zmqHandshakeTimeout bounds connecting to the publisher: the library's
// handshake has no deadline of its own.
const zmqHandshakeTimeout = 10 * time.Second

// ZMQNotifier subscribes to Bitcoin Core's ZMQ "hashblock" topic.
type ZMQNotifier struct {
	Endpoint string // e.g. tcp://127.0.0.1:38330 (message_queue_binding)
	Log      *slog.Logger
}

var _ bchain.BlockNotifier = (*ZMQNotifier)(nil)

// Run subscribes and calls signal for every block announcement.
func (z *ZMQNotifier) Run(ctx context.Context, signal func()) error {
	return runZMQ(ctx, orDefault(z.Log), "zmq", z.Endpoint, "hashblock", "polling covers the gap", func([]byte) { signal() })
}

// runZMQ subscribes to one of Core's topics and calls onBody with the body
// of every message of that topic, reconnecting until ctx ends. Core sends
// [topic, body, 4-byte little-endian sequence]; a gap in the sequence is
// logged (gapNote says what makes up for it).
func runZMQ(ctx context.Context, log *slog.Logger, channel, endpoint, topic, gapNote string, onBody func(body []byte)) error {
	return runWithReconnect(ctx, log, channel, func(ctx context.Context) error {
		// One dial attempt per session; runWithReconnect does the backoff.
		sub := zmq4.NewSub(ctx, zmq4.WithDialerMaxRetries(0), zmq4.WithAutomaticReconnect(false))
		defer sub.Close()
		if err := dialWithTimeout(ctx, sub, endpoint); err != nil {
			return err
		}
		if err := sub.SetOption(zmq4.OptionSubscribe, topic); err != nil {
			return err
		}
		log.Info("subscribed to node notifications", "endpoint", endpoint, "topic", topic)
		var lastSeq uint32
		haveSeq := false
		for {
			msg, err := sub.Recv()
			if err != nil {
				return fmt.Errorf("receive: %w", err)
			}
			if len(msg.Frames) < 2 || string(msg.Frames[0]) != topic {
				continue
			}
			if len(msg.Frames) >= 3 && len(msg.Frames[2]) == 4 {
				f := msg.Frames[2]
				seq := uint32(f[0]) | uint32(f[1])<<8 | uint32(f[2])<<16 | uint32(f[3])<<24
				if haveSeq && seq != lastSeq+1 {
					log.Warn("zmq notifications were lost; "+gapNote, "topic", topic, "expected", lastSeq+1, "got", seq)
				}
				lastSeq, haveSeq = seq, true
			}
			onBody(msg.Frames[1])
		}
	})
}

// dialWithTimeout connects a ZMQ socket, giving up when ctx ends or the
// handshake takes too long (a peer that accepts TCP but never speaks ZMTP).
func dialWithTimeout(ctx context.Context, sock zmq4.Socket, endpoint string) error {
	done := make(chan error, 1)
	go func() { done <- sock.Dial(endpoint) }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("dial %s: %w", endpoint, err)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(zmqHandshakeTimeout):
		return fmt.Errorf("dial %s: no ZMQ handshake within %s", endpoint, zmqHandshakeTimeout)
	}
}

func orDefault(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.Default()
	}
	return l
}

// BtcdNotifier uses btcd's websocket RPC: notifyblocks, then blockconnected
// and blockdisconnected notifications.
type BtcdNotifier struct {
	RPCURL, User, Pass string
	Log                *slog.Logger
}

var _ bchain.BlockNotifier = (*BtcdNotifier)(nil)

// Run connects to btcd's /ws endpoint and signals on block notifications.
func (b *BtcdNotifier) Run(ctx context.Context, signal func()) error {
	const subscribe = `{"jsonrpc":"1.0","id":1,"method":"notifyblocks","params":[]}`
	return runBtcdWS(ctx, orDefault(b.Log), "btcd-ws", b.RPCURL, b.User, b.Pass, subscribe, func(method string, _ json.RawMessage) {
		switch method {
		case "blockconnected", "blockdisconnected", "filteredblockconnected", "filteredblockdisconnected":
			signal()
		}
	})
}

// runBtcdWS keeps a session with btcd's websocket RPC: it sends the
// subscribe request, then calls onNote with the method and params of every
// notification, reconnecting until ctx ends.
func runBtcdWS(ctx context.Context, log *slog.Logger, channel, rpcURL, user, pass, subscribe string, onNote func(method string, params json.RawMessage)) error {
	wsURL, err := btcdWebsocketURL(rpcURL)
	if err != nil {
		return err
	}
	return runWithReconnect(ctx, log, channel, func(ctx context.Context) error {
		hdr := http.Header{}
		hdr.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+pass)))
		dialer := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
		conn, _, err := dialer.DialContext(ctx, wsURL, hdr)
		if err != nil {
			return fmt.Errorf("dial %s: %w", wsURL, err)
		}
		defer conn.Close()
		stop := context.AfterFunc(ctx, func() { conn.Close() })
		defer stop()
		if err := conn.WriteMessage(websocket.TextMessage, []byte(subscribe)); err != nil {
			return err
		}
		log.Info("subscribed to node notifications", "endpoint", wsURL, "channel", channel)
		conn.SetReadLimit(1 << 20)
		for {
			_, data, err := conn.ReadMessage()
			if err != nil {
				return fmt.Errorf("read: %w", err)
			}
			var n struct {
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			if json.Unmarshal(data, &n) != nil || n.Method == "" {
				continue
			}
			onNote(n.Method, n.Params)
		}
	})
}

// btcdWebsocketURL derives ws://host:port/ws from the RPC URL.
func btcdWebsocketURL(rpcURL string) (string, error) {
	u, err := url.Parse(rpcURL)
	if err != nil {
		return "", fmt.Errorf("rpc_url: %w", err)
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		u.Scheme = "wss"
	default:
		u.Scheme = "ws"
	}
	u.Path = "/ws"
	u.User = nil
	return u.String(), nil
}

// runWithReconnect runs session until ctx ends, restarting it after
// failures with capped exponential backoff.
func runWithReconnect(ctx context.Context, log *slog.Logger, name string, session func(context.Context) error) error {
	delay := minReconnect
	for {
		start := time.Now()
		err := session(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if time.Since(start) > maxReconnect {
			delay = minReconnect // it ran fine for a while; reconnect quickly
		}
		log.Warn("node notifications interrupted, reconnecting", "channel", name, "err", err, "retry_in", delay)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(delay):
		}
		delay = min(delay*2, maxReconnect)
	}
}
