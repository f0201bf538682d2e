package eth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/openexplorer/blockbook/bchain"
)

// Push notifications are hints (the sync worker polls too), so the notifier
// favours staying alive: it reconnects with backoff and, while the
// subscription is down or silent, polls eth_blockNumber itself.

const (
	minReconnect = 500 * time.Millisecond
	maxReconnect = 30 * time.Second
	dialTimeout  = 10 * time.Second
)

// errQuiet ends a subscription session that delivered nothing for too long.
var errQuiet = errors.New("subscription silent")

// BlockNotifier follows new heads over a websocket eth_subscribe.
type BlockNotifier struct {
	node  *Node
	WSURL string
	// Quiet is the watchdog: a subscription silent this long is checked
	// by polling and re-established.
	Quiet time.Duration
	// Poll is the eth_blockNumber interval while the subscription is down.
	Poll time.Duration
	Log  *slog.Logger

	last   uint64 // height last seen by polling
	polled bool
}

var _ bchain.BlockNotifier = (*BlockNotifier)(nil)

// NewBlockNotifier sizes the watchdog from the config: block_subscription_
// timeout_ms, else five average block times (averageBlockTimeMs, 12s by
// default); polling uses block_poll_interval_ms, else a quarter block time.
func NewBlockNotifier(node *Node, cfg *bchain.Config) *BlockNotifier {
	avg := 12 * time.Second
	if cfg.AverageBlockTimeMs > 0 {
		avg = time.Duration(cfg.AverageBlockTimeMs) * time.Millisecond
	}
	b := &BlockNotifier{node: node, WSURL: node.wsURL, Quiet: 5 * avg, Poll: min(max(avg/4, 200*time.Millisecond), 5*time.Second), Log: node.log}
	if cfg.BlockSubscriptionTimeoutMs > 0 {
		b.Quiet = time.Duration(cfg.BlockSubscriptionTimeoutMs) * time.Millisecond
	}
	if cfg.BlockPollIntervalMs > 0 {
		b.Poll = time.Duration(cfg.BlockPollIntervalMs) * time.Millisecond
	}
	return b
}

// Run signals on every new head until ctx ends.
func (b *BlockNotifier) Run(ctx context.Context, signal func()) error {
	if b.WSURL == "" {
		return fmt.Errorf("%w: no websocket URL (rpc_url_ws) for block notifications", bchain.ErrConfig)
	}
	log := orDefault(b.Log)
	b.pollOnce(ctx, signal) // establishes the baseline height
	backoff := minReconnect
	for ctx.Err() == nil {
		start := time.Now()
		err := b.session(ctx, signal)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, errQuiet) {
			log.Warn("newHeads subscription silent; polled the node and resubscribing", "after", b.Quiet)
			continue
		}
		if time.Since(start) > maxReconnect {
			backoff = minReconnect // the session worked for a while
		}
		log.Warn("newHeads subscription lost; polling until it is back", "err", err, "retry_in", backoff)
		b.pollFor(ctx, backoff, signal)
		backoff = min(backoff*2, maxReconnect)
	}
	return nil
}

// session subscribes and relays heads until the subscription fails or stays
// silent longer than Quiet.
func (b *BlockNotifier) session(ctx context.Context, signal func()) error {
	ch := make(chan json.RawMessage, 16)
	cl, sub, err := subscribe(ctx, b.WSURL, ch, "newHeads")
	if err != nil {
		return err
	}
	defer cl.Close()
	orDefault(b.Log).Debug("subscribed to newHeads", "url", b.WSURL)
	timer := time.NewTimer(b.Quiet)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-sub.Err():
			if err == nil {
				err = errors.New("subscription closed")
			}
			return err
		case <-ch:
			signal()
			timer.Reset(b.Quiet)
		case <-timer.C:
			b.pollOnce(ctx, signal)
			return errQuiet
		}
	}
}

// pollFor polls eth_blockNumber every Poll for d.
func (b *BlockNotifier) pollFor(ctx context.Context, d time.Duration, signal func()) {
	end := time.Now().Add(d)
	for {
		b.pollOnce(ctx, signal)
		wait := min(b.Poll, time.Until(end))
		if wait <= 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// pollOnce signals when the node's height changed since the last poll.
func (b *BlockNotifier) pollOnce(ctx context.Context, signal func()) {
	var h hexutil.Uint64
	if err := b.node.rpc.call(ctx, &h, "eth_blockNumber"); err != nil {
		return
	}
	if b.polled && uint64(h) != b.last {
		signal()
	}
	b.last, b.polled = uint64(h), true
}

func orDefault(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.Default()
	}
	return l
}

// subscribe dials url and subscribes ch to an eth_subscribe feed. The
// caller closes the client to end it: Unsubscribe would wait for the
// node's answer (up to 10 s), which a hung feed never gives.
func subscribe(ctx context.Context, url string, ch any, feed string) (*rpc.Client, *rpc.ClientSubscription, error) {
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	cl, err := rpc.DialContext(dctx, url)
	if err != nil {
		return nil, nil, err
	}
	sub, err := cl.EthSubscribe(dctx, ch, feed)
	if err != nil {
		cl.Close()
		return nil, nil, err
	}
	return cl, sub, nil
}
